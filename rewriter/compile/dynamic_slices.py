"""A ``stablehlo.dynamic_gather`` of one slice, as a ``stablehlo.real_dynamic_slice``.

Exported with a symbolic size ``b``, a numpy slice along that dimension (``x[1:]``,
``x[2:-2]``, ``jnp.diff(x)``, a sequence shifted by one) is a ``dynamic_gather`` of one
slice: start indices of one vector (``index_vector_dim`` 0 of a 1-D operand), no collapsed
or batching dimensions, every result dimension an offset dimension, and slice sizes
computed from ``b`` (``b - 1``). IREE 3.13 lowers no ``dynamic_gather`` ("failed to
legalize operation 'stablehlo.dynamic_gather'"), on both paths; ``dynamic_gathers.py``
takes those along static dimensions only.

Both paths write such a gather as StableHLO defines it: along each dimension ``d`` the
start is the index vector's component for ``d`` (``start_index_map``) or 0, clamped into
``[0, size_d - slice_size_d]``; the result is the operand from the starts to the starts
plus the slice sizes, unit strides (``stablehlo.real_dynamic_slice``, which IREE lowers to
``tensor.extract_slice``). Element ``i`` of the result is the operand's element
``start + i`` in both.
"""

from __future__ import annotations

from typing import Any

from .dynamic_gathers import DYNAMIC_GATHER
from .gather_bounds import dimension_numbers
from .mlir_walk import (
    dimension_size,
    i32_vector,
    joined_vector,
    op_result,
    replace_each,
    vector_element,
)


def one_slice_dynamic_gathers(module: Any) -> int:
    """Rewrite, in place, every ``dynamic_gather`` of one slice (the module's doc) of the
    ``iree.compiler.ir`` ``module`` (in its context); return how many."""
    return replace_each(module, DYNAMIC_GATHER, _start_map, _slice)


def _start_map(ir: Any, gather: Any) -> list[int] | None:
    """The gather's ``start_index_map`` when it gathers one slice as the module's doc says;
    else None."""
    operand = ir.RankedTensorType(gather.operands[0].type)
    indices = ir.RankedTensorType(gather.operands[1].type)
    sizes = ir.RankedTensorType(gather.operands[2].type)
    result = ir.RankedTensorType(gather.results[0].type)
    integers = all(
        isinstance(kind.element_type, ir.IntegerType) and kind.element_type.is_signless
        for kind in (indices, sizes)
    )
    if not integers or indices.rank != 1 or not indices.has_static_shape:
        return None
    numbers = dimension_numbers(str(gather.attributes["dimension_numbers"]))
    start_map = numbers.get("start_index_map", [])
    one_slice = (
        numbers.get("index_vector_dim", [0]) == [0]
        and indices.shape[0] == len(start_map)
        and not numbers.get("collapsed_slice_dims")
        and not numbers.get("operand_batching_dims")
        and not numbers.get("start_indices_batching_dims")
        and numbers.get("offset_dims", []) == list(range(operand.rank))
        and result.rank == operand.rank
    )
    return start_map if one_slice else None


def _slice(ir: Any, gather: Any, start_map: list[int]) -> Any:
    """The gather's result, written as the module's doc says at the insertion point."""
    operand_value, indices_value, sizes_value = gather.operands
    operand = ir.RankedTensorType(operand_value.type)
    one = ir.RankedTensorType.get([1], ir.IntegerType.get_signless(32))
    zero = i32_vector(ir, [0])
    starts, limits = [], []
    for d in range(operand.rank):
        size = vector_element(ir, sizes_value, d)
        if d in start_map:
            room = op_result(
                ir, "stablehlo.subtract", one, dimension_size(ir, operand_value, d), size
            )
            wanted = vector_element(ir, indices_value, start_map.index(d))
            start = op_result(ir, "stablehlo.clamp", one, zero, wanted, room)
        else:
            start = zero
        starts.append(start)
        limits.append(op_result(ir, "stablehlo.add", one, start, size))
    return op_result(
        ir,
        "stablehlo.real_dynamic_slice",
        gather.results[0].type,
        operand_value,
        joined_vector(ir, starts),
        joined_vector(ir, limits),
        i32_vector(ir, [1] * operand.rank),
    )
