"""f32 and f64 ``arith.maximumf`` and ``arith.minimumf`` as LLVM's ``maximum`` and
``minimum`` intrinsics, so that a max or min reduction is vectorized.

The lowering stage's ``arith-expand`` writes ``maximumf(a, b)`` as two compares and two
selects, which LLVM's loop vectorizer does not take for a reduction ("value that could not
be identified as reduction"): the row maximum of a softmax stayed one element at a time,
the largest part of the module's own loops on an attention block (``perf``: a third of
``rw_entry_main``). ``llvm.intr.maximum`` is the same function (NaN if either is NaN,
``-0.0`` below ``+0.0``), and LLVM vectorizes its reductions (max and min are exact in any
order). It is also ``jax.jit``'s on signed zeros, where the expansion returned its second
operand: ``maximum(+0.0, -0.0)`` was ``-0.0``.
"""

from __future__ import annotations

from . import contexts
from .mlir_walk import operations_where

INTRINSICS = {"arith.maximumf": "llvm.intr.maximum", "arith.minimumf": "llvm.intr.minimum"}
_TYPES = ("f32", "f64")


def intrinsic_extrema(text: str) -> str:
    """``text`` (a bufferized module) with every scalar f32 and f64 ``arith.maximumf`` and
    ``arith.minimumf`` LLVM's intrinsic; unchanged without any."""
    from iree.compiler import ir

    context = contexts.context()
    module = ir.Module.parse(text, context)
    found = operations_where(
        module, lambda op: op.name in INTRINSICS and str(op.results[0].type) in _TYPES
    )
    if not found:
        return text
    with context:
        for operation in found:
            with ir.InsertionPoint(operation):
                replacement = ir.Operation.create(
                    INTRINSICS[operation.name],
                    results=[operation.results[0].type],
                    operands=list(operation.operands),
                    loc=operation.location,
                )
            operation.results[0].replace_all_uses_with(replacement.result)
            operation.erase()
    return module.operation.get_asm(enable_debug_info=True)
