"""The quotient of complex numbers without overflow or underflow, as XLA computes it.

IREE 3.13's StableHLO input pipeline divides ``(a + bi) / (c + di)`` as
``((ac + bd) + (bc - ad) i) / (c^2 + d^2)``: the squares of the divisor overflow once a
part is above the square root of the largest float and underflow below the square root of
the smallest, so ``1 / (3e30 + 4e30j)`` in complex64 is 0 on both paths and
``1 / (3e-30 + 4e-30j)`` is ``-inf - inf j``, where ``jax.jit`` gives ``1.2e-31 - 1.6e-31j``
and ``1.2e29 - 1.6e29j``. XLA's CPU compiler (``ElementalIrEmitter::EmitComplexDivide``)
uses Smith's algorithm, which divides by the larger part of the divisor first:

    |c| < |d|:   r = c / d, t = d + r c,  quotient ((r a + b) / t, (r b - a) / t)
    otherwise:   r = d / c, t = c + r d,  quotient ((r b + a) / t, (b - r a) / t)

and, where both parts of that come out NaN, C99's answers for the corner cases (Annex G):
a zero divisor and a numerator not all NaN give ``copysign(inf, c)`` times the numerator's
parts; an infinite numerator part over a finite divisor gives ``inf`` times the quotient of
the numerator's infinities (each part as ``copysign(1, part)`` when infinite, else
``copysign(0, part)``) by the divisor, taken as ``(a c + b d, b c - a d)``; a finite
numerator over a divisor with an infinite part gives ``0`` times the numerator's product
with the divisor's infinities, taken alike. ``complex_divide`` writes every
``stablehlo.divide`` of complex elements, static or dynamic shape, as those ops, in XLA's
order (a sign is read from the bits: ``bitcast_convert`` to an integer, compared with 0).
"""

from __future__ import annotations

from typing import Any

from .mlir_walk import of_complex_elements, replace_each
from .part_ops import PartOps

DIVIDE = "stablehlo.divide"


def complex_divide(module: Any) -> int:
    """Rewrite every ``stablehlo.divide`` of complex elements in the ``iree.compiler.ir``
    module as the module's doc says; return how many."""
    return replace_each(
        module,
        DIVIDE,
        of_complex_elements,
        lambda ir, operation, kind: _Smith(ir, kind, operation.operands[0]).divide(
            *operation.operands
        ),
    )


class _Smith(PartOps):
    """The ops of one quotient at the insertion point, on tensors of the complex ``kind``'s
    shape."""

    def unit_if_infinite(self, x: Any, infinite: Any) -> Any:
        """``copysign(1 if infinite else 0, x)``."""
        negative = self.negative_sign(x)
        one = self.select(negative, self.number(-1.0), self.number(1.0))
        zero = self.select(negative, self.number(-0.0), self.number(0.0))
        return self.select(infinite, one, zero)

    def divide(self, numerator: Any, divisor: Any) -> Any:
        a, b = self.parts(numerator)
        c, d = self.parts(divisor)
        # Smith's algorithm
        c_by_d = self.quotient(c, d)
        c_by_d_denominator = self.add(d, self.multiply(c_by_d, c))
        d_by_c = self.quotient(d, c)
        d_by_c_denominator = self.add(c, self.multiply(d_by_c, d))
        abs_c, abs_d = self.op("stablehlo.abs", c), self.op("stablehlo.abs", d)
        c_smaller = self.compare("LT", abs_c, abs_d)
        real = self.select(
            c_smaller,
            self.quotient(self.add(self.multiply(c_by_d, a), b), c_by_d_denominator),
            self.quotient(self.add(self.multiply(d_by_c, b), a), d_by_c_denominator),
        )
        imaginary = self.select(
            c_smaller,
            self.quotient(self.subtract(self.multiply(c_by_d, b), a), c_by_d_denominator),
            self.quotient(self.subtract(b, self.multiply(d_by_c, a)), d_by_c_denominator),
        )
        zero, infinity = self.number(0.0), self.number(float("inf"))
        # 1: a zero divisor, a numerator not all NaN
        zero_divisor = self.both(
            "stablehlo.and",
            self.both(
                "stablehlo.and", self.compare("EQ", abs_c, zero), self.compare("EQ", abs_d, zero)
            ),
            self.both("stablehlo.or", self.compare("EQ", a, a), self.compare("EQ", b, b)),
        )
        scale = self.signed(float("inf"), c)
        zero_divisor_parts = (self.multiply(scale, a), self.multiply(scale, b))
        # 2: an infinite numerator part, a finite divisor
        abs_a, abs_b = self.op("stablehlo.abs", a), self.op("stablehlo.abs", b)
        infinite_over_finite, (a_infinite, b_infinite) = self.infinite_over_finite(
            (abs_a, abs_b), (abs_c, abs_d), infinity
        )
        a_unit, b_unit = self.unit_if_infinite(a, a_infinite), self.unit_if_infinite(b, b_infinite)
        infinite_parts = self.by_conjugate(a_unit, b_unit, c, d, infinity)
        # 3: a finite numerator, a divisor with an infinite part
        finite_over_infinite, (c_infinite, d_infinite) = self.infinite_over_finite(
            (abs_c, abs_d), (abs_a, abs_b), infinity
        )
        c_unit, d_unit = self.unit_if_infinite(c, c_infinite), self.unit_if_infinite(d, d_infinite)
        vanishing_parts = self.by_conjugate(a, b, c_unit, d_unit, zero)
        both_nan = self.both("stablehlo.and", self.is_nan(real), self.is_nan(imaginary))
        parts = []
        for index, smith in enumerate((real, imaginary)):
            corner = self.select(
                zero_divisor,
                zero_divisor_parts[index],
                self.select(
                    infinite_over_finite,
                    infinite_parts[index],
                    self.select(finite_over_infinite, vanishing_parts[index], smith),
                ),
            )
            parts.append(self.select(both_nan, corner, smith))
        return self.complex(*parts)

    def infinite_over_finite(
        self, infinite: tuple[Any, Any], finite: tuple[Any, Any], infinity: Any
    ) -> tuple[Any, tuple[Any, Any]]:
        """Whether a part of one number is infinite (magnitudes ``infinite``) and both of
        the other's are finite (``finite``), and which of the first's are infinite."""
        first, second = (self.compare("EQ", x, infinity) for x in infinite)
        finite_first, finite_second = (self.finite(x, infinity) for x in finite)
        condition = self.both(
            "stablehlo.and",
            self.both("stablehlo.or", first, second),
            self.both("stablehlo.and", finite_first, finite_second),
        )
        return condition, (first, second)

    def by_conjugate(self, a: Any, b: Any, c: Any, d: Any, scale: Any) -> tuple[Any, Any]:
        """``scale`` times the parts of ``(a + bi)(c - di)``: ``(a c + b d, b c - a d)``, in
        XLA's order."""
        real = self.add(self.multiply(a, c), self.multiply(b, d))
        imaginary = self.subtract(self.multiply(b, c), self.multiply(a, d))
        return self.multiply(scale, real), self.multiply(scale, imaginary)

    def finite(self, magnitude: Any, infinity: Any) -> Any:
        """``magnitude != inf``, ordered (false for NaN), as LLVM's ``fcmp one``."""
        return self.both(
            "stablehlo.and",
            self.compare("EQ", magnitude, magnitude),
            self.compare("NE", magnitude, infinity),
        )
