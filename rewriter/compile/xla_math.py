"""f32 ``log``, ``log1p``, ``expm1`` and ``erf`` as XLA:CPU computes them, bit for bit.

XLA:CPU computes an f32 ``stablehlo.log`` with Eigen's ``plog_float`` (Cephes' polynomial,
in the order of Eigen's ``generic_plog_float``; XLA's LLVM IR, ``XLA_FLAGS=--xla_dump_to``,
shows each step), and an f32 ``log_plus_one`` as ``x + (-x^2 / 2 + x^3 N(x) / D(x))`` (a
rational function of degree 6, whose polynomials XLA's code evaluates with fused
multiply-adds) where ``|x| < sqrt(2) - 1``, and as that ``log`` of ``1 + x`` elsewhere.
An f32 ``exponential_minus_one`` XLA computes as ``exp(x) - 1`` where ``|x| > 0.5`` and as
``tanh(x / 2) (exp(x) + 1)`` elsewhere (``exp`` by Cephes' polynomial, ``tanh`` by a
rational function of degree 13 over 6), and as ``x`` where ``x / 2`` is 0. An f32 ``erf``
(jax's ``chlo.erf`` composite) XLA computes as ``x P(x^2) / Q(x^2)`` (degrees 4 and 6)
below 3.8325 in magnitude, ``copysign(1, x)`` from there.
MLIR's and IREE's ``math.log`` is the same polynomial in another order: one f32 ``log`` in
13 is a unit in the last place off ``jax.jit``'s on both paths without this fix; their
``math.log1p`` is up to 3 units off in one value of 4, their ``math.expm1`` up to 5 in one
of 5. jax's decomposition of ``erf`` is XLA's function without its fused multiply-adds
(up to 8 units off in one value of 2), and IREE's underflows below about 1e-36.

``xla_math`` writes every f32 ``log``, ``log_plus_one``, ``exponential_minus_one`` and
``erf`` of a function's body (or of a loop's or a conditional's) as one ``linalg.generic``
whose body is XLA's computation in ``arith`` ops, step for step (written once per op and
tensor type, cloned at each op: ``mlir_walk.replace_by_template``, as ``fast_exp`` does).
The ``log`` of
``x``:

1. ``x`` below the smallest normal number (and NaN) is taken as that number; its
   exponent ``e`` and its mantissa ``m`` in ``[0.5, 1)`` read from its bits;
2. ``m`` below ``sqrt(1/2)`` is doubled (``m - 1 + m``) and ``e`` lessened by one, so that
   ``x = m - 1`` lies in ``[sqrt(1/2) - 1, sqrt(2) - 1)``;
3. ``log(1 + x)`` by the polynomial ``y`` in three interleaved parts, then
   ``x - x^2 / 2 + y + e * q1 + e * q2`` (``ln 2 = q1 + q2``, in two parts);
4. a negative or NaN ``x`` gives NaN (all bits set, as XLA's), 0 gives ``-inf`` and
   ``+inf`` gives ``+inf``.

Each step rounds as XLA's does. XLA's LLVM fuses each multiply and add whose product has
one use into a fused multiply-add; the steps of ``log1p`` and ``expm1`` where it does are
written ``math.fma`` (``erf``'s polynomials are fused multiply-adds in XLA's code), and
``log1p``'s last add a fused multiply-add of the exact ``-x^2 / 2`` (which both toolchains
would otherwise fuse with the other product). The ``log``'s multiplies and adds both
toolchains fuse as XLA's does. The results are XLA's bits on a CPU with fused
multiply-adds, as XLA's own are (``tests/test_xla_math.py``: half a million inputs of each
over the normal range and near 0 and 1, the special values and denormals, which both
paths flush as XLA does).
"""

from __future__ import annotations

import re
from typing import Any

from .mlir_walk import (
    elementwise_lines,
    operations_where,
    ranked_result_of,
    replace_by_template,
)

_VALUE = re.compile(r"%(\w+)")
LOG = "stablehlo.log"
LOG1P = "stablehlo.log_plus_one"
EXPM1 = "stablehlo.exponential_minus_one"
ERF = "chlo.erf"  # a stablehlo.composite of that name, as jax writes it
# Where a linalg.generic may stand in for the op: a function's body, a loop's or a
# conditional's (not a reduction's or a sort's body, whose ops are on scalars of the op's own
# making).
_GENERIC_PARENTS = {"func.func", "stablehlo.while", "stablehlo.case", "stablehlo.if"}

