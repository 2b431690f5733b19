"""The reverse of a strided slice, written as a strided slice of the reverse.

``x[:, ::-2]`` in jax is a ``stablehlo.slice`` with a stride of 2 and a
``stablehlo.reverse`` of its result. IREE 3.13 fuses the two into one dispatch and then
fails to compile it ("LLVM Translation failed for operation:
builtin.unrealized_conversion_cast"), on the IREE path only; the gradient of a strided
slice or pad of a reversed array has the same pair. The reverse of the operand, then the
slice, IREE compiles.

Both paths write ``reverse(slice(x, start, limit, stride), dims)`` as
``slice(reverse(x, dims), start', limit', stride)``, where along a reversed dimension of
size ``n`` whose slice keeps ``m`` elements, ``start' = n - 1 - (start + (m - 1) stride)``
and ``limit' = n - start``; along the others the slice is the same. Why it is the same
tensor: the slice keeps ``start, start + stride, ..., start + (m - 1) stride`` of ``x``,
which the reverse puts last to first. Index ``i`` of ``x`` is index ``n - 1 - i`` of its
reverse, so those elements, last to first, are its indices ``n - 1 - (start + (m - 1)
stride)`` up to ``n - 1 - start``, ``stride`` apart: the new slice. Elements are moved,
never computed: the values are the same bits.
"""

from __future__ import annotations

from typing import Any

from .mlir_walk import operations_named

REVERSE = "stablehlo.reverse"


def slices_of_reverses(module: Any) -> int:
    """Rewrite, in place, every ``stablehlo.reverse`` of the ``iree.compiler.ir``
    ``module`` (in its context) whose operand is a ``stablehlo.slice`` with a stride over
    1 and static shapes, as the module's doc says; return how many."""
    from iree.compiler import ir

    count = 0
    for operation in operations_named(module, REVERSE):
        operand = operation.operands[0]
        if not isinstance(operand, ir.OpResult) or operand.owner.name != "stablehlo.slice":
            continue
        sliced = operand.owner
        given = ir.RankedTensorType(sliced.operands[0].type)
        kept = ir.RankedTensorType(operand.type)
        if not (given.has_static_shape and kept.has_static_shape) or 0 in kept.shape:
            continue
        attributes = sliced.attributes
        starts = list(ir.DenseI64ArrayAttr(attributes["start_indices"]))
        limits = list(ir.DenseI64ArrayAttr(attributes["limit_indices"]))
        strides = list(ir.DenseI64ArrayAttr(attributes["strides"]))
        if all(stride == 1 for stride in strides):
            continue
        dimensions = list(ir.DenseI64ArrayAttr(operation.attributes["dimensions"]))
        for d in set(dimensions):
            starts[d], limits[d] = reversed_bounds(
                given.shape[d], starts[d], kept.shape[d], strides[d]
            )
        with ir.InsertionPoint(operation), operation.location:
            reversed_given = ir.Operation.create(
                REVERSE,
                results=[given],
                operands=[sliced.operands[0]],
                attributes={"dimensions": operation.attributes["dimensions"]},
            )
            result = ir.Operation.create(
                "stablehlo.slice",
                results=[operation.results[0].type],
                operands=[reversed_given.result],
                attributes={
                    "start_indices": ir.DenseI64ArrayAttr.get(starts),
                    "limit_indices": ir.DenseI64ArrayAttr.get(limits),
                    "strides": ir.DenseI64ArrayAttr.get(strides),
                },
            )
        operation.results[0].replace_all_uses_with(result.result)
        operation.erase()
        count += 1
    return count


def reversed_bounds(size: int, start: int, count: int, stride: int) -> tuple[int, int]:
    """The start and limit, along a dimension of ``size``, of the slice of the reverse that
    keeps what the slice from ``start`` keeping ``count`` elements ``stride`` apart keeps,
    last to first (the module's doc)."""
    last = start + (count - 1) * stride
    return size - 1 - last, size - start
