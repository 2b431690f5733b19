"""f64 ``exp`` and ``tanh`` as polynomials that LLVM vectorizes, not scalar libm calls.

IREE's math transform (the generic-form stage) replaces f32 math functions by polynomials
and leaves f64 ones to libm: a loop that calls ``tanh`` or ``exp`` once per element stays
scalar, and on a block of layer norm, GELU and matmuls in f64 libm's ``tanh`` took more CPU
than the BLAS (``perf``: ``__expm1_fma`` 23 %, ``__tanh`` 10 %, ``dgemm`` 24 %). XLA
computes them with its own vectorized approximations. Here every scalar f64 ``math.exp``
and ``math.tanh`` of the bufferized module becomes a call of a private function of the
module written with arith and math ops (``_FUNCTIONS``), with internal linkage, which LLVM
inlines into the loop and vectorizes with the rest of its body.

Both are computed without branches:

- ``exp(x)``: ``x = n ln 2 + r`` with ``n = floor(x / ln 2 + 1/2)`` and ``ln 2`` in two
  parts (Cody and Waite), ``exp(r)`` its Taylor polynomial of degree 13 (no division, which
  held up the loop in a rational form), scaled by ``2^n`` in two factors so that subnormal
  results and ``n = 1024`` come out right; overflow, underflow, infinities and NaN as libm
  gives them.
- ``tanh(x)``: Cephes's (S. L. Moshier, "Methods and Programs for Mathematical Functions",
  1989): ``x + x^3 P(x^2) / Q(x^2)`` below ``|x| = 0.625``, ``1 - 2 / (exp(2|x|) + 1)``
  above, with the sign of ``x`` (``-0.0`` stays ``-0.0``).

Both are within 2 ulp of the exact value (0.85 and 1.35 on a million inputs, where libm's
are within 0.7 and 1.2; jax.jit's agree to a few ulp, but flush subnormal results to zero).

``tests/test_f64_math.py`` checks both on a million inputs and every special value.
"""

from __future__ import annotations

from . import contexts
from .mlir_walk import operations_where

# Scalar f64 math ops replaced, and the function that computes each.
REPLACED = {"math.exp": "rw_math_exp_f64", "math.tanh": "rw_math_tanh_f64"}

# The ops of f64 exp, from the scalar %x to the scalar %v3 (EXP_RESULT), as one body for
# both runners: the compiled path's function below, and rewriter/iree/fast_exp.py's
# elementwise linalg.generic.
EXP_BODY = """\
  %log2e = arith.constant 1.4426950408889634 : f64
  %ln2_hi = arith.constant 6.93145751953125E-1 : f64
  %ln2_lo = arith.constant 1.42860682030941723212E-6 : f64
  %t2 = arith.constant 0.5 : f64
  %t3 = arith.constant 0.16666666666666666 : f64
  %t4 = arith.constant 0.041666666666666664 : f64
  %t5 = arith.constant 0.008333333333333333 : f64
  %t6 = arith.constant 0.001388888888888889 : f64
  %t7 = arith.constant 0.0001984126984126984 : f64
  %t8 = arith.constant 2.48015873015873e-05 : f64
  %t9 = arith.constant 2.7557319223985893e-06 : f64
  %t10 = arith.constant 2.755731922398589e-07 : f64
  %t11 = arith.constant 2.505210838544172e-08 : f64
  %t12 = arith.constant 2.08767569878681e-09 : f64
  %t13 = arith.constant 1.6059043836821613e-10 : f64
  %one = arith.constant 1.0 : f64
  %half = arith.constant 0.5 : f64
  %zero = arith.constant 0.0 : f64
  %inf = arith.constant 0x7FF0000000000000 : f64
  %high = arith.constant 709.782712893384 : f64
  %low = arith.constant -745.1332191019412 : f64
  %clamp_high = arith.constant 710.0 : f64
  %clamp_low = arith.constant -746.0 : f64
  %bias = arith.constant 1023 : i64
  %mantissa_bits = arith.constant 52 : i64
  %c1 = arith.constant 1 : i64
  // clamped first (NaN to a bound) so that n converts to an integer in every case
  %above = arith.maxnumf %x, %clamp_low : f64
  %xc = arith.minnumf %above, %clamp_high : f64
  %scaled = math.fma %xc, %log2e, %half : f64
  %nf = math.floor %scaled : f64
  %minus_n = arith.negf %nf : f64
  %r_hi = math.fma %minus_n, %ln2_hi, %xc : f64
  %r = math.fma %minus_n, %ln2_lo, %r_hi : f64
  // exp(r), |r| <= 0.35: its Taylor polynomial of degree 13 (the rest is below 1e-17)
  %h12 = math.fma %t13, %r, %t12 : f64
  %h11 = math.fma %h12, %r, %t11 : f64
  %h10 = math.fma %h11, %r, %t10 : f64
  %h9 = math.fma %h10, %r, %t9 : f64
  %h8 = math.fma %h9, %r, %t8 : f64
  %h7 = math.fma %h8, %r, %t7 : f64
  %h6 = math.fma %h7, %r, %t6 : f64
  %h5 = math.fma %h6, %r, %t5 : f64
  %h4 = math.fma %h5, %r, %t4 : f64
  %h3 = math.fma %h4, %r, %t3 : f64
  %h2 = math.fma %h3, %r, %t2 : f64
  %h1 = math.fma %h2, %r, %one : f64
  %er = math.fma %h1, %r, %one : f64
  // 2^n as two powers of two, each a normal number for n in [-1077, 1025]
  %n = arith.fptosi %nf : f64 to i64
  %n1 = arith.shrsi %n, %c1 : i64
  %n2 = arith.subi %n, %n1 : i64
  %e1 = arith.addi %n1, %bias : i64
  %e2 = arith.addi %n2, %bias : i64
  %b1 = arith.shli %e1, %mantissa_bits : i64
  %b2 = arith.shli %e2, %mantissa_bits : i64
  %s1 = arith.bitcast %b1 : i64 to f64
  %s2 = arith.bitcast %b2 : i64 to f64
  %once = arith.mulf %er, %s1 : f64
  %value = arith.mulf %once, %s2 : f64
  %over = arith.cmpf ogt, %x, %high : f64
  %under = arith.cmpf olt, %x, %low : f64
  %nan = arith.cmpf uno, %x, %x : f64
  %v1 = arith.select %over, %inf, %value : f64
  %v2 = arith.select %under, %zero, %v1 : f64
  %v3 = arith.select %nan, %x, %v2 : f64
"""
EXP_RESULT = "%v3"