# Eigen's generic_plog_float: Cephes' coefficients, as f32 bits
_P = [
    "0x3D9021BB",  # p0  7.0376836292e-2
    "0xBDEBD1B8",  # p1 -1.1514610310e-1
    "0x3DEF251A",  # p2  1.1676998740e-1
    "0xBDFE5D4F",  # p3 -1.2420140846e-1
    "0x3E11E9BF",  # p4  1.4249322787e-1
    "0xBE2AAE50",  # p5 -1.6668057665e-1
    "0x3E4CCEAC",  # p6  2.0000714765e-1
    "0xBE7FFFFC",  # p7 -2.4999993993e-1
    "0x3EAAAAAA",  # p8  3.3333331174e-1
]
_Q1 = "0xB95E8083"  # -2.12194440e-4
_Q2 = "0x3F318000"  # 0.693359375


def _log_lines(x: str, result: str, prefix: str) -> list[str]:
    """The ``arith`` lines of ``%result = log(%x)`` as XLA computes it (the module's doc),
    their values named with ``prefix``."""
    lines = [
        "%smallest = arith.constant 0x00800000 : f32",
        "%below = arith.cmpf uge, %smallest, %in0 : f32",
        "%normal = arith.select %below, %smallest, %in0 : f32",
        "%bits = arith.bitcast %normal : f32 to i32",
        "%c23 = arith.constant 23 : i32",
        "%biased = arith.shrui %bits, %c23 : i32",
        "%c127 = arith.constant 127 : i32",
        "%unbiased = arith.subi %biased, %c127 : i32",
        "%exponent = arith.sitofp %unbiased : i32 to f32",
        "%one = arith.constant 1.0 : f32",
        "%e_plus = arith.addf %one, %exponent : f32",
        "%keep = arith.constant -2139095041 : i32",  # 0x807FFFFF: the sign and the mantissa
        "%mantissa_bits = arith.andi %bits, %keep : i32",
        "%half = arith.constant 1056964608 : i32",  # 0x3F000000: 0.5's exponent
        "%m_bits = arith.ori %mantissa_bits, %half : i32",
        "%m = arith.bitcast %m_bits : i32 to f32",
        "%sqrt_half = arith.constant 0x3F3504F3 : f32",
        "%low = arith.cmpf olt, %m, %sqrt_half : f32",
        "%zero = arith.constant 0.0 : f32",
        "%again = arith.select %low, %m, %zero : f32",
        "%m_less = arith.subf %m, %one : f32",
        "%e_less = arith.select %low, %one, %zero : f32",
        "%e = arith.subf %e_plus, %e_less : f32",
        "%x = arith.addf %m_less, %again : f32",
        "%x2 = arith.mulf %x, %x : f32",
        "%x3 = arith.mulf %x2, %x : f32",
        *(f"%p{k} = arith.constant {bits} : f32" for k, bits in enumerate(_P)),
        "%t0 = arith.mulf %x, %p0 : f32",
        "%y_a = arith.addf %p1, %t0 : f32",
        "%t1 = arith.mulf %x, %p3 : f32",
        "%y1_a = arith.addf %p4, %t1 : f32",
        "%t2 = arith.mulf %x, %p6 : f32",
        "%y2_a = arith.addf %p7, %t2 : f32",
        "%t3 = arith.mulf %y_a, %x : f32",
        "%y_b = arith.addf %p2, %t3 : f32",
        "%t4 = arith.mulf %y1_a, %x : f32",
        "%y1_b = arith.addf %p5, %t4 : f32",
        "%t5 = arith.mulf %y2_a, %x : f32",
        "%y2_b = arith.addf %p8, %t5 : f32",
        "%t6 = arith.mulf %y_b, %x3 : f32",
        "%y_c = arith.addf %y1_b, %t6 : f32",
        "%t7 = arith.mulf %y_c, %x3 : f32",
        "%y_d = arith.addf %y2_b, %t7 : f32",
        "%y_e = arith.mulf %y_d, %x3 : f32",
        f"%q1 = arith.constant {_Q1} : f32",
        "%e_q1 = arith.mulf %q1, %e : f32",
        "%point_five = arith.constant 0.5 : f32",
        "%half_x2 = arith.mulf %point_five, %x2 : f32",
        "%y_f = arith.addf %y_e, %e_q1 : f32",
        "%x_less = arith.subf %x, %half_x2 : f32",
        f"%q2 = arith.constant {_Q2} : f32",
        "%e_q2 = arith.mulf %q2, %e : f32",
        "%sum = arith.addf %x_less, %y_f : f32",
        "%log = arith.addf %sum, %e_q2 : f32",
        # the special values, as XLA's: NaN of all bits, -inf at 0, +inf at +inf
        "%invalid = arith.cmpf ule, %in0, %zero : f32",
        "%at_zero = arith.cmpf oeq, %in0, %zero : f32",
        "%infinity = arith.constant 0x7F800000 : f32",
        "%at_infinity = arith.cmpf oeq, %in0, %infinity : f32",
        "%all_bits = arith.constant -1 : i32",
        "%nan = arith.bitcast %all_bits : i32 to f32",
        "%checked = arith.select %invalid, %nan, %log : f32",
        "%minus_infinity = arith.constant 0xFF800000 : f32",
        "%topped = arith.select %at_infinity, %infinity, %checked : f32",
        "%yielded = arith.select %at_zero, %minus_infinity, %topped : f32",
    ]
    return [_renamed(line, x, result, prefix) for line in lines]


