"""The absolute value of a complex number without overflow, as XLA computes it.

IREE 3.13's StableHLO input pipeline takes ``|a + bi|`` of a ``stablehlo.abs`` on complex
elements as ``sqrt(a^2 + b^2)``: both squares overflow once a part is above the square root
of the largest float, so ``abs(3e30 + 4e30j)`` in complex64 is ``inf`` on both paths where
``jax.jit`` gives ``5e30`` (and ``abs`` of ``1e300 + 1j`` in complex128 too). XLA's CPU
compiler (``ElementalIrEmitter::EmitComplexAbs``) scales by the larger part:

    max = maximum(|a|, |b|), min = minimum(|a|, |b|)
    r = max * sqrt(1 + (min / max)^2)
    |a + bi| = min where r is NaN, else r

which overflows only when the result does. Where ``r`` is NaN, ``min`` is the answer:
``(0, 0)`` gives 0, ``(inf, inf)`` gives inf, and a NaN part gives NaN (StableHLO's
``maximum`` and ``minimum`` propagate NaN, as XLA's do). ``complex_abs`` writes every
``stablehlo.abs`` of complex elements, static or dynamic shape, as those ops.
"""

from __future__ import annotations

from typing import Any

from .mlir_walk import Splats, of_complex_elements, op_result, replace_each

ABS = "stablehlo.abs"


def complex_abs(module: Any) -> int:
    """Rewrite every ``stablehlo.abs`` of complex elements in the ``iree.compiler.ir``
    module as the module's doc says; return how many."""
    return replace_each(
        module,
        ABS,
        of_complex_elements,
        lambda ir, operation, _: _scaled_abs(ir, operation.operands[0], operation.results[0].type),
    )


def _scaled_abs(ir: Any, z: Any, kind: Any) -> Any:
    """``|z|`` (``kind``: the real tensor type of the result) by XLA's formula."""

    def op(name: str, *operands: Any, result: Any = kind, **attributes: Any) -> Any:
        return op_result(ir, name, result, *operands, **attributes)

    real, imaginary = op("stablehlo.real", z), op("stablehlo.imag", z)
    a, b = op("stablehlo.abs", real), op("stablehlo.abs", imaginary)
    larger, smaller = op("stablehlo.maximum", a, b), op("stablehlo.minimum", a, b)
    ratio = op("stablehlo.divide", smaller, larger)
    one = Splats(ir, z)(1.0, kind)
    root = op("stablehlo.sqrt", op("stablehlo.add", one, op("stablehlo.multiply", ratio, ratio)))
    scaled = op("stablehlo.multiply", larger, root)
    unordered = op(
        "stablehlo.compare",
        scaled,
        scaled,
        result=ir.RankedTensorType.get(kind.shape, ir.IntegerType.get_signless(1)),
        comparison_direction=ir.Attribute.parse("#stablehlo<comparison_direction NE>"),
    )
    return op("stablehlo.select", unordered, smaller, scaled)