_FUNCTIONS = (
    """\
func.func private @rw_math_exp_f64(%x: f64) -> f64
    attributes {llvm.linkage = #llvm.linkage<internal>} {
"""
    + EXP_BODY
    + f"  return {EXP_RESULT} : f64\n}}\n"
    + """
func.func private @rw_math_tanh_f64(%x: f64) -> f64
    attributes {llvm.linkage = #llvm.linkage<internal>} {
  %p0 = arith.constant -9.64399179425052238628E-1 : f64
  %p1 = arith.constant -9.92877231001918586564E1 : f64
  %p2 = arith.constant -1.61468768441708447952E3 : f64
  %q0 = arith.constant 1.12811678491632931402E2 : f64
  %q1 = arith.constant 2.23548839060100448583E3 : f64
  %q2 = arith.constant 4.84406305325125486048E3 : f64
  %one = arith.constant 1.0 : f64
  %two = arith.constant 2.0 : f64
  %small = arith.constant 0.625 : f64
  %z = math.absf %x : f64
  // |x| < 0.625: z + z^3 P(z^2) / Q(z^2)
  %zz = arith.mulf %z, %z : f64
  %pa = math.fma %p0, %zz, %p1 : f64
  %pb = math.fma %pa, %zz, %p2 : f64
  %qa = arith.addf %zz, %q0 : f64
  %qb = math.fma %qa, %zz, %q1 : f64
  %qc = math.fma %qb, %zz, %q2 : f64
  %rational = arith.divf %pb, %qc : f64
  %zzz = arith.mulf %zz, %z : f64
  %near = math.fma %zzz, %rational, %z : f64
  // above: 1 - 2 / (exp(2 z) + 1)
  %twice = arith.addf %z, %z : f64
  %e = func.call @rw_math_exp_f64(%twice) : (f64) -> f64
  %e1 = arith.addf %e, %one : f64
  %fraction = arith.divf %two, %e1 : f64
  %far = arith.subf %one, %fraction : f64
  %is_near = arith.cmpf olt, %z, %small : f64
  %magnitude = arith.select %is_near, %near, %far : f64
  %signed = math.copysign %magnitude, %x : f64
  return %signed : f64
}
"""
)


def vectorizable_f64_math(text: str) -> str:
    """``text`` (a bufferized module) with every scalar f64 ``math.exp`` and ``math.tanh``
    a call of its polynomial, whose functions are added to the module; unchanged without
    any."""
    from iree.compiler import ir

    context = contexts.context()
    module = ir.Module.parse(text, context)
    found = operations_where(
        module, lambda op: op.name in REPLACED and str(op.results[0].type) == "f64"
    )
    if not found:
        return text
    taken = _symbols(module)
    clashes = sorted(set(REPLACED.values()) & taken)
    if clashes:
        raise ValueError(f"the module already defines {', '.join(clashes)}")
    with context:
        f64 = ir.F64Type.get()
        for operation in found:
            callee = ir.FlatSymbolRefAttr.get(REPLACED[operation.name])
            with ir.InsertionPoint(operation):
                call = ir.Operation.create(
                    "func.call",
                    results=[f64],
                    operands=[operation.operands[0]],
                    attributes={"callee": callee},
                    loc=operation.location,
                )
            operation.results[0].replace_all_uses_with(call.result)
            operation.erase()
        functions = ir.Module.parse(_FUNCTIONS)
        body = module.body
        for function in list(functions.body.operations):
            function.detach_from_parent()
            body.append(function)
    return module.operation.get_asm(enable_debug_info=True)


def _symbols(module) -> set[str]:
    """The names of the symbols at the top of ``module``."""
    names = set()
    for operation in module.body.operations:
        if "sym_name" in operation.attributes:
            names.add(str(operation.attributes["sym_name"]).strip('"'))
    return names
