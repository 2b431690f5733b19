"""f64 ``exp`` of the IREE path as the compiled path's polynomial, which LLVM vectorizes.

IREE 3.13 lowers f64 ``math.exp`` to LLVM's ``llvm.exp.v8f64``, which LLVM has no vector
code for: it becomes eight calls of the embedded libm's scalar ``exp`` (``callq exp`` 64
times in the loop of a softmax), and the softmax of benchmarks/shape_sweep.py's f64
attention was up to twice as slow as ``jax.jit``'s. ``fast_f64_exp`` writes each f64
``stablehlo.exponential`` (of any shape) as an elementwise ``linalg.generic`` whose body is the
compiled path's ``exp`` (``rewriter.compile.f64_math.EXP_BODY``: Cody and Waite's
reduction, a Taylor polynomial of degree 13, the scaling by ``2^n`` in two factors; within
1 ulp with libm's special values), arith and math ops that IREE fuses with the ops around
it and vectorizes. ``tanh`` (``fast_tanh.py``) gets it too, when it runs first.
"""

from __future__ import annotations

from typing import Any

from ..compile.f64_math import EXP_BODY, EXP_RESULT
from ..compile.mlir_walk import operations_where, ranked_result_of, replace_by_template


def fast_f64_exp(module: Any) -> int:
    """Rewrite every f64 ``stablehlo.exponential`` of the ``iree.compiler.ir``
    module as the module's doc says; return how many."""
    from iree.compiler import ir

    def f64_exp(operation: Any) -> bool:
        return operation.name == "stablehlo.exponential" and ranked_result_of(operation, ir.F64Type)

    found = operations_where(module, f64_exp)
    templates: dict[str, Any] = {}
    for operation in found:
        kind = str(operation.results[0].type)
        if kind not in templates:
            templates[kind] = ir.Module.parse(_generic(kind, operation.results[0].type.rank))
        replace_by_template(operation, templates[kind])
    return len(found)


def _generic(kind: str, rank: int) -> str:
    """A function whose body is the ``linalg.generic`` of ``exp`` on a ``kind`` tensor,
    cloned at each ``exponential`` of that type (``replace_by_template``)."""
    dimensions = ", ".join(f"d{i}" for i in range(rank))
    identity = f"affine_map<({dimensions}) -> ({dimensions})>"
    parallel = ", ".join(['"parallel"'] * rank)
    return (
        f"func.func private @exp(%t: {kind}, %init: {kind}) -> {kind} {{\n"
        f"  %r = linalg.generic {{indexing_maps = [{identity}, {identity}],"
        f" iterator_types = [{parallel}]}}\n"
        f"      ins(%t : {kind}) outs(%init : {kind}) {{\n"
        "  ^bb0(%x: f64, %out: f64):\n"
        f"{EXP_BODY}"
        f"    linalg.yield {EXP_RESULT} : f64\n"
        f"  }} -> {kind}\n"
        f"  return %r : {kind}\n"
        "}\n"
    )
