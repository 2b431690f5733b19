"""f32 ``sine``, ``cosine`` and ``tan`` computed in f64, which IREE 3.13 gets right where
its f32 polynomials are far off.

IREE's math transform lowers f32 ``sin``, ``cos`` and ``tan`` to polynomials whose
argument reduction is f32's: ``sin(1e4)`` is 2.6e-4 off, ``sin(1e10)`` -6e21,
``sin(1e20)`` -inf and ``tan`` of large arguments NaN. Both runners go through that
transform, so each f32 op of a static shape becomes a call of a private function
(``_function``) that computes it in f64 and rounds the result to f32 once:

- where every finite element is within ``BOUND = 2^19`` in magnitude (most programs: one
  ``reduce`` decides, a ``stablehlo.if`` picks), Cody and Waite's reduction: ``k =
  round(x 2/pi)``, ``r = x - k pi/2`` with ``pi/2`` in three parts (fdlibm's; ``k < 2^19``
  keeps ``k PIO2_1``, ``k PIO2_2`` and ``x - k PIO2_1`` exact). The f32 ``x`` nearest a
  multiple of ``pi/2`` below ``2^19`` is ``252.8982`` (``|r| = 4.2e-9``), so ``r`` is within
  ``2^-52`` relative (the parts left out are ``1e-31``);
- otherwise, for every element, Payne and Hanek's: ``x 2/pi`` modulo 4 from the exact
  products of ``x`` with six 24-bit parts of ``2/pi`` chosen by ``x``'s exponent, summed
  in double-double; ``k`` its nearest integer, ``r = (x 2/pi - k) pi/2``. What is left out
  is below ``2^-94``, and ``|x 2/pi - k|`` is at least ``1.03e-9 = 2^-29.9`` for every f32
  ``x`` (at ``16367173 2^72``, found by search over every exponent), so ``x 2/pi - k`` is
  within ``2^-53 + 2^-64`` relative, ``r`` within ``2^-52``.

Then, for either, fdlibm's polynomials of ``sin r`` and ``cos r`` of degree 13 and 14 on
``|r| <= pi/4`` (within ``2^-58``) and the quadrant ``k mod 4``: the f64 result
is within about ``2^-50`` relative, ``2^-26`` of an f32 ulp, within ``0.5 + 2^-26`` ulp
once rounded. Both are elementwise f64 arithmetic without calls, which vectorizes: no
libm function element by element, and nothing IREE's embedded linking lacks.

Dynamic shapes take libm's functions directly (the constants are splats of a static shape).
Infinities and NaN give NaN, and ``-0.0`` stays ``-0.0`` (``sin`` and ``tan``).
"""

from __future__ import annotations

import math
from typing import Any

from .mlir_walk import operations_where

# The StableHLO ops computed in f64 when their elements are f32.
WIDENED = ("stablehlo.sine", "stablehlo.cosine", "stablehlo.tan")

