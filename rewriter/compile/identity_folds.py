"""XLA's algebraic simplifier's folds that keep an operand's bits: ``x + 0``, ``0 + x`` and
``x - 0`` of floats are ``x``, a reduce that combines nothing is a reshape of its operand,
and a ``reduce_window`` of one-element windows is its operand.

In IEEE arithmetic ``-0.0 + 0.0`` is ``+0.0``, and in XLA:CPU's floating-point mode
(denormals flushed, which both paths run in) a denormal plus zero is 0. XLA computes
neither: its simplifier replaces the add by ``x`` (``A + 0 => A``, ``0 + A => A``,
``A - 0 => A``; the zero a constant or a broadcast of one, ``-0.0`` too), and a reduce
whose result has as many elements as its operand (every reduced dimension of size 1) by a
reshape, taking its initial value for the identity of its body (and a ``reduce_window``
whose windows are each one element, with no stride, dilation or padding, by its operand).
So
``jax.jit(lambda x: x + 0.0)`` and ``jnp.sum`` of a ``(n, 1)`` array along its last axis
keep ``-0.0`` and denormals, where both paths gave ``+0.0`` and 0.

``identity_folds`` makes the same folds in f16, bf16, f32 and f64: adds and subtracts of
static or dynamic shape (a zero of a symbolic shape is jax's ``dynamic_broadcast_in_dim``
of a constant), reduces of one operand (of a symbolic shape as a ``dynamic_reshape``). It
runs before the fixes that rewrite broadcasts and reshapes of dynamic shape.
"""

from __future__ import annotations

from typing import Any

from .mlir_walk import (
    dimension_size,
    fold_each,
    i32_vector,
    joined_vector,
    op_result,
    ranked_of,
    splat_value,
)

ADD, SUBTRACT, REDUCE = "stablehlo.add", "stablehlo.subtract", "stablehlo.reduce"
REDUCE_WINDOW = "stablehlo.reduce_window"
# A window attribute and the value of each of its entries that makes a window of one element
_ONE_ELEMENT = {
    "window_dimensions": 1,
    "window_strides": 1,
    "base_dilations": 1,
    "window_dilations": 1,
}


def identity_folds(module: Any) -> int:
    """Fold, in place, every float ``x + 0``, ``0 + x``, ``x - 0``, reduce of nothing and
    ``reduce_window`` of one-element windows of the ``iree.compiler.ir`` ``module`` (in its
    context) as the module's doc says; return how many."""
    return fold_each(module, (ADD, SUBTRACT, REDUCE, REDUCE_WINDOW), _folded)


def _folded(ir: Any, operation: Any) -> Any:
    """The value ``operation`` folds to (a reshape made at the insertion point for a
    reduce), or None when it is no fold of the module's doc."""
    if len(operation.results) != 1:
        return None
    if operation.name == REDUCE:
        return _reshaped(ir, operation) if _combines_nothing(ir, operation) else None
    if operation.name == REDUCE_WINDOW:
        return operation.operands[0] if _windows_of_one(ir, operation) else None
    result = operation.results[0].type
    if not ranked_of(ir, result):
        return None
    left, right = operation.operands[0], operation.operands[1]
    if _is_zero(ir, right):
        kept = left
    elif operation.name == ADD and _is_zero(ir, left):
        kept = right
    else:
        return None
    return kept if str(kept.type) == str(result) else None


def _windows_of_one(ir: Any, operation: Any) -> bool:
    """Whether a ``reduce_window`` of one float operand takes one element a window, each
    window an element (no stride, dilation or padding): its result is its operand, as
    XLA's simplifier makes it."""
    operand, result = operation.operands[0].type, operation.results[0].type
    if not ranked_of(ir, operand) or str(operand) != str(result):
        return False
    attributes = operation.attributes
    for name, one in _ONE_ELEMENT.items():
        if name in attributes and any(v != one for v in ir.DenseI64ArrayAttr(attributes[name])):
            return False
    if "padding" in attributes:
        padding = ir.DenseIntElementsAttr(attributes["padding"])
        if any(int(v) != 0 for v in padding):
            return False
    return True


def _is_zero(ir: Any, value: Any) -> bool:
    """Whether ``value`` is a constant of zeros (``+0.0`` or ``-0.0``), or a broadcast of
    one, as XLA's ``IsAll(x, 0)`` finds it."""
    return splat_value(ir, value, dynamic=True) == 0


def _combines_nothing(ir: Any, operation: Any) -> bool:
    """Whether a reduce of one float operand reduces only dimensions of size 1: it has as
    many elements as its operand, whatever the sizes of the others."""
    operand, result = operation.operands[0].type, operation.results[0].type
    if not (ranked_of(ir, operand) and ranked_of(ir, result)):
        return False
    shape = ir.RankedTensorType(operand).shape
    return all(shape[dimension] == 1 for dimension in _reduced(ir, operation))


def _reduced(ir: Any, operation: Any) -> list[int]:
    return list(ir.DenseI64ArrayAttr(operation.attributes["dimensions"]))


def _reshaped(ir: Any, operation: Any) -> Any:
    """The reduce's operand reshaped to its result: a ``stablehlo.reshape``, or of a
    dynamic shape a ``dynamic_reshape`` to the operand's sizes but the reduced ones, which
    ``dynamic_reshapes`` writes as a collapse."""
    operand, result = operation.operands[0], operation.results[0].type
    if ir.RankedTensorType(result).has_static_shape:
        return op_result(ir, "stablehlo.reshape", result, operand)
    reduced = set(_reduced(ir, operation))
    shape = ir.RankedTensorType(operand.type).shape
    pieces = [
        dimension_size(ir, operand, dimension)
        if ir.ShapedType.is_dynamic_size(shape[dimension])
        else i32_vector(ir, [shape[dimension]])
        for dimension in range(len(shape))
        if dimension not in reduced
    ]
    sizes = joined_vector(ir, pieces) if len(pieces) > 1 else pieces[0]
    return op_result(ir, "stablehlo.dynamic_reshape", result, operand, sizes)
