"""f32 and f64 ``stablehlo.power`` computed accurately, with C99's special values.

IREE 3.13's math transform expands ``math.powf`` into ``exp(y * log(x))`` in the
operands' type on both runners: f64 ``pow`` is up to 1000 ulp off (``pow(2, 1000)`` 308),
f32 130, and ``pow(x, 0)`` is NaN. Each ``stablehlo.power`` of f32 or f64 (of any shape) becomes
an elementwise ``linalg.generic`` of ``BODY`` (arith and math ops that vectorize), in f64
for both (f32 operands are extended, the result truncated):

- ``|x| = 2^k m``, ``m`` in ``[1/sqrt 2, sqrt 2)`` (subnormal ``x`` scaled by ``2^54``
  first), ``f = m - 1`` exactly (Sterbenz);
- ``log(1 + f) = 2 atanh(s) = 2 s + 2/3 s^3 + s^5 R(s^2)``, ``s = f / (2 + f)``, ``|s| <=
  0.1716``: ``s``, ``s^2``, ``2/3 s^3`` and the sums in double-double (exact products by
  ``fma``, Knuth's two-sum), ``R`` the series to ``s^23`` (the rest is below ``2^-64`` of
  the result);
- ``log|x| = k ln2_hi + log(1 + f) + k ln2_lo`` (``k ln2_hi`` exact) as ``L_hi + L_lo``.
  Its largest error is that of ``s^5 R``, at most ``s^4 / 5 <= 2^-12.5`` of ``log(1 + f)``
  and computed with four roundings: ``L`` is within ``2^-63.5`` relative;
- ``t = y L`` as ``t_hi + t_lo`` (``t_lo`` by ``fma``), within ``745 * 2^-63.5 = 2^-54``
  relative for every ``|t| <= 745`` (beyond, the result is 0 or inf): at most 0.5 ulp of
  the result;
- ``pow = exp(t_hi) (1 + t_lo)``, ``exp`` the compiled path's (``f64_math.EXP_BODY``,
  within 1 ulp), the product rounded once by an ``fma`` (0.5 ulp): within 2 ulp of the
  exact value in all;
- C99's special cases selected at the end: ``pow(x, +-0) = 1`` and ``pow(1, y) = 1`` (NaN
  too), ``pow(-1, +-inf) = 1``, NaN otherwise from NaN, the zeros and infinities of ``x``
  and ``y`` by their signs, the sign of ``x`` where ``y`` is an odd integer, NaN for a
  finite negative ``x`` and a finite non-integer ``y``.

An f64 result within 2 f64 ulp is ``2^-28`` of an f32 ulp: f32 results, rounded once more,
are within ``0.5 + 2^-28`` ulp. ``rewriter/iree/exact_math.py``'s f64 ``cbrt``,
``pow(|x|, 1/3)``, gets this ``pow`` too (after it, on the IREE path).
"""

from __future__ import annotations

from typing import Any

from .f64_math import EXP_BODY, EXP_RESULT
from .mlir_walk import operations_where, ranked_result_of, replace_by_template

POWER = "stablehlo.power"