# |x| <= BOUND: k = round(x 2/pi) < 2^19, so k PIO2_1 and k PIO2_2 (33 bits each) are
# exact, and x - k PIO2_1 too (both are multiples of 2^-32 below 2^20).
BOUND = 2.0**19
PIO2_1 = 1.57079632673412561417e00  # the first 33 bits of pi/2 (fdlibm's)
PIO2_2 = 6.07710050630396597660e-11  # the next 33
PIO2_3 = 2.02226624879595063154e-21  # pi/2 - PIO2_1 - PIO2_2
# fdlibm's polynomials on |r| <= pi/4 (k_sin.c, k_cos.c), highest degree first:
# sin r = r + r^3 SIN(r^2) and cos r = 1 + r^2 COS(r^2), degrees 13 and 14, each within
# 2^-58 of the function (Taylor's needs degrees 17 and 18 for as much). The module's bound
# needs 2^-52: degrees 11 and 12, fitted on Chebyshev's points, are 2^-44 and 2^-50 off.
SIN = (
    1.58969099521155010221e-10, -2.50507602534068634195e-08, 2.75573137070700676789e-06,
    -1.98412698298579493134e-04, 8.33333333332248946124e-03, -1.66666666666666324348e-01,
)  # fmt: skip
COS = (
    -1.13596475577881948265e-11, 2.08757232129817482790e-09, -2.75573143513906633035e-07,
    2.48015872894767294178e-05, -1.38888888888741095749e-03, 4.16666666666666019037e-02,
    -0.5,
)  # fmt: skip
# 2/pi in 24-bit parts (fdlibm's ``ipio2``): TWO_OVER_PI[i] = part i+1 times 2^(-24 (i+1)).
# An f32 x = m 2^e (m < 2^24) times one is exact (48 bits). Its band b counts the
# BAND_STARTS at or below |x|: the parts before b + 1 give multiples of 4 (e >= 24 b + 2),
# nothing modulo 4, and the PARTS from b + 1 on leave out less than 2^(e - 24 (b + 6) + 24),
# below 2^-94 as e < 24 b + 26.
_IPIO2 = (
    0xA2F983, 0x6E4E44, 0x1529FC, 0x2757D1, 0xF534DD,
    0xC0DB62, 0x95993C, 0x439041, 0xFE5163, 0xABDEBB,
)  # fmt: skip
TWO_OVER_PI = tuple(math.ldexp(part, -24 * (i + 1)) for i, part in enumerate(_IPIO2))
BAND_STARTS = (49, 73, 97, 121)  # |x| >= 2^(24 b + 25): e >= 24 b + 2
PARTS = 6


