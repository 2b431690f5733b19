"""``stablehlo.scatter`` in the one form IREE's lowering takes.

IREE 3.13 lowers a scatter to ``iree_linalg_ext.scatter``, which writes one element per index
in each dimension the indices address, and has no batching dimensions. Two forms jax writes
fail there, on both paths:

- batching dimensions: ``jax.vmap`` of ``lax.dynamic_update_slice`` ("expected indices to
  be equal to batch rank or batch rank + 1");
- a window wider than one element in a dimension the indices address: the same program, and
  ``lax.scatter`` with such windows ("mismatch in shape of indices and update value").

Each scatter is rewritten, in place, into that form: the index vector last; the updates'
scatter dimensions first, window dimensions after; a batching dimension becomes one more
index component, an ``iota`` along the indices' batching dimension (what StableHLO's own
compatibility expander does); a window of ``w`` elements in an addressed dimension becomes
``w`` updates, one per element, whose index component is the window's start plus the
element's offset.

Soundness: every update element lands where it landed before: element ``j`` of a window
that starts at ``s`` went to ``s + j``, and now its own update starts there; an element of
batch ``b`` went to ``b`` in the batching dimension, and now its index says ``b``. The
combiner sees the same pairs of values. Windows out of range are dropped before
(``scatter_bounds.py``, which runs first, judges the whole window): their start is then the
padding's first element, and every element of the window lies in the padding.
"""

from __future__ import annotations

from typing import Any

from .gather_bounds import dimension_numbers
from .mlir_walk import operations_named


def canonical_scatters(module: Any) -> int:
    """Rewrite, in place, every static ``stablehlo.scatter`` of the ``iree.compiler.ir``
    module (in its context) that has batching dimensions or wide windows in addressed
    dimensions; return how many."""
    from iree.compiler import ir

    rewritten = 0
    for scatter in operations_named(module, "stablehlo.scatter"):
        if _rewrite(ir, scatter):
            rewritten += 1
    return rewritten


def _rewrite(ir, scatter) -> bool:
    count = len(scatter.results)
    operand = ir.RankedTensorType(scatter.operands[0].type)
    indices = scatter.operands[count]
    updates = list(scatter.operands[count + 1 :])
    indices_type = ir.RankedTensorType(indices.type)
    updates_type = ir.RankedTensorType(updates[0].type)
    if not all(t.has_static_shape for t in (operand, indices_type, updates_type)):
        return False
    numbers = dimension_numbers(str(scatter.attributes["scatter_dimension_numbers"]))
    window_dims = numbers.get("update_window_dims", [])
    inserted = list(numbers.get("inserted_window_dims", []))
    batching = numbers.get("input_batching_dims", [])
    indices_batching = numbers.get("scatter_indices_batching_dims", [])
    addressed = list(numbers.get("scatter_dims_to_operand_dims", []))
    vector_dim = numbers.get("index_vector_dim", [0])[0]  # 0 when not printed
    windowed = [d for d in range(operand.rank) if d not in set(inserted) | set(batching)]
    window_of = dict(zip(windowed, window_dims, strict=True))  # operand dim -> update dim
    wide = [d for d in addressed if d in window_of]
    if not batching and not wide:
        return False
    with ir.InsertionPoint(scatter), scatter.location:
        index_dims = [d for d in range(indices_type.rank) if d != vector_dim]
        # indices: [scatter dims..., K]
        if vector_dim == indices_type.rank:
            shape = [*indices_type.shape, 1]
            indices = _op(ir, "stablehlo.reshape", _tensor(ir, shape, indices_type), [indices])
        elif vector_dim != indices_type.rank - 1:
            indices = _transpose(ir, indices, [*index_dims, vector_dim])
        # updates: [scatter dims..., window dims...]
        scatter_dims = [d for d in range(updates_type.rank) if d not in window_dims]
        order = [*scatter_dims, *window_dims]
        updates = [_transpose(ir, u, order) for u in updates]
        batch_rank = len(scatter_dims)
        windows = list(windowed)  # operand dims of the window dims, in order
        for operand_dim, indices_dim in zip(batching, indices_batching, strict=True):
            position = index_dims.index(indices_dim)
            indices = _with_component(ir, indices, _iota(ir, indices, position))
            addressed.append(operand_dim)
            inserted.append(operand_dim)
        for operand_dim in wide:  # its window dim moves to the end of the scatter dims
            source = batch_rank + windows.index(operand_dim)
            width = ir.RankedTensorType(updates[0].type).shape[source]
            updates = [_moved(ir, u, source, batch_rank) for u in updates]
            indices = _spread(ir, indices, batch_rank, width, addressed.index(operand_dim))
            windows.remove(operand_dim)
            inserted.append(operand_dim)
            batch_rank += 1
    scatter.operands[count] = indices
    for position, value in enumerate(updates):
        scatter.operands[count + 1 + position] = value
    final_rank = ir.RankedTensorType(updates[0].type).rank
    attribute = ir.Attribute.parse(
        "#stablehlo.scatter<"
        f"update_window_dims = [{', '.join(map(str, range(batch_rank, final_rank)))}], "
        f"inserted_window_dims = [{', '.join(map(str, sorted(inserted)))}], "
        f"scatter_dims_to_operand_dims = [{', '.join(map(str, addressed))}], "
        f"index_vector_dim = {batch_rank}>"
    )
    scatter.attributes["scatter_dimension_numbers"] = attribute
    if "indices_are_sorted" in scatter.attributes:  # the order of the new indices is another
        scatter.attributes["indices_are_sorted"] = ir.BoolAttr.get(False)
    return True