def _renamed(line: str, x: str, result: str, prefix: str) -> str:
    """``line`` of ``_log_lines`` with its input ``%in0`` named ``x``, its result
    ``%yielded`` named ``result`` and its other values prefixed with ``prefix``."""
    names = {"in0": x, "yielded": result}
    return _VALUE.sub(lambda found: names.get(found[1], f"%{prefix}{found[1]}"), line)


# log1p's rational function where |x| < sqrt(2) - 1 (XLA's EmitLog1p): numerator and
# denominator coefficients from the highest degree, as f32 bits
_NUMERATOR = [
    "4.527e-05",
    "0x3EFF40C5",
    "0x40D284FA",
    "0x41EF4B9C",
    "0x4273CC76",
    "0x426473AD",
    "0x41A05101",
]
_DENOMINATOR = [
    "1.0",
    "0x417101AD",
    "0x42A6185B",
    "0x435DC32D",
    "0x439A8CA3",
    "0x43586D8A",
    "0x42707982",
]


def _log1p_lines() -> list[str]:
    """The body of ``log1p(%in0)`` as XLA computes it: the rational function near 0 (each
    step of its polynomials a fused multiply-add, as XLA's code has them), the log of
    ``1 + x`` elsewhere."""
    lines = ["%one = arith.constant 1.0 : f32", "%xp1 = arith.addf %in0, %one : f32"]
    lines += _log_lines("%xp1", "%large", "l_")
    lines += ["%x2 = arith.mulf %in0, %in0 : f32"]
    lines += _horner("n", "%in0", _NUMERATOR) + _horner("d", "%in0", _DENOMINATOR)
    lines += [
        "%ratio = arith.divf %n, %d : f32",
        "%x3 = arith.mulf %in0, %x2 : f32",
        "%cubic = arith.mulf %x3, %ratio : f32",
        "%minus_half = arith.constant -0.5 : f32",
        # -x^2 / 2 + x^3 N / D, the half square exact: a fused multiply-add of it rounds
        # as XLA's add does, where a multiply and an add could be fused the other way
        "%terms = math.fma %x2, %minus_half, %cubic : f32",
        "%small = arith.addf %in0, %terms : f32",
        "%size = math.absf %in0 : f32",
        "%bound = arith.constant 0x3ED413CD : f32",  # sqrt(2) - 1
        "%near = arith.cmpf olt, %size, %bound : f32",
        "%yielded = arith.select %near, %small, %large : f32",
    ]
    return lines


def xla_math(module: Any) -> int:
    """Rewrite, in place, every f32 ``log``, ``log_plus_one`` and
    ``exponential_minus_one`` the module's doc names of the ``iree.compiler.ir``
    ``module`` (in its context); return how many."""
    from iree.compiler import ir

    bodies = {LOG: _LOG, LOG1P: _LOG1P, EXPM1: _EXPM1, ERF: _ERF}

    def taken(operation: Any) -> bool:
        return (
            _op_name(operation) in bodies
            and len(operation.operands) == 1
            and ranked_result_of(operation, ir.F32Type)
            and operation.operands[0].type == operation.results[0].type
            and operation.parent.name in _GENERIC_PARENTS
        )

    found = operations_where(module, taken)
    templates: dict[tuple[str, str], Any] = {}
    for operation in found:
        kind = operation.results[0].type
        name = _op_name(operation)
        key = (name, str(kind))
        if key not in templates:
            text = _template(ir.RankedTensorType(kind), bodies[name])
            templates[key] = ir.Module.parse(text)
        replace_by_template(operation, templates[key])
    return len(found)


