"""Reductions over the trailing dimensions of a tensor of rank 3 or more, made 2-D for IREE.

IREE 3.13 tiles a reduction by the dimensions it keeps, and when there are two or more of
them and the reduced size is no multiple of its vector tiles, its code is several times
slower than on the same data seen as a matrix: the softmax of jax's attention over a
4 x 8 x 200 x 200 f32 tensor took 21 ms of CPU, against 3.7 ms for the same softmax on a
6400 x 200 reshape of it and 1.3 ms under ``jax.jit`` (the attention of
benchmarks/shape_sweep.py at 200 tokens was 4x ``jax.jit``). ``flatten_reductions`` gives
each such ``stablehlo.reduce`` (static shapes, the reduced dimensions the last ones) operands
reshaped to (kept elements) x (reduced elements), reduces dimension 1, and reshapes the
results back. A row-major reshape only renames elements: each result element reduces the
same operand elements with the same body (the order of a reduction is unspecified, in
StableHLO as in XLA).
"""

from __future__ import annotations

from math import prod
from typing import Any


def flatten_reductions(module: Any) -> int:
    """Make 2-D every reduce of the ``iree.compiler.ir`` module that the module's doc names;
    return how many were changed."""
    from iree.compiler import ir

    found: list[tuple[Any, list[int], int]] = []

    def visit(operation):
        if operation.name == "stablehlo.reduce":
            shape = _flattened(ir, operation)
            if shape is not None:
                found.append((operation, *shape))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for operation, kept, reduced in found:
        rows = prod(kept)
        inputs = len(operation.results)
        with operation.context, operation.location:
            with ir.InsertionPoint(operation):
                for index in range(inputs):
                    value = operation.operands[index]
                    element = ir.RankedTensorType(value.type).element_type
                    matrix = ir.RankedTensorType.get([rows, reduced], element)
                    operation.operands[index] = _reshape(ir, value, matrix)
            operation.attributes["dimensions"] = ir.DenseI64ArrayAttr.get([1])
            for result in reversed(list(operation.results)):
                original = result.type
                element = ir.RankedTensorType(original).element_type
                result.set_type(ir.RankedTensorType.get([rows], element))
                with ir.InsertionPoint.after(operation):
                    shaped = _reshape(ir, result, original)
                result.replace_all_uses_except(shaped, shaped.owner.operation)
    return len(found)


def _flattened(ir: Any, operation: Any) -> tuple[list[int], int] | None:
    """(kept shape, reduced elements) of a reduce that becomes 2-D, or None."""
    types = [ir.RankedTensorType(value.type) for value in operation.operands]
    inputs = types[: len(operation.results)]
    if not all(t.has_static_shape for t in inputs):
        return None
    shape = list(inputs[0].shape)
    dimensions = sorted(ir.DenseI64ArrayAttr(operation.attributes["dimensions"]))
    rank = len(shape)
    if not dimensions or dimensions != list(range(rank - len(dimensions), rank)):
        return None
    kept = shape[: rank - len(dimensions)]
    if len(kept) < 2 or 0 in shape:
        return None
    return kept, prod(shape[rank - len(dimensions) :])


def _reshape(ir: Any, value: Any, type_: Any) -> Any:
    """``stablehlo.reshape`` of ``value`` to ``type_``, at the current insertion point."""
    return ir.Operation.create("stablehlo.reshape", results=[type_], operands=[value]).result