# From %px and %py (f64) to %pw_result (f64); EXP_BODY from %x = t_hi to EXP_RESULT.
_LOG_PRODUCT = """\
  %pw_one = arith.constant 1.0 : f64
  %pw_two = arith.constant 2.0 : f64
  %pw_halfc = arith.constant 0.5 : f64
  %pw_zero = arith.constant 0.0 : f64
  %pw_inf = arith.constant 0x7FF0000000000000 : f64
  %pw_nan = arith.constant 0x7FF8000000000000 : f64
  %pw_sqrt2 = arith.constant 1.4142135623730951 : f64
  %pw_tiny = arith.constant 2.2250738585072014E-308 : f64
  %pw_scale = arith.constant 18014398509481984.0 : f64
  %pw_ln2_hi = arith.constant 6.93147180369123816490E-1 : f64
  %pw_ln2_lo = arith.constant 1.90821492927058770002E-10 : f64
  %pw_c_hi = arith.constant 0.66666666666666663 : f64
  %pw_c_lo = arith.constant 3.7007434154171883E-17 : f64
  %pw_bias = arith.constant 1023 : i64
  %pw_shift = arith.constant 52 : i64
  %pw_mask = arith.constant 4503599627370495 : i64
  %pw_one_bits = arith.constant 4607182418800017408 : i64
  %pw_sub54 = arith.constant 54 : i64
  %pw_i0 = arith.constant 0 : i64
  %pw_i1 = arith.constant 1 : i64
  %pw_ax = math.absf %px : f64
  // |x| = 2^k m, m in [1, 2), subnormals scaled by 2^54 first
  %pw_sub = arith.cmpf olt, %pw_ax, %pw_tiny : f64
  %pw_scaled = arith.mulf %pw_ax, %pw_scale : f64
  %pw_an = arith.select %pw_sub, %pw_scaled, %pw_ax : f64
  %pw_k_sub = arith.select %pw_sub, %pw_sub54, %pw_i0 : i64
  %pw_bits = arith.bitcast %pw_an : f64 to i64
  %pw_eb = arith.shrui %pw_bits, %pw_shift : i64
  %pw_e = arith.subi %pw_eb, %pw_bias : i64
  %pw_k0 = arith.subi %pw_e, %pw_k_sub : i64
  %pw_mb = arith.andi %pw_bits, %pw_mask : i64
  %pw_mo = arith.ori %pw_mb, %pw_one_bits : i64
  %pw_m0 = arith.bitcast %pw_mo : i64 to f64
  // m in [1/sqrt 2, sqrt 2)
  %pw_high = arith.cmpf oge, %pw_m0, %pw_sqrt2 : f64
  %pw_m_half = arith.mulf %pw_m0, %pw_halfc : f64
  %pw_m = arith.select %pw_high, %pw_m_half, %pw_m0 : f64
  %pw_k_up = arith.addi %pw_k0, %pw_i1 : i64
  %pw_k = arith.select %pw_high, %pw_k_up, %pw_k0 : i64
  %pw_kf = arith.sitofp %pw_k : i64 to f64
  %pw_f = arith.subf %pw_m, %pw_one : f64
  // s = f / (2 + f) in double-double
  %pw_d_hi = arith.addf %pw_f, %pw_two : f64
  %pw_d_two = arith.subf %pw_d_hi, %pw_two : f64
  %pw_d_lo = arith.subf %pw_f, %pw_d_two : f64
  %pw_s_hi = arith.divf %pw_f, %pw_d_hi : f64
  %pw_s_neg = arith.negf %pw_s_hi : f64
  %pw_r1 = math.fma %pw_s_neg, %pw_d_hi, %pw_f : f64
  %pw_r2 = math.fma %pw_s_neg, %pw_d_lo, %pw_r1 : f64
  %pw_s_lo = arith.divf %pw_r2, %pw_d_hi : f64
  // s^2 and s^3 in double-double
  %pw_z = arith.mulf %pw_s_hi, %pw_s_hi : f64
  %pw_z_neg = arith.negf %pw_z : f64
  %pw_z_err = math.fma %pw_s_hi, %pw_s_hi, %pw_z_neg : f64
  %pw_z_cross = arith.mulf %pw_s_hi, %pw_s_lo : f64
  %pw_z_lo = math.fma %pw_z_cross, %pw_two, %pw_z_err : f64
  %pw_q_hi = arith.mulf %pw_z, %pw_s_hi : f64
  %pw_q_neg = arith.negf %pw_q_hi : f64
  %pw_q_err = math.fma %pw_z, %pw_s_hi, %pw_q_neg : f64
  %pw_q_a = math.fma %pw_z_lo, %pw_s_hi, %pw_q_err : f64
  %pw_q_lo = math.fma %pw_z, %pw_s_lo, %pw_q_a : f64
  // 2/3 s^3 in double-double
  %pw_t3_hi = arith.mulf %pw_c_hi, %pw_q_hi : f64
  %pw_t3_neg = arith.negf %pw_t3_hi : f64
  %pw_t3_err = math.fma %pw_c_hi, %pw_q_hi, %pw_t3_neg : f64
  %pw_t3_a = math.fma %pw_c_hi, %pw_q_lo, %pw_t3_err : f64
  %pw_t3_lo = math.fma %pw_c_lo, %pw_q_hi, %pw_t3_a : f64
  // s^5 R(s^2), R = 2/5 + 2/7 z + ... + 2/23 z^9
{series}
  %pw_s5_lo = arith.mulf %pw_q_hi, %pw_z_lo : f64
  %pw_s5 = math.fma %pw_q_hi, %pw_z, %pw_s5_lo : f64
  %pw_tail = arith.mulf %pw_s5, %pw_R0 : f64
  // log(1 + f) = 2 s + 2/3 s^3 + tail: (b_hi, b_lo)
  %pw_2s_hi = arith.mulf %pw_s_hi, %pw_two : f64
  %pw_2s_lo = arith.mulf %pw_s_lo, %pw_two : f64
{two_sum_b}
  %pw_b_l1 = arith.addf %pw_b_err, %pw_2s_lo : f64
  %pw_b_l2 = arith.addf %pw_b_l1, %pw_t3_lo : f64
  %pw_b_lo = arith.addf %pw_b_l2, %pw_tail : f64
  // log|x| = k ln2_hi + b + k ln2_lo: (L_hi, L_lo)
  %pw_a = arith.mulf %pw_kf, %pw_ln2_hi : f64
{two_sum_l}
  %pw_kl = arith.mulf %pw_kf, %pw_ln2_lo : f64
  %pw_L_l1 = arith.addf %pw_L_err, %pw_b_lo : f64
  %pw_L_lo0 = arith.addf %pw_L_l1, %pw_kl : f64
{two_sum_n}
  // t = y L: (t_hi, t_lo)
  %x = arith.mulf %py, %pw_L_hi : f64
  %pw_t_neg = arith.negf %x : f64
  %pw_t_err = math.fma %py, %pw_L_hi, %pw_t_neg : f64
  %pw_t_lo = math.fma %py, %pw_L_lo, %pw_t_err : f64
"""