def _op_name(operation: Any) -> str:
    """The op's name, a composite's own name (``chlo.erf``) for a ``stablehlo.composite``."""
    if operation.name == "stablehlo.composite" and "name" in operation.attributes:
        return str(operation.attributes["name"]).strip('"')
    return str(operation.name)


def _template(shaped: Any, body: list[str]) -> str:
    """A function whose body is the ``linalg.generic`` of ``body`` (XLA's steps) on a
    ``shaped`` tensor, cloned at each op of that type (``replace_by_template``)."""
    lines = [f"func.func private @xla_math(%operand: {shaped}, %init: {shaped}) -> {shaped} {{"]
    lines += elementwise_lines("%values", ["%operand"], "%init", shaped, body)
    lines += [f"  return %values : {shaped}", "}"]
    return "\n".join(lines)


# expm1's parts (XLA's EmitExpm1 of f32): exp by Cephes' polynomial, and tanh(x / 2) by a
# rational function, as f32 bits from the highest degree
_EXP_POLYNOMIAL = ["0x39506967", "0x3AB743CE", "0x3C088908", "0x3D2AA9C1", "0x3E2AAAAA", "0.5"]
_TANH_NUMERATOR = [
    "0xA59F25C0",
    "0x2A61337E",
    "0xAEBD37FF",
    "0x335C0041",
    "0x3779434A",
    "0x3A270DED",
    "0x3BA059DC",
]
_TANH_DENOMINATOR = ["0x35A0D3D8", "0x38F895D6", "0x3B14AA05", "0x3BA059DD"]


def _horner(name: str, x: str, coefficients: list[str]) -> list[str]:
    """``%name`` = the polynomial of ``coefficients`` (from the highest degree) at ``x``,
    each step a fused multiply-add, as XLA's code has them."""
    last = len(coefficients) - 1
    lines = [f"%{name}0 = arith.constant {coefficients[0]} : f32"]
    for k, coefficient in enumerate(coefficients[1:], start=1):
        step = name if k == last else f"{name}{k}"
        lines += [
            f"%{name}c{k} = arith.constant {coefficient} : f32",
            f"%{step} = math.fma %{name}{k - 1}, {x}, %{name}c{k} : f32",
        ]
    return lines


def _clamped(name: str, x: str, low: str, high: str) -> list[str]:
    """``%name`` = ``x`` clamped into ``[low, high]`` as XLA's selects do (NaN kept)."""
    return [
        f"%{name}_low = arith.constant {low} : f32",
        f"%{name}_high = arith.constant {high} : f32",
        f"%{name}_below = arith.cmpf olt, {x}, %{name}_low : f32",
        f"%{name}_raised = arith.select %{name}_below, %{name}_low, {x} : f32",
        f"%{name}_above = arith.cmpf ogt, %{name}_raised, %{name}_high : f32",
        f"%{name} = arith.select %{name}_above, %{name}_high, %{name}_raised : f32",
    ]


