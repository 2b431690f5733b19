"""f32 ``sine``, ``cosine`` and ``tan`` computed in f64, which IREE 3.13 gets right where
its f32 polynomials are far off.

IREE's math transform lowers f32 ``sin``, ``cos`` and ``tan`` to polynomials whose
argument reduction is f32's: ``sin(1e4)`` is 2.6e-4 off, ``sin(1e10)`` -6e21,
``sin(1e20)`` -inf and ``tan`` of large arguments NaN. Both runners go through that
transform, so each f32 op of a static shape becomes a call of a private function
(``_function``) that computes it in f64 and rounds the result to f32 once:

- where every finite element is within ``BOUND = 2^19`` in magnitude (most programs: one
  ``reduce`` decides, a ``stablehlo.if`` picks), the whole tensor takes a path that
  vectorizes: ``k = round(x 2/pi)``, ``r = x - k pi/2`` with ``pi/2`` in three parts
  (fdlibm's; ``k < 2^19`` keeps ``k PIO2_1``, ``k PIO2_2`` and ``x - k PIO2_1`` exact), the
  Taylor polynomials of ``sin r`` and ``cos r`` to degree 17 and 18 on ``|r| <= pi/4``
  (the rest is below ``2^-60``), and the quadrant ``k mod 4``. The f32 ``x`` nearest a
  multiple of ``pi/2`` below ``2^19`` is ``252.8982`` (``|r| = 4.2e-9``), so ``r`` is
  within ``2^-52`` relative (the parts left out are ``1e-31``), and the f64 result within
  about ``2^-50``: ``2^-26`` of an f32 ulp, within ``0.5 + 2^-26`` ulp once rounded;
- otherwise the whole tensor takes libm's f64 ``sin``, ``cos`` and ``tan`` (IREE leaves
  them to it), within 1 f64 ulp for every argument, huge ones included (Payne and Hanek's
  reduction): ``2^-29`` of an f32 ulp, within ``0.5 + 2^-29`` ulp once rounded. They are
  scalar calls, element by element. IREE's embedded linking has no f64 ``sin``: the IREE
  path links such a module as a system library, and where it cannot (cross-compiling, or
  embedded linking chosen: ``rewriter/iree/build.py``) such a tensor keeps IREE's f32 op.

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
SIN_TAYLOR = tuple((-1) ** n / math.factorial(2 * n + 1) for n in range(8, 0, -1))
COS_TAYLOR = tuple((-1) ** n / math.factorial(2 * n) for n in range(9, 0, -1))


def _function(
    name: str,
    op: str,
    narrow: str,
    wide: str,
    flags: str,
    integers: str,
    rank: int,
    libm: bool = True,
) -> str:
    """A function of ``narrow`` to ``narrow``: ``op`` of its argument in f64, libm's when an
    element is finite and beyond ``BOUND``, else the reduction and polynomials above."""
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

    def horner(coefficients, at: str) -> str:
        value = number(coefficients[0])
        for coefficient in coefficients[1:]:
            value = binary("add", binary("multiply", value, at), number(coefficient))
        return value

    x = "%w"
    k = emit(f"stablehlo.round_nearest_even {binary('multiply', x, number(2 / math.pi))} : {wide}")
    finite = emit(f"stablehlo.is_finite {k} : ({wide}) -> {flags}")
    zero = number(0.0)
    k = select(finite, k, zero)  # no integer conversion of inf or NaN below
    r = x
    for part in (PIO2_1, PIO2_2, PIO2_3):
        r = binary("subtract", r, binary("multiply", k, number(part)))
    r = select(compare("EQ", k, zero), x, r)  # x itself: -0.0 kept
    z = binary("multiply", r, r)
    cube = binary("multiply", r, z)
    sine = binary("add", r, binary("multiply", cube, horner(SIN_TAYLOR, z)))
    sine = select(compare("EQ", r, zero), r, sine)  # -0.0 kept
    cosine = binary("add", number(1.0), binary("multiply", z, horner(COS_TAYLOR, z)))
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
    number_x = emit(f"stablehlo.is_finite {x} : ({wide}) -> {flags}")
    nan = emit(f"stablehlo.constant dense<0x7FF8000000000000> : {wide}")
    value = select(number_x, value, nan)  # NaN of inf and NaN
    fast = "\n".join(lines)
    if libm:
        far = (
            f"    %libm = stablehlo.{op} %w : {wide}\n"
            f"    %n = stablehlo.convert %libm : ({wide}) -> {narrow}\n"
            f"    stablehlo.return %n : {narrow}"
        )
    else:  # IREE's own f32 op
        far = f"    %n = stablehlo.{op} %x : {narrow}\n    stablehlo.return %n : {narrow}"
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
  %result = "stablehlo.if"(%any) ({{
{far}
  }}, {{
{fast}
    %n = stablehlo.convert {value} : ({wide}) -> {narrow}
    stablehlo.return %n : {narrow}
  }}) : (tensor<i1>) -> {narrow}
  return %result : {narrow}
}}
"""


def f32_math_in_f64(module: Any, libm: bool = True) -> int:
    """Rewrite every f32 op of ``WIDENED`` in the ``iree.compiler.ir`` module as the
    module's doc says; return how many. Without ``libm``, a tensor with an element beyond
    ``BOUND`` keeps the f32 op (IREE's), and dynamic shapes are left alone."""
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
                    _add_function(ir, module, made[key], operation.name, narrow, libm)
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


def _add_function(ir: Any, module: Any, name: str, op: str, narrow: Any, libm: bool) -> None:
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
        libm,
    )
    parsed = ir.Module.parse(text)
    for function in list(parsed.body.operations):
        function.detach_from_parent()
        module.body.append(function)


def _convert(ir: Any, kind: Any, value: Any) -> Any:
    return ir.Operation.create("stablehlo.convert", results=[kind], operands=[value]).result