_SPECIAL = """\
  // exp(t_hi) (1 + t_lo); its 0 or inf alone (t_lo may be NaN, or inf t_lo inf)
  %pw_fine = math.fma {exp}, %pw_t_lo, {exp} : f64
  %pw_e_pos = arith.cmpf ogt, {exp}, %pw_zero : f64
  %pw_e_fin = arith.cmpf olt, {exp}, %pw_inf : f64
  %pw_e_in = arith.andi %pw_e_pos, %pw_e_fin : i1
  %pw_core = arith.select %pw_e_in, %pw_fine, {exp} : f64
  %pw_true = arith.constant true
  // C99's special values
  %pw_ay = math.absf %py : f64
  %pw_fy = math.floor %py : f64
  %pw_int = arith.cmpf oeq, %pw_fy, %py : f64
  %pw_hy = arith.mulf %py, %pw_halfc : f64
  %pw_fhy = math.floor %pw_hy : f64
  %pw_even = arith.cmpf oeq, %pw_fhy, %pw_hy : f64
  %pw_not_even = arith.xori %pw_even, %pw_true : i1
  %pw_odd = arith.andi %pw_int, %pw_not_even : i1
  %pw_y_neg = arith.cmpf olt, %py, %pw_zero : f64
  %pw_x_zero = arith.cmpf oeq, %pw_ax, %pw_zero : f64
  %pw_x_inf = arith.cmpf oeq, %pw_ax, %pw_inf : f64
  %pw_y_inf = arith.cmpf oeq, %pw_ay, %pw_inf : f64
  %pw_x_small = arith.cmpf olt, %pw_ax, %pw_one : f64
  %pw_x_unit = arith.cmpf oeq, %pw_ax, %pw_one : f64
  // |x| = 0: inf for y < 0, else 0; |x| = inf: the other way round
  %pw_zero_or_inf = arith.select %pw_y_neg, %pw_inf, %pw_zero : f64
  %pw_inf_or_zero = arith.select %pw_y_neg, %pw_zero, %pw_inf : f64
  %pw_v1 = arith.select %pw_x_zero, %pw_zero_or_inf, %pw_core : f64
  %pw_v2 = arith.select %pw_x_inf, %pw_inf_or_zero, %pw_v1 : f64
  // y = +-inf: 1 for |x| = 1, inf where |x| < 1 and y < 0 or |x| > 1 and y > 0, else 0
  %pw_grows = arith.cmpi eq, %pw_x_small, %pw_y_neg : i1
  %pw_y_inf_v = arith.select %pw_grows, %pw_inf, %pw_zero : f64
  %pw_y_inf_u = arith.select %pw_x_unit, %pw_one, %pw_y_inf_v : f64
  %pw_v3 = arith.select %pw_y_inf, %pw_y_inf_u, %pw_v2 : f64
  // the sign of x where y is an odd integer
  %pw_negated = arith.negf %pw_v3 : f64
  %pw_x_neg = arith.cmpf olt, %px, %pw_zero : f64
  %pw_x_bits = arith.bitcast %px : f64 to i64
  %pw_x_sign = arith.cmpi slt, %pw_x_bits, %pw_i0 : i64
  %pw_flip = arith.andi %pw_x_sign, %pw_odd : i1
  %pw_v4 = arith.select %pw_flip, %pw_negated, %pw_v3 : f64
  // NaN: finite x < 0 with finite non-integer y, or a NaN operand
  %pw_not_int = arith.xori %pw_int, %pw_true : i1
  %pw_y_fin = arith.cmpf olt, %pw_ay, %pw_inf : f64
  %pw_x_fin = arith.cmpf olt, %pw_ax, %pw_inf : f64
  %pw_bad_a = arith.andi %pw_x_neg, %pw_x_fin : i1
  %pw_bad_b = arith.andi %pw_not_int, %pw_y_fin : i1
  %pw_bad = arith.andi %pw_bad_a, %pw_bad_b : i1
  %pw_unordered = arith.cmpf uno, %px, %py : f64
  %pw_nan_case = arith.ori %pw_bad, %pw_unordered : i1
  %pw_v5 = arith.select %pw_nan_case, %pw_nan, %pw_v4 : f64
  // 1 for y = +-0, x = 1, and x = -1 with y = +-inf
  %pw_y_zero = arith.cmpf oeq, %py, %pw_zero : f64
  %pw_x_one = arith.cmpf oeq, %px, %pw_one : f64
  %pw_ones_a = arith.ori %pw_y_zero, %pw_x_one : i1
  %pw_minus_one = arith.andi %pw_x_unit, %pw_y_inf : i1
  %pw_ones = arith.ori %pw_ones_a, %pw_minus_one : i1
  %pw_result = arith.select %pw_ones, %pw_one, %pw_v5 : f64
"""