def _function(
    name: str,
    op: str,
    narrow: str,
    wide: str,
    flags: str,
    integers: str,
    rank: int,
) -> str:
    """A function of ``narrow`` to ``narrow``: ``op`` of its argument in f64, reduced by
    Payne and Hanek's method when an element is finite and beyond ``BOUND``, else by
    Cody and Waite's, then the polynomials above."""
    lines: list[str] = []
    count = iter(range(10**6))

    def emit(text: str) -> str:
        value = f"%v{next(count)}"
        lines.append(f"    {value} = {text}")
        return value

    def number(value: float) -> str:
        return emit(f"stablehlo.constant dense<{value!r}> : {wide}")

    def binary(kind: str, a: str, b: str, of: str = wide) -> str:
        return emit(f"stablehlo.{kind} {a}, {b} : {of}")

    def compare(direction: str, a: str, b: str, of: str = wide) -> str:
        return emit(f"stablehlo.compare {direction}, {a}, {b} : ({of}, {of}) -> {flags}")

    def select(flag: str, a: str, b: str) -> str:
        return emit(f"stablehlo.select {flag}, {a}, {b} : {flags}, {wide}")

    def unary(kind: str, a: str) -> str:
        return emit(f"stablehlo.{kind} {a} : {wide}")

    def horner(coefficients: tuple[float, ...], at: str) -> str:
        value = number(coefficients[0])
        for coefficient in coefficients[1:]:
            value = binary("add", binary("multiply", value, at), number(coefficient))
        return value

    def nearest(a: str) -> str:
        """The integer nearest ``a`` (ties to even) for ``|a| < 2^51``: adding and
        subtracting ``1.5 2^52`` rounds it; IREE expands ``round_nearest_even`` into
        integer bit operations, several times slower."""
        shifter = number(1.5 * 2.0**52)
        return binary("subtract", binary("add", a, shifter), shifter)

    def two_sum(a: str, b: str) -> tuple[str, str]:
        """``a + b`` and its rounding error (Knuth's, exact)."""
        total = binary("add", a, b)
        b_part = binary("subtract", total, a)
        a_part = binary("subtract", total, b_part)
        error = binary("add", binary("subtract", a, a_part), binary("subtract", b, b_part))
        return total, error

    def modulo_4(t: str) -> str:
        """``t mod 4`` in [-2, 2], exact for an f64 ``t`` (``t`` itself within 2)."""
        near = nearest(binary("multiply", t, number(0.25)))
        return binary("subtract", t, binary("multiply", near, number(4.0)))

    def cody_waite(x: str) -> tuple[str, str]:
        """``k = round(x 2/pi)`` and ``x - k pi/2``, for ``|x| <= BOUND``."""
        k = nearest(binary("multiply", x, number(2 / math.pi)))
        k = select(emit(f"stablehlo.is_finite {k} : ({wide}) -> {flags}"), k, zero)
        r = x
        for part in (PIO2_1, PIO2_2, PIO2_3):
            r = binary("subtract", r, binary("multiply", k, number(part)))
        return k, select(compare("EQ", k, zero), x, r)  # x itself: -0.0 kept

    def payne_hanek(x: str) -> tuple[str, str]:
        """``k``, an integer with ``k = round(x 2/pi) mod 4``, and ``x - k pi/2``, for every
        finite f32 ``x``: the products of ``x`` with the six ``TWO_OVER_PI`` parts of its
        band, each exact, summed modulo 4 in double-double."""
        x = select(emit(f"stablehlo.is_finite {x} : ({wide}) -> {flags}"), x, zero)
        magnitude = unary("abs", x)
        bands = [compare("GE", magnitude, number(2.0**start)) for start in BAND_STARTS]
        terms = []
        for j in range(PARTS):
            part = number(TWO_OVER_PI[j])
            for band, flag in enumerate(bands, start=1):
                part = select(flag, number(TWO_OVER_PI[band + j]), part)
            terms.append(binary("multiply", x, part))
        s, e0 = two_sum(modulo_4(terms[0]), modulo_4(terms[1]))
        k = nearest(s)
        h, e1 = two_sum(binary("subtract", s, k), terms[2])
        h, e2 = two_sum(h, terms[3])
        low = binary("add", binary("add", e0, e1), e2)
        low = binary("add", low, binary("add", terms[4], terms[5]))
        k2 = nearest(h)
        f = binary("add", binary("subtract", h, k2), low)
        r = binary("multiply", f, number(math.pi / 2))
        r = select(compare("EQ", x, zero), x, r)  # -0.0 kept
        return modulo_4(binary("add", k, k2)), r

    def finish(k: str, r: str) -> str:
        """``op`` of ``k pi/2 + r`` from the polynomials on ``r`` and the quadrant."""
        z = binary("multiply", r, r)
        cube = binary("multiply", r, z)
        sine = binary("add", r, binary("multiply", cube, horner(SIN, z)))
        sine = select(compare("EQ", r, zero), r, sine)  # -0.0 kept
        cosine = binary("add", number(1.0), binary("multiply", z, horner(COS, z)))
        quadrant = emit(f"stablehlo.convert {k} : ({wide}) -> {integers}")

        def bit(value: int, of: str) -> str:
            mask = emit(f"stablehlo.constant dense<{value}> : {integers}")
            masked = binary("and", of, mask, integers)
            return compare("EQ", masked, mask, integers)

        odd = bit(1, quadrant)
        if op == "tan":
            ratio = binary("divide", sine, cosine)
            inverse = emit(f"stablehlo.negate {binary('divide', cosine, sine)} : {wide}")
            value = select(odd, inverse, ratio)
        else:
            if op == "sine":
                value, negated = select(odd, cosine, sine), bit(2, quadrant)
            else:
                one = emit(f"stablehlo.constant dense<1> : {integers}")
                value, negated = (
                    select(odd, sine, cosine),
                    bit(2, binary("add", quadrant, one, integers)),
                )
            value = select(negated, emit(f"stablehlo.negate {value} : {wide}"), value)
        number_x = emit(f"stablehlo.is_finite %w : ({wide}) -> {flags}")
        nan = emit(f"stablehlo.constant dense<0x7FF8000000000000> : {wide}")
        value = select(number_x, value, nan)  # NaN of inf and NaN
        narrowed = emit(f"stablehlo.convert {value} : ({wide}) -> {narrow}")
        lines.append(f"    stablehlo.return {narrowed} : {narrow}")
        text = "\n".join(lines)
        lines.clear()
        return text

    zero = number(0.0)
    outer = lines.pop()  # the zero, defined before the branches
    far = finish(*payne_hanek("%w"))
    near = finish(*cody_waite("%w"))
    dimensions = ", ".join(str(i) for i in range(rank))
    return f"""\
func.func private @{name}(%x: {narrow}) -> {narrow} {{
  %w = stablehlo.convert %x : ({narrow}) -> {wide}
  %a = stablehlo.abs %w : {wide}
  %bound = stablehlo.constant dense<{BOUND!r}> : {wide}
  %inf = stablehlo.constant dense<0x7FF0000000000000> : {wide}
  %beyond = stablehlo.compare GT, %a, %bound : ({wide}, {wide}) -> {flags}
  %finite = stablehlo.compare LT, %a, %inf : ({wide}, {wide}) -> {flags}
  %far = stablehlo.and %beyond, %finite : {flags}
  %false = stablehlo.constant dense<false> : tensor<i1>
  %any = stablehlo.reduce(%far init: %false) applies stablehlo.or
      across dimensions = [{dimensions}] : ({flags}, tensor<i1>) -> tensor<i1>
{outer.replace("    ", "  ", 1)}
  %result = "stablehlo.if"(%any) ({{
{far}
  }}, {{
{near}
  }}) : (tensor<i1>) -> {narrow}
  return %result : {narrow}
}}
"""


