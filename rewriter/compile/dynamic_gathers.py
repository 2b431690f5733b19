"""``stablehlo.dynamic_gather`` that keeps a dynamic dimension whole, as a gather with batching
dimensions.

Exported with a symbolic batch size (``jax.export.symbolic_shape("b, ...")``), jax writes
every numpy-style index of such an array (``x[:, 3]``, ``x[:, 1:5]``, ``x[:, ::-2]``,
``x[:, [0, 2]]``) as a ``stablehlo.dynamic_gather``: its slice along the batch takes the
whole batch, a size only known at run time, so the slice sizes are an operand. IREE 3.13
lowers no ``dynamic_gather`` ("failed to legalize operation 'stablehlo.dynamic_gather'"),
on both paths. It lowers a ``stablehlo.gather`` whose dynamic dimensions are batching
dimensions (``operand_batching_dims``), whose slice sizes are then static.

Both paths write each ``dynamic_gather`` whose start indices are static, which leaves at
least one dynamic operand dimension ``d`` neither indexed (``start_index_map``) nor
collapsed, and whose slice sizes are constants along the other dimensions, as:

1. the operand cut to its first ``slice_sizes[d]`` elements along each such ``d``
   (``stablehlo.real_dynamic_slice``; the whole of it in jax's gathers): a slice along an
   unindexed dimension starts at 0, as StableHLO clamps the start ``0`` into
   ``[0, size - slice_size]``;
2. the start indices clamped into ``[0, size - slice_size]`` along the dimensions they
   index, as StableHLO defines a gather (``gather_bounds.py`` does it for static ones); the
   size read at run time where it is dynamic (``x[:, -1]`` of a sequence of symbolic
   length ``t``, a mask from ``n[:, :1]``), then broadcast along a new leading dimension
   per ``d``, of ``d``'s size;
3. a ``stablehlo.gather`` with each ``d`` an operand batching dimension paired with its
   new leading dimension, slices 1 wide along ``d`` and as before elsewhere; its result
   holds the ``d``s first, then the batch dimensions, then the other offset dimensions;
4. a transpose to the ``dynamic_gather``'s order of dimensions.

A gather along a dynamic dimension whose slice there has a constant size is then a gather
with static slice sizes. Written as one ``real_dynamic_slice`` (``dynamic_slices.py``), a
slice of ``n[:, :1, :1]`` with ``n`` of shape ``(b, t, 1)`` fails on IREE ("failed to
resolve workgroup count hint in terms of workload ordinals": IREE fuses the slice's size,
read from its start and limit vectors, into the dispatch that reads the slice).

Element ``(.., i_d, ..)`` of the result reads the operand at ``i_d`` along ``d`` in both:
the slice along ``d`` starts at 0 and batching pairs index ``i_d`` of the operand with
index ``i_d`` of the result. The other dimensions are gathered as before, from the same
clamped starts: the elements are the same.
"""

from __future__ import annotations

from typing import Any

from .gather_bounds import component_constant, dimension_numbers
from .mlir_walk import (
    constant_elements,
    dimension_size,
    i32_vector,
    joined_vector,
    op_result,
    replace_each,
    vector_element,
)

DYNAMIC_GATHER = "stablehlo.dynamic_gather"


def batched_dynamic_gathers(module: Any) -> int:
    """Rewrite, in place, every ``dynamic_gather`` of the ``iree.compiler.ir`` ``module``
    (in its context) that the module's doc names; return how many."""
    return replace_each(
        module, DYNAMIC_GATHER, _form, lambda ir, gather, form: _batched(ir, gather, *form)
    )


def _form(ir: Any, gather: Any) -> tuple[dict[str, list[int]], list[int], list[int]] | None:
    """The gather's dimension numbers, its batched dimensions (the dynamic ones) and its
    constant slice sizes (0 along the batched ones) when it is one the module's doc names;
    else None."""
    operand = ir.RankedTensorType(gather.operands[0].type)
    indices = ir.RankedTensorType(gather.operands[1].type)
    if not indices.has_static_shape or not isinstance(indices.element_type, ir.IntegerType):
        return None
    numbers = dimension_numbers(str(gather.attributes["dimension_numbers"]))
    if numbers.get("operand_batching_dims") or numbers.get("start_indices_batching_dims"):
        return None
    fixed = set(numbers.get("start_index_map", [])) | set(numbers.get("collapsed_slice_dims", []))
    batched = [d for d in range(operand.rank) if operand.is_dynamic_dim(d) and d not in fixed]
    if not batched:
        return None
    sizes = constant_elements(ir, gather.operands[2], operand.rank)
    if sizes is None or any(sizes[d] is None for d in range(operand.rank) if d not in batched):
        return None
    return numbers, batched, [0 if size is None else size for size in sizes]