def _two_sum(a: str, b: str, total: str, error: str) -> str:
    """Knuth's two-sum: ``total + error = a + b`` exactly."""
    return (
        f"  {total} = arith.addf {a}, {b} : f64\n"
        f"  {total}_bb = arith.subf {total}, {a} : f64\n"
        f"  {total}_ab = arith.subf {total}, {total}_bb : f64\n"
        f"  {total}_ea = arith.subf {a}, {total}_ab : f64\n"
        f"  {total}_eb = arith.subf {b}, {total}_bb : f64\n"
        f"  {error} = arith.addf {total}_ea, {total}_eb : f64\n"
    )


def _series() -> str:
    """``%pw_R0 = 2/5 + 2/7 z + ... + 2/23 z^9`` by Horner's rule."""
    lines = []
    denominators = list(range(5, 24, 2))
    for index, denominator in enumerate(denominators):
        lines.append(f"  %pw_rc{index} = arith.constant {2 / denominator!r} : f64")
    last = len(denominators) - 1
    lines.append(f"  %pw_R{last} = arith.addf %pw_rc{last}, %pw_zero : f64")
    for index in range(last - 1, -1, -1):
        lines.append(f"  %pw_R{index} = math.fma %pw_R{index + 1}, %pw_z, %pw_rc{index} : f64")
    return "\n".join(lines)