def _tensor(ir, shape: list[int], like) -> Any:
    return ir.RankedTensorType.get(shape, ir.RankedTensorType(like).element_type)


def _op(ir, name: str, type_, operands: list[Any], attributes: dict | None = None) -> Any:
    return ir.Operation.create(
        name, results=[type_], operands=operands, attributes=attributes or {}
    ).result


def _transpose(ir, value, permutation: list[int]) -> Any:
    if permutation == sorted(permutation):
        return value
    shape = ir.RankedTensorType(value.type).shape
    type_ = _tensor(ir, [shape[d] for d in permutation], value.type)
    attributes = {"permutation": ir.DenseI64ArrayAttr.get(permutation)}
    return _op(ir, "stablehlo.transpose", type_, [value], attributes)


def _moved(ir, value, source: int, target: int) -> Any:
    """``value`` with dimension ``source`` moved to ``target`` (``target <= source``)."""
    rank = ir.RankedTensorType(value.type).rank
    order = [d for d in range(rank) if d != source]
    order.insert(target, source)
    return _transpose(ir, value, order)


def _iota(ir, indices, position: int) -> Any:
    """``[B..., 1]`` counting along batch dimension ``position`` of ``indices [B..., K]``."""
    shape = [*ir.RankedTensorType(indices.type).shape[:-1], 1]
    dimension = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), position)
    return _op(
        ir, "stablehlo.iota", _tensor(ir, shape, indices.type), [], {"iota_dimension": dimension}
    )


def _with_component(ir, indices, component) -> Any:
    """``indices [B..., K]`` with ``component [B..., 1]`` appended to each index vector."""
    shape = ir.RankedTensorType(indices.type).shape
    type_ = _tensor(ir, [*shape[:-1], shape[-1] + 1], indices.type)
    dimension = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), len(shape) - 1)
    return _op(ir, "stablehlo.concatenate", type_, [indices, component], {"dimension": dimension})


def _spread(ir, indices, batch_rank: int, width: int, component: int) -> Any:
    """``indices [B..., K]`` as ``[B..., width, K]``, whose index ``j`` along the new
    dimension adds ``j`` to ``component``."""
    import numpy as np

    shape = ir.RankedTensorType(indices.type).shape
    components = shape[-1]
    spread_type = _tensor(ir, [*shape[:-1], width, components], indices.type)
    same = {"broadcast_dimensions": ir.DenseI64ArrayAttr.get([*range(batch_rank), batch_rank + 1])}
    spread = _op(ir, "stablehlo.broadcast_in_dim", spread_type, [indices], same)
    element = ir.IntegerType(ir.RankedTensorType(indices.type).element_type)
    dtype = np.dtype(f"{'u' if element.is_unsigned else ''}int{element.width}")
    offsets = np.zeros((width, components), dtype)
    offsets[:, component] = np.arange(width)
    offsets_type = _tensor(ir, [width, components], indices.type)
    value = ir.DenseElementsAttr.get(offsets, type=offsets_type)
    constant = _op(ir, "stablehlo.constant", offsets_type, [], {"value": value})
    placed = {"broadcast_dimensions": ir.DenseI64ArrayAttr.get([batch_rank, batch_rank + 1])}
    offsets_spread = _op(ir, "stablehlo.broadcast_in_dim", spread_type, [constant], placed)
    return _op(ir, "stablehlo.add", spread_type, [spread, offsets_spread])
