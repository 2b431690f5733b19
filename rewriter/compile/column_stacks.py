"""A stack of columns of a tensor of dynamic shape, as a select over an iota.

jax builds the indices of a scatter or a gather of a symbolic batch by concatenating index
columns: with x64 on, ``zeros.at[jnp.arange(b)[:, None], i].add(a)`` concatenates two
``tensor<?x3x1xi64>`` into ``tensor<?x3x2xi64>``. IREE fuses the conversion of ``i`` to
i64 into the dispatch of that concatenation, which then keeps a temporary of the largest
size the batch could have on the stack, and the build failed: "exceeded stack allocation
limit of 32768 bytes for function. Got 216172782113783808 bytes".

``column_stacks`` writes each ``stablehlo.concatenate`` whose result has a dynamic
dimension and whose operands, 2 to 8 of them, are each of size 1 along the concatenated
dimension, as elementwise ops: each operand broadcast to the result's shape along that
dimension (``dynamic_broadcast_in_dim``), an iota along it, and ``select``s that take
element ``j`` along it from operand ``j``. The value is the same: the concatenation's
element at position ``j`` along that dimension is operand ``j``'s only one there, which
the broadcast copies to every position. It runs before ``dynamic_broadcasts``, which
writes those broadcasts as IREE lowers them; the compiled path takes the same ops.
"""

from __future__ import annotations

from typing import Any

from .mlir_walk import dimension_size, i32_vector, joined_vector, op_result, replace_each

CONCATENATE = "stablehlo.concatenate"
MOST_COLUMNS = 8


def column_stacks(module: Any) -> int:
    """Rewrite every stack of columns of the ``iree.compiler.ir`` ``module`` as the module's
    doc says; return how many."""
    return replace_each(module, CONCATENATE, _axis, _stacked_at)


def _axis(ir: Any, operation: Any) -> int | None:
    """The concatenated dimension of a stack of columns (the module's doc), else None."""
    result = ir.RankedTensorType(operation.results[0].type)
    axis = ir.IntegerAttr(operation.attributes["dimension"]).value
    columns = list(operation.operands)
    if result.has_static_shape or not 2 <= len(columns) <= MOST_COLUMNS:
        return None
    if any(ir.RankedTensorType(column.type).shape[axis] != 1 for column in columns):
        return None
    return axis


def _stacked_at(ir: Any, operation: Any, axis: int) -> Any:
    result = ir.RankedTensorType(operation.results[0].type)
    return _stacked(ir, list(operation.operands), result, axis)


def _stacked(ir: Any, columns: list[Any], result: Any, axis: int) -> Any:
    """The concatenation of ``columns`` along ``axis`` (``result``: its type) as selects."""
    i32 = ir.IntegerType.get_signless(32)
    first = ir.RankedTensorType(columns[0].type)
    pieces = []
    for dimension, size in enumerate(first.shape):
        if dimension == axis:
            pieces.append(i32_vector(ir, [len(columns)]))
        elif ir.ShapedType.is_dynamic_size(size):
            pieces.append(dimension_size(ir, columns[0], dimension))
        else:
            pieces.append(i32_vector(ir, [size]))
    shape = joined_vector(ir, pieces)
    every_dimension = ir.DenseI64ArrayAttr.get(list(range(result.rank)))

    def spread(value: Any, kind: Any, dimensions: Any) -> Any:
        return op_result(
            ir,
            "stablehlo.dynamic_broadcast_in_dim",
            kind,
            value,
            shape,
            broadcast_dimensions=dimensions,
        )

    positions_type = ir.RankedTensorType.get(result.shape, i32)
    positions = op_result(
        ir,
        "stablehlo.dynamic_iota",
        positions_type,
        shape,
        iota_dimension=ir.IntegerAttr.get(ir.IntegerType.get_signless(64), axis),
    )
    stacked = spread(columns[-1], result, every_dimension)
    scalar = ir.RankedTensorType.get([], i32)
    for position in reversed(range(len(columns) - 1)):
        number = op_result(
            ir,
            "stablehlo.constant",
            scalar,
            value=ir.DenseElementsAttr.get_splat(scalar, ir.IntegerAttr.get(i32, position)),
        )
        here = op_result(
            ir,
            "stablehlo.compare",
            ir.RankedTensorType.get(result.shape, ir.IntegerType.get_signless(1)),
            positions,
            spread(number, positions_type, ir.DenseI64ArrayAttr.get([])),
            comparison_direction=ir.Attribute.parse("#stablehlo<comparison_direction EQ>"),
        )
        column = spread(columns[position], result, every_dimension)
        stacked = op_result(ir, "stablehlo.select", result, here, column, stacked)
    return stacked
