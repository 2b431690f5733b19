"""``stablehlo.dynamic_update_slice`` of dynamic shape as ``tensor.insert_slice``.

A ``lax.scan`` over the time steps of a ``(b, steps, width)`` array of a symbolic batch
(an RNN) writes each step's output into its stacked results with a
``dynamic_update_slice`` whose operand has the batch's dynamic size. IREE 3.13 lowers it
only when the shapes are static ("failed to legalize operation
'stablehlo.dynamic_update_slice'"), on both paths.

Both paths write such an update, in a function of its own, as StableHLO defines it: each
start index clamped into ``[0, operand size - update size]`` of its dimension, then the
update inserted there (``tensor.insert_slice``, unit strides), the sizes of dynamic
dimensions read with ``tensor.dim``. Taken: start indices of signless integer type, and
elements that are not unsigned integers (which the tensor dialect's ops inside IREE's
input conversion do not take).
"""

from __future__ import annotations

from typing import Any

from .mlir_walk import index_of_scalar, outline_into_functions, size_value

DYNAMIC_UPDATE_SLICE = "stablehlo.dynamic_update_slice"
_PREFIX = "rw_dynamic_update_slice_"


def dynamic_update_slices(module: Any) -> int:
    """Rewrite, in place, the updates the module's doc names of the ``iree.compiler.ir``
    ``module`` (in its context); return how many."""
    return outline_into_functions(module, DYNAMIC_UPDATE_SLICE, _PREFIX, _update_function)


def _update_function(ir: Any, operation: Any, symbol: str) -> str | None:
    """``func.func private @symbol(%operand, %update, %start0, ...)`` computing the update
    ``operation`` as an insertion; None for an update the module's doc does not name."""
    operand = ir.RankedTensorType(operation.operands[0].type)
    update = ir.RankedTensorType(operation.operands[1].type)
    if operand.has_static_shape and update.has_static_shape:
        return None
    element = operand.element_type
    if isinstance(element, ir.IntegerType) and element.is_unsigned:
        return None
    starts = [ir.RankedTensorType(value.type) for value in list(operation.operands)[2:]]
    if len(starts) != operand.rank:
        return None
    for start in starts:
        kind = start.element_type
        if not (isinstance(kind, ir.IntegerType) and kind.is_signless):
            return None
    parameters = [f"%operand: {operand}", f"%update: {update}"]
    parameters += [f"%start{d}: {start}" for d, start in enumerate(starts)]
    lines = [f"func.func private @{symbol}({', '.join(parameters)}) -> {operand} {{"]
    lines.append("  %zero = arith.constant 0 : index")
    offsets, sizes = [], []
    for d, start in enumerate(starts):
        operand_size = size_value(lines, f"operand_size{d}", "operand", operand, d)
        update_size = size_value(lines, f"update_size{d}", "update", update, d)
        index_of_scalar(lines, f"wide{d}", f"start{d}", str(start.element_type))
        lines += [
            f"  %room{d} = arith.subi {operand_size}, {update_size} : index",
            f"  %above{d} = arith.maxsi %wide{d}, %zero : index",
            f"  %at{d} = arith.minsi %above{d}, %room{d} : index",
        ]
        offsets.append(f"%at{d}")
        sizes.append(str(update.shape[d]) if not update.is_dynamic_dim(d) else update_size)
    lines += [
        f"  %updated = tensor.insert_slice %update into %operand[{', '.join(offsets)}] "
        f"[{', '.join(sizes)}] [{', '.join(['1'] * operand.rank)}] : {update} into {operand}",
        f"  return %updated : {operand}",
        "}",
    ]
    return "\n".join(lines)
