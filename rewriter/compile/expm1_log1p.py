"""f64 ``expm1`` and ``log1p`` near zero, which IREE 3.13 computes as ``exp(x) - 1`` and
``log(1 + x)``.

IREE's math transform has polynomials for f32 ``expm1`` and ``log1p`` only; for f64 it
expands ``math.expm1`` into ``exp(x) - 1`` and ``math.log1p`` into ``log(1 + x)``, so both
runners (the same ``iree-opt`` lowers them) lose every digit that the subtraction or the
addition cancels: ``expm1(1e-8)`` is 6e-9 relative off, ``expm1(1e-20)`` and
``log1p(1e-20)`` are 0. Each f64 ``stablehlo.exponential_minus_one`` and
``stablehlo.log_plus_one`` is written here without branches (both sides computed, one
selected), so that it vectorizes:

- ``expm1(x)``: its Taylor polynomial of degree 15, ``x + x^2 (1/2! + x (1/3! + ...))``,
  for ``|x| <= 1/2`` (the rest is below 2^-60 of the result; no division; within 0.9 ulp),
  and ``exp(x) - 1`` above, where the subtraction costs at most one bit (``exp(x) >= 1.6``
  or ``<= 0.61``): within ``2 e + 1/2`` ulp for an ``exp`` within ``e``. ``exp`` gives
  the infinities, NaN, overflow and ``-1`` far below;
- ``log1p(x)``: Cephes's (S. L. Moshier, ``unity.c``), ``x - x^2/2 + x^3 P(x) / Q(x)``
  where ``1 + x`` is within ``[1/sqrt 2, sqrt 2]``, and ``log(1 + x)`` outside, where the
  rounding of ``1 + x`` costs at most 2 ulp of the result; ``log`` gives ``-inf`` at
  ``-1``, NaN below and ``+inf``;
- both are ``x`` itself below ``2^-54`` in magnitude, where ``x^2 / 2`` is under half an
  ulp of ``x``: that keeps ``-0.0``, and the subnormals IREE's arithmetic flushes.

Static and dynamic shapes alike (the constants are ``mlir_walk.Splats``); f32, which
IREE's polynomials compute within 2.5 ulp, is left to them.
"""

from __future__ import annotations

import math
from typing import Any

from .mlir_walk import Splats, operations_where, ranked_result_of

EXPM1 = "stablehlo.exponential_minus_one"
LOG1P = "stablehlo.log_plus_one"

# Below TINY both are x to the last bit (their second terms are x^2 / 2).
TINY = 2.0**-54
# expm1 for |x| <= 1/2: x + x^2 (1/2! + x (1/3! + ... + x / 15!))
EXPM1_LIMIT = 0.5
EXPM1_TAYLOR = tuple(1 / math.factorial(n) for n in range(15, 1, -1))
# Cephes's log1p for 1/sqrt(2) <= 1 + x <= sqrt(2): x - x^2/2 + x^3 P(x) / Q(x), Q monic
SQRT_HALF = 0.70710678118654752440
SQRT_TWO = 1.41421356237309504880
LOG1P_P = (
    4.5270000862445199635215e-5,
    4.9854102823193375972212e-1,
    6.5787325942061044846969e0,
    2.9911919328553073277375e1,
    6.0949667980987787057556e1,
    5.7112963590585538103336e1,
    2.0039553499201281259648e1,
)
LOG1P_Q = (
    1.0,
    1.5062909083469192043167e1,
    8.3047565967967209469434e1,
    2.2176239823732856465394e2,
    3.0909872225312059774938e2,
    2.1642788614495947685003e2,
    6.0118660497603843919306e1,
)


def accurate_expm1_log1p(module: Any) -> int:
    """Rewrite every f64 ``expm1`` and ``log1p`` of the ``iree.compiler.ir`` module as the
    module's doc says; return how many."""
    from iree.compiler import ir

    def f64_op(operation: Any) -> bool:
        return operation.name in (EXPM1, LOG1P) and ranked_result_of(operation, ir.F64Type)

    found = operations_where(module, f64_op)
    for operation in found:
        with ir.InsertionPoint(operation), operation.location:
            x = operation.operands[0]
            build = _Builder(ir, x)
            result = build.expm1(x) if operation.name == EXPM1 else build.log1p(x)
        operation.results[0].replace_all_uses_with(result)
        operation.erase()
    return len(found)


class _Builder:
    """StableHLO ops on tensors of the type and shape of ``x``, at the current insertion
    point."""

    def __init__(self, ir: Any, x: Any) -> None:
        self.ir = ir
        self.kind = x.type
        self.splats = Splats(ir, x)

    def op(self, name: str, *operands: Any, result: Any = None, **attributes: Any) -> Any:
        return self.ir.Operation.create(
            name, results=[result or self.kind], operands=list(operands), attributes=attributes
        ).result

    def number(self, value: float) -> Any:
        return self.splats(value, self.kind)

    def polynomial(self, coefficients: tuple[float, ...], at: Any) -> Any:
        """``coefficients[0] at^n + ... + coefficients[n]`` by Horner's rule."""
        value = self.number(coefficients[0])
        for coefficient in coefficients[1:]:
            value = self.op(
                "stablehlo.add",
                self.op("stablehlo.multiply", value, at),
                self.number(coefficient),
            )
        return value

    def compare(self, direction: str, left: Any, right: Any) -> Any:
        ir = self.ir
        return self.op(
            "stablehlo.compare",
            left,
            right,
            result=ir.RankedTensorType.get(self.kind.shape, ir.IntegerType.get_signless(1)),
            comparison_direction=ir.Attribute.parse(
                f"#stablehlo<comparison_direction {direction}>"
            ),
        )

    def tiny_kept(self, x: Any, value: Any) -> Any:
        """``x`` where ``|x| < TINY``, ``value`` elsewhere."""
        magnitude = self.op("stablehlo.abs", x)
        tiny = self.compare("LT", magnitude, self.number(TINY))
        return self.op("stablehlo.select", tiny, x, value)

    def expm1(self, x: Any) -> Any:
        higher = self.op("stablehlo.multiply", x, self.polynomial(EXPM1_TAYLOR, x))
        near = self.op("stablehlo.add", x, self.op("stablehlo.multiply", x, higher))
        far = self.op("stablehlo.subtract", self.op("stablehlo.exponential", x), self.number(1.0))
        magnitude = self.op("stablehlo.abs", x)
        inside = self.compare("LE", magnitude, self.number(EXPM1_LIMIT))
        return self.tiny_kept(x, self.op("stablehlo.select", inside, near, far))

    def log1p(self, x: Any) -> Any:
        z = self.op("stablehlo.add", x, self.number(1.0))
        square = self.op("stablehlo.multiply", x, x)
        ratio = self.op(
            "stablehlo.divide", self.polynomial(LOG1P_P, x), self.polynomial(LOG1P_Q, x)
        )
        cubic = self.op("stablehlo.multiply", x, self.op("stablehlo.multiply", square, ratio))
        half_square = self.op("stablehlo.multiply", square, self.number(-0.5))
        near = self.op("stablehlo.add", x, self.op("stablehlo.add", half_square, cubic))
        far = self.op("stablehlo.log", z)
        above = self.compare("GE", z, self.number(SQRT_HALF))
        below = self.compare("LE", z, self.number(SQRT_TWO))
        inside = self.op("stablehlo.and", above, below, result=above.type)
        return self.tiny_kept(x, self.op("stablehlo.select", inside, near, far))