def _expm1_lines() -> list[str]:
    """The body of ``expm1(%in0)`` as XLA computes it: ``exp(x) - 1`` where ``|x| > 0.5``,
    else ``tanh(x / 2) (exp(x) + 1)``, and ``x`` itself where ``x / 2`` is 0 (XLA fuses
    each multiply and add whose product has one use; here those are ``math.fma``)."""
    return [
        "%zero = arith.constant 0.0 : f32",
        "%one = arith.constant 1.0 : f32",
        # exp(x) = 2^n (1 + r + r^2 P(r)), x = n ln 2 + r
        *_clamped("xc", "%in0", "-87.8", "88.8"),
        "%log2e = arith.constant 0x3FB8AA3B : f32",
        "%half = arith.constant 0.5 : f32",
        "%scaled = math.fma %xc, %log2e, %half : f32",
        "%n_raw = math.floor %scaled : f32",
        *_clamped("n", "%n_raw", "-127.0", "127.0"),
        "%ln2_high = arith.constant 0x3F318000 : f32",
        "%ln2_low = arith.constant 0xB95E8083 : f32",
        "%n_ln2_high = arith.mulf %n, %ln2_high : f32",  # exact: ln2_high has 9 bits
        "%r_high = arith.subf %xc, %n_ln2_high : f32",
        "%minus_n = arith.negf %n : f32",
        "%r = math.fma %minus_n, %ln2_low, %r_high : f32",
        *_horner("p", "%r", _EXP_POLYNOMIAL),
        "%r2 = arith.mulf %r, %r : f32",
        "%y_less = math.fma %p, %r2, %r : f32",
        "%y = arith.addf %y_less, %one : f32",
        "%n_int = arith.fptosi %n : f32 to i32",
        "%c23 = arith.constant 23 : i32",
        "%shifted = arith.shli %n_int, %c23 : i32",
        "%one_bits = arith.constant 1065353216 : i32",
        "%scale_bits = arith.addi %shifted, %one_bits : i32",
        "%scale = arith.bitcast %scale_bits : i32 to f32",
        "%e = arith.mulf %y, %scale : f32",
        "%e_less = arith.subf %e, %one : f32",
        # tanh(x / 2) by XLA's rational function
        "%h = arith.mulf %in0, %half : f32",
        "%h_size = math.absf %h : f32",
        "%tiny = arith.constant 4.0e-04 : f32",
        "%h_tiny = arith.cmpf olt, %h_size, %tiny : f32",
        *_clamped("hc", "%h", "0xC0FFF644", "0x40FFF644"),
        "%h2 = arith.mulf %hc, %hc : f32",
        *_horner("tn", "%h2", _TANH_NUMERATOR),
        *_horner("td", "%h2", _TANH_DENOMINATOR),
        "%t_num = arith.mulf %hc, %tn : f32",
        "%t_ratio = arith.divf %t_num, %td : f32",
        "%t_near = arith.select %h_tiny, %h, %t_ratio : f32",
        "%twenty = arith.constant 20.0 : f32",
        "%h_far = arith.cmpf oge, %h_size, %twenty : f32",
        "%unit = math.copysign %one, %h : f32",
        "%t = arith.select %h_far, %unit, %t_near : f32",
        "%e_more = arith.addf %e, %one : f32",
        "%near = arith.mulf %t, %e_more : f32",
        "%x_size = math.absf %in0 : f32",
        "%far = arith.cmpf ogt, %x_size, %half : f32",
        "%chosen = arith.select %far, %e_less, %near : f32",
        "%h_zero = arith.cmpf oeq, %h, %zero : f32",
        "%yielded = arith.select %h_zero, %in0, %chosen : f32",
    ]


# erf's rational function (XLA's f32 erf): x P(x^2) / Q(x^2), as f32 bits from the
# highest degree, and the bound past which erf is +-1
_ERF_NUMERATOR = ["0x39702D51", "0x3B5F5DA2", "0x3D50B6EB", "0x3E3DA740", "0x3F906EBA"]
_ERF_DENOMINATOR = [
    "0xB3FD3906",
    "0x37C588DF",
    "0x3A856D28",
    "0x3C6687D4",
    "0x3DE34C21",
    "0x3EFEB44A",
    "1.0",
]
_ERF_BOUND = "0x407547CB"  # 3.8325069


def _erf_lines() -> list[str]:
    """The body of ``erf(%in0)`` as XLA computes it: ``x P(x^2) / Q(x^2)`` (each step of
    the polynomials a fused multiply-add, as XLA's code has them), ``copysign(1, x)``
    where ``|x|`` reaches the bound."""
    return [
        "%x2 = arith.mulf %in0, %in0 : f32",
        *_horner("p", "%x2", _ERF_NUMERATOR),
        "%numerator = arith.mulf %in0, %p : f32",
        *_horner("q", "%x2", _ERF_DENOMINATOR),
        "%ratio = arith.divf %numerator, %q : f32",
        "%one = arith.constant 1.0 : f32",
        "%unit = math.copysign %one, %in0 : f32",
        "%size = math.absf %in0 : f32",
        f"%bound = arith.constant {_ERF_BOUND} : f32",
        "%far = arith.cmpf oge, %size, %bound : f32",
        "%yielded = arith.select %far, %unit, %ratio : f32",
    ]


_LOG = _log_lines("%in0", "%yielded", "")
_LOG1P = _log1p_lines()
_EXPM1 = _expm1_lines()
_ERF = _erf_lines()