def f32_math_in_f64(module: Any, libm: bool = True) -> int:
    """Rewrite every f32 op of ``WIDENED`` in the ``iree.compiler.ir`` module as the
    module's doc says; return how many. Without ``libm``, dynamic shapes are left alone
    (theirs would be libm's functions)."""
    from iree.compiler import ir

    def f32(operation: Any) -> bool:
        if operation.name not in WIDENED:
            return False
        tensor = operation.results[0].type
        return (
            isinstance(tensor, ir.RankedTensorType)
            and isinstance(tensor.element_type, ir.F32Type)
            and (libm or tensor.has_static_shape)
        )

    found = operations_where(module, f32)
    taken = _symbols(module)
    made: dict[tuple[str, str], str] = {}  # (op, type): its function's name
    for operation in found:
        narrow = operation.results[0].type
        with ir.InsertionPoint(operation), operation.location:
            if not narrow.has_static_shape:
                wide = ir.RankedTensorType.get(narrow.shape, ir.F64Type.get())
                operands = [_convert(ir, wide, operand) for operand in operation.operands]
                result = ir.Operation.create(operation.name, results=[wide], operands=operands)
                narrowed = _convert(ir, narrow, result.result)
            else:
                key = (operation.name, str(narrow))
                if key not in made:
                    made[key] = _new_name(taken, "rw_" + operation.name.split(".")[1])
                    _add_function(ir, module, made[key], operation.name, narrow)
                callee = ir.FlatSymbolRefAttr.get(made[key])
                call = ir.Operation.create(
                    "func.call",
                    results=[narrow],
                    operands=[operation.operands[0]],
                    attributes={"callee": callee},
                )
                narrowed = call.result
        operation.results[0].replace_all_uses_with(narrowed)
        operation.erase()
    return len(found)


def _symbols(module: Any) -> set[str]:
    """The names of the symbols at the top of ``module``."""
    return {
        str(operation.attributes["sym_name"]).strip('"')
        for operation in module.body.operations
        if "sym_name" in operation.attributes
    }


def _new_name(taken: set[str], stem: str) -> str:
    name = stem
    while name in taken:
        name = f"{stem}_{len(taken)}"
        stem = name
    taken.add(name)
    return name


def _add_function(ir: Any, module: Any, name: str, op: str, narrow: Any) -> None:
    """Append ``_function``'s text for ``op`` on ``narrow`` tensors to ``module``."""
    shape = "".join(f"{size}x" for size in narrow.shape)
    text = _function(
        name,
        op.split(".")[1],
        str(narrow),
        f"tensor<{shape}f64>",
        f"tensor<{shape}i1>",
        f"tensor<{shape}i64>",
        narrow.rank,
    )
    parsed = ir.Module.parse(text)
    for function in list(parsed.body.operations):
        function.detach_from_parent()
        module.body.append(function)


def _convert(ir: Any, kind: Any, value: Any) -> Any:
    return ir.Operation.create("stablehlo.convert", results=[kind], operands=[value]).result
