"""``stablehlo.scatter`` that drops the updates whose window leaves the operand, as XLA does.

XLA skips an update whose window does not lie whole in the operand (its start index below 0
or above ``operand_dim - window_size`` in some dimension); jax relies on it for
``x.at[i].add(v)``, whose default mode drops updates at indices out of range. IREE 3.13's
lowering writes at the index unchecked: on the compiled path the loops wrote past the
result's buffer and corrupted the heap (``x.at[100].add`` of an 8-row array).

Both paths make every such update land where nothing reads it: each operand is padded at the
high end of every dimension an index vector addresses, by that dimension's window size; an
index component out of range is replaced by the dimension's own size, which starts the
window in the padding; the results are sliced back to the operands' shapes.

Soundness: a window is dropped exactly when some component is out of range, and then that
component's window lies in the padding, so the window meets no element of the slice kept;
a window whose components are all in range is where it was, and the padding at the high
end moves no element of the operand. Any combiner (set, add, max, several operands) stays as
it is. Scatters of dynamic shapes, and those whose dimension sizes the index type cannot
hold, are left as they are.
"""

from __future__ import annotations

from typing import Any

from .gather_bounds import component_constant, dimension_numbers
from .mlir_walk import operations_named


def drop_out_of_range_updates(module: Any) -> int:
    """Rewrite, in place, every static ``stablehlo.scatter`` of the ``iree.compiler.ir``
    module (in its context) so that out-of-range updates are dropped; return how many."""
    from iree.compiler import ir

    rewritten = 0
    for scatter in operations_named(module, "stablehlo.scatter"):
        plan = _plan(ir, scatter)
        if plan is None:
            continue
        padding, limits, sizes, vector_dim = plan
        with ir.InsertionPoint(scatter), scatter.location:
            count = len(scatter.results)
            indices = scatter.operands[count]
            scatter.operands[count] = _redirected(ir, indices, limits, sizes, vector_dim)
            for position in range(count):
                scatter.operands[position] = _padded(ir, scatter.operands[position], padding)
        for result in scatter.results:
            _slice_back(ir, scatter, result, padding)
        rewritten += 1
    return rewritten


def _plan(ir, scatter) -> tuple[list[int], list[int], list[int], int] | None:
    """The padding of each operand dimension; for each index component the largest start in
    range and the size that replaces one out of range; the index vector dimension. None to
    leave the scatter as it is."""
    count = len(scatter.results)
    operand = ir.RankedTensorType(scatter.operands[0].type)
    indices = ir.RankedTensorType(scatter.operands[count].type)
    updates = ir.RankedTensorType(scatter.operands[count + 1].type)
    if not all(t.has_static_shape for t in (operand, indices, updates)):
        return None
    if not isinstance(indices.element_type, ir.IntegerType) or 0 in operand.shape:
        return None
    numbers = dimension_numbers(str(scatter.attributes["scatter_dimension_numbers"]))
    whole = set(numbers.get("inserted_window_dims", []) + numbers.get("input_batching_dims", []))
    windowed = [d for d in range(operand.rank) if d not in whole]
    window = [1] * operand.rank
    for d, update_dim in zip(windowed, numbers.get("update_window_dims", []), strict=True):
        window[d] = updates.shape[update_dim]
    addressed = numbers.get("scatter_dims_to_operand_dims", [])
    element = ir.IntegerType(indices.element_type)
    largest = (1 << (element.width - (0 if element.is_unsigned else 1))) - 1
    sizes = [operand.shape[d] for d in addressed]
    if any(size > largest for size in sizes):
        return None
    padding = [window[d] if d in addressed else 0 for d in range(operand.rank)]
    limits = [operand.shape[d] - window[d] for d in addressed]
    return padding, limits, sizes, numbers.get("index_vector_dim", [indices.rank])[0]


def _redirected(ir, indices, limits: list[int], sizes: list[int], vector_dim: int) -> Any:
    """``indices`` with each component outside ``[0, limit]`` replaced by ``size``."""
    indices_type = ir.RankedTensorType(indices.type)
    flags = ir.RankedTensorType.get(indices_type.shape, ir.IntegerType.get_signless(1))

    def constant(values: list[int]) -> Any:
        return component_constant(ir, values, indices_type, vector_dim)

    outside = _compare(ir, indices, constant(limits), "GT", flags)
    if not ir.IntegerType(indices_type.element_type).is_unsigned:
        below = _compare(ir, indices, constant([0] * len(limits)), "LT", flags)
        outside = _create(ir, "stablehlo.or", flags, [outside, below])
    return _create(ir, "stablehlo.select", indices_type, [outside, constant(sizes), indices])


def _padded(ir, operand, padding: list[int]) -> Any:
    operand_type = ir.RankedTensorType(operand.type)
    shape = [size + extra for size, extra in zip(operand_type.shape, padding, strict=True)]
    padded_type = ir.RankedTensorType.get(shape, operand_type.element_type)
    scalar = ir.RankedTensorType.get([], operand_type.element_type)
    zero = ir.Attribute.parse(f"dense<{_zero(ir, operand_type.element_type)}> : {scalar}")
    value = _create(ir, "stablehlo.constant", scalar, [], {"value": zero})
    zeros = [0] * len(padding)
    attributes = {
        "edge_padding_low": ir.DenseI64ArrayAttr.get(zeros),
        "edge_padding_high": ir.DenseI64ArrayAttr.get(padding),
        "interior_padding": ir.DenseI64ArrayAttr.get(zeros),
    }
    return _create(ir, "stablehlo.pad", padded_type, [operand, value], attributes)


def _slice_back(ir, scatter, result, padding: list[int]) -> None:
    """Give ``result`` the padded type and its users the slice of the operand's shape."""
    original = ir.RankedTensorType(result.type)
    shape = [size + extra for size, extra in zip(original.shape, padding, strict=True)]
    with ir.InsertionPoint.after(scatter), scatter.location:
        result.set_type(ir.RankedTensorType.get(shape, original.element_type))
        attributes = {
            "start_indices": ir.DenseI64ArrayAttr.get([0] * original.rank),
            "limit_indices": ir.DenseI64ArrayAttr.get(list(original.shape)),
            "strides": ir.DenseI64ArrayAttr.get([1] * original.rank),
        }
        kept = ir.Operation.create(
            "stablehlo.slice", results=[original], operands=[result], attributes=attributes
        )
    result.replace_all_uses_except(kept.result, kept)


def _zero(ir, element) -> str:
    """Zero of ``element`` as a dense attribute writes it (the padding is never read)."""
    if isinstance(element, ir.IntegerType):
        return "false" if ir.IntegerType(element).width == 1 else "0"
    if isinstance(element, ir.ComplexType):
        return "(0.0, 0.0)"
    return "0.0"


def _compare(ir, left, right, direction: str, type_) -> Any:
    attribute = ir.Attribute.parse(f"#stablehlo<comparison_direction {direction}>")
    return _create(
        ir, "stablehlo.compare", type_, [left, right], {"comparison_direction": attribute}
    )


def _create(ir, name: str, type_, operands: list[Any], attributes: dict | None = None) -> Any:
    return ir.Operation.create(
        name, results=[type_], operands=operands, attributes=attributes or {}
    ).result
