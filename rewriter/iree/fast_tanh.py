"""f64 ``tanh`` of the IREE path from ``exp`` and a rational function, which IREE vectorizes.

IREE 3.13 has no vector code for f64 ``tanh``: each element is a call of libm's ``tanh``,
20 ns on this machine, and the GELU of jax's transformer blocks (``tanh`` form) made the f64
block of benchmarks/shape_sweep.py half again as slow as ``jax.jit``; f64 ``exp`` is
vectorized (``fast_exp.py``, which runs after this). ``fast_f64_tanh`` writes each f64
``stablehlo.tanh`` (of any shape: the constants are ``mlir_walk.Splats``) as Cephes's
``tanh`` does it: ``sign(x) (1 - 2 / (exp(2 |x|) + 1))`` from ``|x| = 0.625`` up (and for
NaN; ``exp`` overflowing gives +-1), ``x + x^3 P(x^2) / Q(x^2)`` below, and ``x`` itself
below 2^-27, where ``tanh(x)`` rounds to ``x`` (which keeps -0 and the subnormals that
IREE's arithmetic flushes). Within 2 units in the last place of glibc's ``tanh`` over
normal values from 1e-300 to 1e300 (XLA's is within 6).
"""

from __future__ import annotations

from typing import Any

from ..compile.mlir_walk import Splats, op_result, operations_named, ranked_result_of


def fast_f64_tanh(module: Any) -> int:
    """Rewrite every f64 ``stablehlo.tanh`` of the ``iree.compiler.ir`` module as the
    module's doc says; return how many."""
    from iree.compiler import ir

    found = [
        op for op in operations_named(module, "stablehlo.tanh") if ranked_result_of(op, ir.F64Type)
    ]
    for operation in found:
        with ir.InsertionPoint(operation), operation.location:
            result = _tanh_by_exp(ir, operation.operands[0])
        operation.results[0].replace_all_uses_with(result)
        operation.erase()
    return len(found)


# Cephes's tanh (Stephen L. Moshier): below SMALL a rational function, above it exp.
SMALL = 0.625
TINY = 2.0**-27
P = (-9.64399179425052238628e-1, -9.92877231001918586564e1, -1.61468768441708447952e3)
Q = (1.12811678491632931402e2, 2.23548839060100448583e3, 4.84406305325125486048e3)


def _tanh_by_exp(ir: Any, x: Any) -> Any:
    kind = x.type

    def op(name: str, *operands: Any) -> Any:
        return op_result(ir, name, kind, *operands)

    splats = Splats(ir, x)

    def number(value: float) -> Any:
        return splats(value, kind)

    magnitude = op("stablehlo.abs", x)
    # |x| < 0.625: x + x^3 P(x^2) / Q(x^2)
    square = op("stablehlo.multiply", x, x)
    numerator = number(P[0])
    for coefficient in P[1:]:
        numerator = op(
            "stablehlo.add", op("stablehlo.multiply", numerator, square), number(coefficient)
        )
    denominator = op("stablehlo.add", square, number(Q[0]))
    for coefficient in Q[1:]:
        denominator = op(
            "stablehlo.add", op("stablehlo.multiply", denominator, square), number(coefficient)
        )
    cube = op("stablehlo.multiply", x, square)
    small = op(
        "stablehlo.add",
        x,
        op("stablehlo.multiply", cube, op("stablehlo.divide", numerator, denominator)),
    )
    # |x| >= 0.625 (and NaN): sign(x) (1 - 2 / (exp(2 |x|) + 1))
    grown = op("stablehlo.exponential", op("stablehlo.add", magnitude, magnitude))
    fraction = op("stablehlo.divide", number(2.0), op("stablehlo.add", grown, number(1.0)))
    large = op(
        "stablehlo.multiply",
        op("stablehlo.subtract", number(1.0), fraction),
        op("stablehlo.sign", x),
    )
    # Below TINY, tanh(x) is x to the last bit (x^3 / 3 is under half an ulp of x): x itself
    # keeps the sign of zeros, and the subnormals that IREE's arithmetic flushes to zero.
    kept = op("stablehlo.select", _below(ir, magnitude, number(TINY)), x, small)
    return op("stablehlo.select", _below(ir, magnitude, number(SMALL)), kept, large)


def _below(ir: Any, value: Any, bound: Any) -> Any:
    """``value < bound``, element by element."""
    return op_result(
        ir,
        "stablehlo.compare",
        ir.RankedTensorType.get(value.type.shape, ir.IntegerType.get_signless(1)),
        value,
        bound,
        comparison_direction=ir.Attribute.parse("#stablehlo<comparison_direction LT>"),
    )