def _batched(
    ir: Any, gather: Any, numbers: dict[str, list[int]], batched: list[int], sizes: list[int]
) -> Any:
    """The gather's result, written as the module's doc says at the insertion point."""
    operand_value, indices_value, sizes_value = gather.operands
    operand = ir.RankedTensorType(operand_value.type)
    indices = ir.RankedTensorType(indices_value.type)
    result = ir.RankedTensorType(gather.results[0].type)
    dynamic = ir.ShapedType.get_dynamic_size()

    # 1. the operand cut to the slice sizes along the batched dimensions
    limits = [
        vector_element(ir, sizes_value, d)
        if d in batched
        else dimension_size(ir, operand_value, d)
        if operand.is_dynamic_dim(d)
        else i32_vector(ir, [operand.shape[d]])
        for d in range(operand.rank)
    ]
    cut_type = ir.RankedTensorType.get(operand.shape, operand.element_type)
    cut = op_result(
        ir,
        "stablehlo.real_dynamic_slice",
        cut_type,
        operand_value,
        i32_vector(ir, [0] * operand.rank),
        joined_vector(ir, limits),
        i32_vector(ir, [1] * operand.rank),
    )
    # 2. the start indices clamped, and broadcast along a leading dimension per batched one
    start_map = numbers.get("start_index_map", [])
    vector_dim = numbers.get("index_vector_dim", [0])[0]
    if any(operand.is_dynamic_dim(d) for d in start_map):
        high = _dynamic_highs(ir, operand_value, start_map, sizes, indices, vector_dim)
    else:
        high = component_constant(
            ir, [operand.shape[d] - sizes[d] for d in start_map], indices, vector_dim
        )
    clamped = op_result(
        ir,
        "stablehlo.clamp",
        indices,
        component_constant(ir, [0] * len(start_map), indices, vector_dim),
        indices_value,
        high,
    )
    lead = len(batched)
    spread_shape = [dynamic] * lead + list(indices.shape)
    spread = op_result(
        ir,
        "stablehlo.dynamic_broadcast_in_dim",
        ir.RankedTensorType.get(spread_shape, indices.element_type),
        clamped,
        joined_vector(
            ir,
            [dimension_size(ir, cut, d) for d in batched]
            + [i32_vector(ir, [size]) for size in indices.shape],
        ),
        broadcast_dimensions=ir.DenseI64ArrayAttr.get([lead + d for d in range(indices.rank)]),
    )
    # 3. the gather: batched dimensions first, then the batch, then the offsets
    collapsed = numbers.get("collapsed_slice_dims", [])
    offsets = [d for d in range(operand.rank) if d not in collapsed and d not in batched]
    batch_rank = indices.rank - (1 if vector_dim < indices.rank else 0)
    offset_positions = [lead + batch_rank + k for k in range(len(offsets))]
    attribute = ir.Attribute.parse(
        "#stablehlo.gather<"
        f"offset_dims = {offset_positions}, collapsed_slice_dims = {collapsed}, "
        f"operand_batching_dims = {batched}, "
        f"start_indices_batching_dims = {list(range(lead))}, "
        f"start_index_map = {start_map}, index_vector_dim = {vector_dim + lead}>"
    )
    slice_sizes = [1 if d in batched else sizes[d] for d in range(operand.rank)]
    batch_sizes = [s for k, s in enumerate(indices.shape) if k != vector_dim]
    gathered_shape = [dynamic] * lead + batch_sizes + [slice_sizes[d] for d in offsets]
    gathered = op_result(
        ir,
        "stablehlo.gather",
        ir.RankedTensorType.get(gathered_shape, operand.element_type),
        cut,
        spread,
        dimension_numbers=attribute,
        slice_sizes=ir.DenseI64ArrayAttr.get(slice_sizes),
        indices_are_sorted=ir.BoolAttr.get(False),
    )
    # 4. back to the dynamic_gather's order: its offset dims hold the operand's
    # uncollapsed dimensions in order, its other dims the batch in order
    old_offsets = numbers.get("offset_dims", [])
    uncollapsed = [d for d in range(operand.rank) if d not in collapsed]
    permutation: list[int] = []
    batch_seen = 0
    for position in range(result.rank):
        if position in old_offsets:
            d = uncollapsed[old_offsets.index(position)]
            if d in batched:
                permutation.append(batched.index(d))
            else:
                permutation.append(lead + batch_rank + offsets.index(d))
        else:
            permutation.append(lead + batch_seen)
            batch_seen += 1
    return op_result(
        ir,
        "stablehlo.transpose",
        result,
        gathered,
        permutation=ir.DenseI64ArrayAttr.get(permutation),
    )


def _dynamic_highs(
    ir: Any,
    operand_value: Any,
    start_map: list[int],
    sizes: list[int],
    indices: Any,
    vector_dim: int,
) -> Any:
    """A tensor of ``indices``' type whose index vectors hold, along each dimension ``d``
    of ``start_map``, the largest start there: the operand's size less ``sizes[d]``, read
    at run time where the size is dynamic."""
    operand = ir.RankedTensorType(operand_value.type)
    pieces = [
        op_result(
            ir,
            "stablehlo.subtract",
            ir.RankedTensorType.get([1], ir.IntegerType.get_signless(32)),
            dimension_size(ir, operand_value, d),
            i32_vector(ir, [sizes[d]]),
        )
        if operand.is_dynamic_dim(d)
        else i32_vector(ir, [operand.shape[d] - sizes[d]])
        for d in start_map
    ]
    highs = joined_vector(ir, pieces)
    element = indices.element_type
    if element != ir.IntegerType.get_signless(32):
        kind = ir.RankedTensorType.get([len(start_map)], element)
        highs = op_result(ir, "stablehlo.convert", kind, highs)
    if vector_dim < indices.rank:
        dimensions = [vector_dim]
    else:  # one scalar component per index
        scalar = ir.RankedTensorType.get([], element)
        highs = op_result(ir, "stablehlo.reshape", scalar, highs)
        dimensions = []
    return op_result(
        ir,
        "stablehlo.broadcast_in_dim",
        indices,
        highs,
        broadcast_dimensions=ir.DenseI64ArrayAttr.get(dimensions),
    )
