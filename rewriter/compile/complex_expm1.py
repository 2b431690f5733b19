"""``expm1`` of complex numbers near 0, as XLA computes it.

IREE 3.13 lowers ``stablehlo.exponential_minus_one`` of complex elements as ``exp(z) - 1``
on both paths: the real part ``e^a cos(b) - 1`` cancels for a small ``z``, and
``expm1(1e-4 + 1e-4j)`` in complex64 was 5,000 ulp off. XLA's CPU compiler computes

    expm1(a + bi) = (expm1(a) cos(b) + cosm1(b)) + (e^a sin(b)) i,  cosm1(b) = -2 sin(b/2)^2

with ``e^a = expm1(a) + 1``, and an imaginary part of 0 where ``b`` is 0 (``inf + 0j`` gives
``inf + 0j``, not NaN). ``complex_expm1`` writes every ``stablehlo.exponential_minus_one``
of complex elements, static or dynamic shape, as those ops on the parts; their real
``expm1``, ``sin`` and ``cos`` then take the fixes the real ones take (``expm1_log1p``,
``f32_in_f64``), which run after it.
"""

from __future__ import annotations

from typing import Any

from .mlir_walk import Splats, of_complex_elements, op_result, replace_each

EXPM1 = "stablehlo.exponential_minus_one"


def complex_expm1(module: Any) -> int:
    """Rewrite every complex ``expm1`` of the ``iree.compiler.ir`` module as the module's
    doc says; return how many."""
    return replace_each(
        module,
        EXPM1,
        of_complex_elements,
        lambda ir, operation, kind: _expm1(ir, operation.operands[0], kind),
    )


def _expm1(ir: Any, z: Any, kind: Any) -> Any:
    element = ir.ComplexType(kind.element_type).element_type
    real = ir.RankedTensorType.get(kind.shape, element)
    splats = Splats(ir, z)

    def op(name: str, *operands: Any, result: Any = real, **attributes: Any) -> Any:
        return op_result(ir, name, result, *operands, **attributes)

    a, b = op("stablehlo.real", z), op("stablehlo.imag", z)
    expm1_a = op("stablehlo.exponential_minus_one", a)
    half_sine = op("stablehlo.sine", op("stablehlo.multiply", b, splats(0.5, real)))
    cosm1_b = op(
        "stablehlo.multiply", splats(-2.0, real), op("stablehlo.multiply", half_sine, half_sine)
    )
    cos_b = op("stablehlo.add", cosm1_b, splats(1.0, real))
    real_part = op("stablehlo.add", op("stablehlo.multiply", expm1_a, cos_b), cosm1_b)
    exp_a = op("stablehlo.add", expm1_a, splats(1.0, real))
    zero = splats(0.0, real)
    b_is_zero = op(
        "stablehlo.compare",
        b,
        zero,
        result=ir.RankedTensorType.get(kind.shape, ir.IntegerType.get_signless(1)),
        comparison_direction=ir.Attribute.parse("#stablehlo<comparison_direction EQ>"),
    )
    imaginary_part = op(
        "stablehlo.select",
        b_is_zero,
        zero,
        op("stablehlo.multiply", exp_a, op("stablehlo.sine", b)),
    )
    return op("stablehlo.complex", real_part, imaginary_part, result=kind)
