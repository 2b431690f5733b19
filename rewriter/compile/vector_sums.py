"""Sums along the innermost loop may be reassociated, so that LLVM vectorizes them.

A ``linalg.generic`` whose innermost loop is a reduction (a softmax's row sum, a layer
norm's mean) adds one element at a time into one scalar: LLVM's loop vectorizer keeps the
order of float additions unless told it may change it ("cannot prove it is safe to reorder
floating-point operations"), so the loop was a chain of dependent scalar adds, 4 cycles
each. Here the ``arith.addf`` that adds into such an output gets ``fastmath<reassoc>``:
LLVM then keeps a vector of partial sums (one per lane and unrolled copy) and adds them up
at the end, as XLA's CPU reductions do. The sum is the same up to rounding, and its error
bound no worse (each partial sum has fewer terms).

Reductions over outer dimensions (``loop_order.py`` moves a parallel dimension innermost)
keep their order: their innermost loop is vectorized across outputs as it is.
"""

from __future__ import annotations

from . import contexts
from .library_calls import body_operations, iterator_types

_TYPES = ("f32", "f64")


def reassociable_sums(text: str) -> str:
    """``text`` (a bufferized module) with the f32 and f64 additions into the outputs of
    innermost reductions marked ``reassoc``; unchanged without any."""
    from iree.compiler import ir

    context = contexts.context()
    module = ir.Module.parse(text, context)
    found = []

    def visit(operation):
        if operation.name == "linalg.generic":
            found.extend(_accumulating_adds(ir, operation))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    if not found:
        return text
    with context:
        flags = ir.Attribute.parse("#arith.fastmath<reassoc>")
        for add in found:
            add.attributes["fastmath"] = flags
    return module.operation.get_asm(enable_debug_info=True)


def _accumulating_adds(ir, operation) -> list:
    """The ``arith.addf`` ops of ``operation``'s body that add into an output's value,
    when its innermost dimension is a reduction."""
    iterators = iterator_types(operation)
    if not iterators or iterators[-1] != "reduction":
        return []
    block = operation.regions[0].blocks[0]
    outputs = len(operation.results) or _output_count(operation)
    first_output = len(block.arguments) - outputs
    accumulators = [block.arguments[i] for i in range(first_output, len(block.arguments))]
    adds = []
    for op in body_operations(ir, operation):
        if op.name != "arith.addf" or str(op.results[0].type) not in _TYPES:
            continue
        if any(operand in accumulators for operand in op.operands):
            adds.append(op)
    return adds


def _output_count(operation) -> int:
    """How many ``outs`` a bufferized ``linalg.generic`` has (it has no results)."""
    sizes = operation.attributes["operandSegmentSizes"]
    return int(str(sizes).rstrip(">").split(",")[-1])
