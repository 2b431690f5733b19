"""Loop order for reductions over outer dimensions, so that the innermost loop is contiguous.

``convert-linalg-to-loops`` nests a ``linalg.generic``'s loops in the order of its
dimensions. A reduction over dimensions that are not the input's last (the mean over the
height and width of an NHWC image: ``(n, c, h, w)`` reading ``x[n, h, w, c]``) then has
an innermost loop that strides through memory and adds into one scalar, which LLVM cannot
vectorize. Moving the parallel dimension that is the input's and the output's last
(``c``) innermost gives ``(n, h, w, c)``: contiguous loads and stores that LLVM vectorizes.

Only parallel dimensions move, and the reduction dimensions keep their order, so every
output element is still summed in the same order: the results do not change, bit for bit.
"""

from __future__ import annotations

from typing import Any

from . import contexts
from .library_calls import body_operations, iterator_types


def contiguous_innermost(text: str) -> str:
    """Reorder the dimensions of every bufferized ``linalg.generic`` whose innermost loop
    is a reduction but whose input and output are contiguous along a parallel dimension."""
    from iree.compiler import ir

    context = contexts.context()
    module = ir.Module.parse(text, context)
    found: list[tuple[Any, list[int]]] = []

    def visit(operation):
        order = _better_order(ir, operation)
        if order:
            found.append((operation, order))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    if not found:
        return text
    with context:
        for operation, order in found:
            _reorder(ir, operation, order)
    return module.operation.get_asm(enable_debug_info=True)


def _iterators(ir, operation) -> list[str]:
    return iterator_types(operation)


def _maps(ir, operation) -> list[Any]:
    return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(operation.attributes["indexing_maps"])]


def _better_order(ir, operation) -> list[int] | None:
    """The new order of the dimensions (new position -> old dimension), or None to keep it."""
    if operation.name != "linalg.generic" or len(operation.results) != 0:
        return None
    if any(not isinstance(value.type, ir.MemRefType) for value in operation.operands):
        return None
    iterators = _iterators(ir, operation)
    if not iterators or iterators[-1] != "reduction" or "parallel" not in iterators:
        return None
    if _uses_indices(ir, operation):
        return None
    maps = _maps(ir, operation)
    last = {_dimension(ir, m.results[-1]) if len(m.results) else None for m in maps}
    if len(last) != 1:
        return None
    (dimension,) = last
    if dimension is None or iterators[dimension] != "parallel":
        return None
    return [d for d in range(len(iterators)) if d != dimension] + [dimension]


def _dimension(ir, expression) -> int | None:
    """The position of a plain dimension expression ``dN``, else None."""
    if isinstance(expression, ir.AffineDimExpr):
        return expression.position
    return None


def _uses_indices(ir, operation) -> bool:
    """Whether the body reads its loop indices (``linalg.index``), which name dimensions."""
    return any(op.name == "linalg.index" for op in body_operations(ir, operation))


def _reorder(ir, operation, order: list[int]) -> None:
    """New dimension i is old dimension order[i]: maps read old dN as new d(position of N)."""
    position = [order.index(old) for old in range(len(order))]
    substitution = ir.AffineMap.get_permutation(position)
    maps = [
        ir.AffineMapAttr.get(
            ir.AffineMap.get(m.n_dims, m.n_symbols, [e.compose(substitution) for e in m.results])
        )
        for m in _maps(ir, operation)
    ]
    iterators = iterator_types(operation)
    reordered = ", ".join(f"#linalg.iterator_type<{iterators[old]}>" for old in order)
    operation.attributes["indexing_maps"] = ir.ArrayAttr.get(maps)
    operation.attributes["iterator_types"] = ir.Attribute.parse(f"[{reordered}]")
