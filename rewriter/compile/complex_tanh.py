"""``tanh`` and ``tan`` of complex numbers, as XLA computes them.

IREE 3.13 lowers ``stablehlo.tanh`` and ``stablehlo.tan`` of complex elements with
formulas that cancel near 0 and lose a part: on both paths ``tan(1e-30j)`` was ``-0j``
(``jax.jit``: ``1e-30j``), and the parts of ``tan`` and ``tanh`` of numbers around 1e-9
were off by millions of ulp in complex64 (by 1.3e9 ulp on IREE). XLA's CPU compiler
(``ElementalIrEmitter::EmitComplexUnaryOp``, ``kTanh``; ``tan(a + bi) = -i tanh(-b + ai)``)
computes

    tanh(a + bi) = (expm1(2a) - expm1(-2a) + 4 cos(b) sin(b) i)
                   / (expm1(2a) + expm1(-2a) + 4 cos(b)^2)

with ``copysign(1, a)`` for the real part where ``expm1(2a) + expm1(-2a)`` is infinite, a
NaN real part where ``sin(2b)`` is NaN and ``a`` is finite, and a ``+0`` imaginary part
where ``b`` is 0 or ``a`` is infinite and ``sin(2b)`` NaN (C99's corner cases).
``complex_tanh`` writes every such ``stablehlo.tanh`` and ``stablehlo.tan``, static or
dynamic shape, as those ops on the parts, in XLA's order; their real ``expm1``, ``sin``
and ``cos`` then take the fixes the real ones take (``expm1_log1p``, ``f32_in_f64``),
which run after it.
"""

from __future__ import annotations

from typing import Any

from .mlir_walk import of_complex_elements, replace_each
from .part_ops import PartOps

TANH = "stablehlo.tanh"
TAN = "stablehlo.tan"


def complex_tanh(module: Any) -> int:
    """Rewrite every complex ``tanh`` and ``tan`` of the ``iree.compiler.ir`` module as the
    module's doc says; return how many."""
    return _replace(module, TANH, tan=False) + _replace(module, TAN, tan=True)


def _replace(module: Any, name: str, *, tan: bool) -> int:
    def build(ir: Any, operation: Any, kind: Any) -> Any:
        z = operation.operands[0]
        return _tanh(PartOps(ir, kind, z), z, tan)

    return replace_each(module, name, of_complex_elements, build)


def _tanh(ops: PartOps, z: Any, tan: bool) -> Any:
    """``tanh(z)``, or ``tan(z)`` as ``-i tanh(-b + ai)`` when ``tan``."""
    real_part, imaginary_part = ops.parts(z)
    minus_one = ops.number(-1.0)
    if tan:
        a, b = ops.multiply(minus_one, imaginary_part), real_part
    else:
        a, b = real_part, imaginary_part
    two_a = ops.add(a, a)
    expm1_2a = ops.op("stablehlo.exponential_minus_one", two_a)
    expm1_minus_2a = ops.op("stablehlo.exponential_minus_one", ops.multiply(minus_one, two_a))
    real_numerator = ops.subtract(expm1_2a, expm1_minus_2a)
    four = ops.number(4.0)
    cos_b, sin_b = ops.op("stablehlo.cosine", b), ops.op("stablehlo.sine", b)
    four_cos_b_squared = ops.multiply(ops.multiply(cos_b, cos_b), four)
    imaginary_numerator = ops.multiply(four, ops.multiply(cos_b, sin_b))
    exp_sum_minus_2 = ops.add(expm1_2a, expm1_minus_2a)
    denominator = ops.add(exp_sum_minus_2, four_cos_b_squared)
    infinity, zero = ops.number(float("inf")), ops.number(0.0)
    # the limit where both numerator and denominator overflow: copysign(1, a)
    real = ops.select(
        ops.compare("EQ", exp_sum_minus_2, infinity),
        ops.signed(1.0, a),
        ops.quotient(real_numerator, denominator),
    )
    imaginary = ops.quotient(imaginary_numerator, denominator)
    a_infinite = ops.compare("EQ", ops.op("stablehlo.abs", a), infinity)
    sin_2b_nan = ops.is_nan(imaginary_numerator)
    a_finite = ops.op("stablehlo.not", a_infinite, result=ops.boolean)
    real = ops.select(
        ops.both("stablehlo.and", sin_2b_nan, a_finite), ops.number(float("nan")), real
    )
    imaginary_zero = ops.both(
        "stablehlo.or",
        ops.compare("EQ", b, zero),
        ops.both("stablehlo.and", a_infinite, sin_2b_nan),
    )
    imaginary = ops.select(imaginary_zero, zero, imaginary)
    if tan:
        return ops.complex(imaginary, ops.multiply(minus_one, real))
    return ops.complex(real, imaginary)
