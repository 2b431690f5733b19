"""A cheap elementwise loop read by several loops is recomputed in each, not written out.

IREE's elementwise fusion (the bufferize stage) fuses a producer into its consumer only when
the consumer is its one user. Attention scales its scores (``scores * 0.25``) and reads the
scaled scores twice, for the row maximum and for the ``exp``: the scaling stayed a loop of
its own that wrote a buffer the size of the scores, and both loops read it back (an f64
attention block at 4 x 128 x 128: 4 MB written and read twice). ``jax.jit`` fuses it.

Here, on the linalg module that IREE's StableHLO input pipeline prints, every all-parallel
``linalg.generic`` of one input and one result whose body is a few ``arith`` ops gets a
copy of its own for each further ``linalg.generic`` that reads its result; each copy then
has one user and fusion puts it into that user's loop. A copy computes what the original
does, the same ops on the same values: the results do not change, bit for bit.
"""

from __future__ import annotations

from typing import Any

from . import contexts
from .library_calls import body_operations, iterator_types
from .mlir_walk import operations_named

# A body this short (its yield included) costs less recomputed than a buffer written to
# memory and read back.
MOST_BODY_OPERATIONS = 4


def _cheap(ir, operation) -> bool:
    """An elementwise loop of one input whose body is a few ``arith`` ops."""
    if len(operation.results) != 1 or len(operation.operands) != 2:
        return False
    if any(kind != "parallel" for kind in iterator_types(operation)):
        return False
    body = body_operations(ir, operation)
    if len(body) > MOST_BODY_OPERATIONS:
        return False
    return all(op.name.startswith("arith.") or op.name == "linalg.yield" for op in body)


def copy_per_user(module: Any) -> int:
    """Give, in place, each further ``linalg.generic`` user of a cheap elementwise
    ``linalg.generic`` of the ``iree.compiler.ir`` ``module`` (in its context) a copy of
    it; return how many copies were made."""
    from iree.compiler import ir

    count = 0
    for operation in operations_named(module, "linalg.generic"):
        if not _cheap(ir, operation):
            continue
        uses = [
            use for use in operation.results[0].uses if use.owner.operation.name == "linalg.generic"
        ]
        for use in uses[1:]:
            with ir.InsertionPoint(operation):
                copy = operation.clone()
            use.owner.operands[use.operand_number] = copy.results[0]
            count += 1
    return count


def recomputed_producers(text: str) -> str:
    """``text`` (linalg on tensors) with ``copy_per_user`` applied; ``text`` itself when it
    changes nothing."""
    if "linalg.generic" not in text:
        return text
    from iree.compiler import ir

    context = contexts.context()
    module = ir.Module.parse(text, context)
    with context:
        if not copy_per_user(module):
            return text
    return module.operation.get_asm(enable_debug_info=True)