BODY = (
    _LOG_PRODUCT.format(
        series=_series(),
        two_sum_b=_two_sum("%pw_2s_hi", "%pw_t3_hi", "%pw_b_hi", "%pw_b_err").rstrip("\n"),
        two_sum_l=_two_sum("%pw_a", "%pw_b_hi", "%pw_L_hi0", "%pw_L_err").rstrip("\n"),
        two_sum_n=_two_sum("%pw_L_hi0", "%pw_L_lo0", "%pw_L_hi", "%pw_L_lo").rstrip("\n"),
    )
    + EXP_BODY
    + _SPECIAL.format(exp=EXP_RESULT)
)
RESULT = "%pw_result"


def accurate_power(module: Any) -> int:
    """Rewrite every f32 and f64 ``stablehlo.power`` of the ``iree.compiler.ir``
    module as the module's doc says; return how many."""
    from iree.compiler import ir

    def float_power(operation: Any) -> bool:
        return operation.name == POWER and ranked_result_of(operation, ir.F32Type, ir.F64Type)

    found = operations_where(module, float_power)
    templates: dict[str, Any] = {}
    for operation in found:
        tensor = operation.results[0].type
        kind = str(tensor)
        if kind not in templates:
            element = "f32" if isinstance(tensor.element_type, ir.F32Type) else "f64"
            templates[kind] = ir.Module.parse(_generic(kind, tensor.rank, element))
        replace_by_template(operation, templates[kind])
    return len(found)


def _generic(kind: str, rank: int, element: str) -> str:
    """A function whose body is the ``linalg.generic`` of ``pow`` on ``kind`` tensors,
    cloned at each ``power`` of that type (``replace_by_template``)."""
    dimensions = ", ".join(f"d{i}" for i in range(rank))
    identity = f"affine_map<({dimensions}) -> ({dimensions})>"
    parallel = ", ".join(['"parallel"'] * rank)
    if element == "f64":
        arguments, widen, truncation, narrow = "%px: f64, %py: f64", "", "", RESULT
    else:
        arguments = "%ex: f32, %ey: f32"
        widen = "  %px = arith.extf %ex : f32 to f64\n  %py = arith.extf %ey : f32 to f64\n"
        truncation = f"  %pw_narrow = arith.truncf {RESULT} : f64 to f32\n"
        narrow = "%pw_narrow"
    return (
        f"func.func private @pow(%a: {kind}, %b: {kind}, %init: {kind}) -> {kind} {{\n"
        f"  %result = linalg.generic {{indexing_maps = [{identity}, {identity}, {identity}],"
        f" iterator_types = [{parallel}]}}\n"
        f"      ins(%a, %b : {kind}, {kind}) outs(%init : {kind}) {{\n"
        f"  ^bb0({arguments}, %out: {element}):\n"
        f"{widen}{BODY}{truncation}"
        f"    linalg.yield {narrow} : {element}\n"
        f"  }} -> {kind}\n"
        f"  return %result : {kind}\n"
        "}\n"
    )
