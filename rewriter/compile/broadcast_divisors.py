"""A division by a broadcast value, as XLA computes it: one reciprocal per value, a multiply
per element.

XLA's algebraic simplifier rewrites ``a / broadcast(b)`` of floats into
``a * broadcast(1 / b)`` (``jax.jit(f).lower(...).compile().as_text()`` shows the multiply
and the small divide), unless ``a`` is a constant. A softmax divides by its row sums, a
layer norm by its row deviations, a mean by its count: ``jax.jit`` makes one division a
row and a multiply an element, and its results differ from ``a / b`` in the last bit. The
compiled loops divided every element (``vdivpd``: about 2 cycles an f64 element), and were
a bit off ``jax.jit``'s results. Here every f32 and f64 ``stablehlo.divide`` whose divisor
is a ``broadcast_in_dim`` to more elements, and whose dividend is neither a constant nor a
broadcast of one, becomes that multiply; other types are left (XLA computes bf16 in f32,
and leaves complex divisions). Elementwise fusion puts the reciprocal back into the loop
of the multiply, where LLVM hoists it out of the innermost loop when the divisor does not
change along it (a row's).
"""

from __future__ import annotations

import math
from typing import Any

from .mlir_walk import operations_named

# The element types rewritten: those whose jax.jit code was checked to multiply.
ELEMENT_TYPES = ("f32", "f64")


def _producer(value: Any) -> Any | None:
    """The operation that defines ``value``, None for a block argument."""
    from iree.compiler import ir

    return value.owner if isinstance(value, ir.OpResult) else None


def _is_constant(value: Any) -> bool:
    producer = _producer(value)
    while producer is not None and producer.name == "stablehlo.broadcast_in_dim":
        producer = _producer(producer.operands[0])
    return producer is not None and producer.name == "stablehlo.constant"


def _element_count(shape: list[int]) -> int:
    return math.prod(shape)


def _inverse(number: float, element: Any) -> float:
    """``1 / number`` rounded in ``element`` (f32 or f64), as XLA folds a constant's."""
    import numpy as np

    kind = np.float32 if str(element) == "f32" else np.float64
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        return float(kind(1) / kind(number))


def _reciprocal(ir: Any, source: Any, small: Any) -> Any:
    """``1 / source`` (of type ``small``) at the insertion point: a constant when
    ``source`` is a splat constant, whose reciprocal XLA folds (so that ``constant_chains``
    meets a constant, as XLA's simplifier does), else a division."""
    from .mlir_walk import Splats, op_result, splat_value

    number = splat_value(ir, source)
    if number is not None:
        return Splats(ir, source)(_inverse(number, small.element_type), small)
    return op_result(ir, "stablehlo.divide", small, Splats(ir, source)(1.0, small), source)


def multiply_by_reciprocals(module: Any) -> int:
    """Rewrite, in place, every ``a / broadcast_in_dim(b)`` of f32 or f64 in the
    ``iree.compiler.ir`` ``module`` (in its context) as ``a * broadcast_in_dim(1 / b)``,
    and every ``a / c`` of a splat constant ``c`` as ``a * (1 / c)``; return how many."""
    from iree.compiler import ir

    count = 0
    for operation in operations_named(module, "stablehlo.divide"):
        result = ir.RankedTensorType(operation.results[0].type)
        if str(result.element_type) not in ELEMENT_TYPES or not result.has_static_shape:
            continue
        dividend, divisor = operation.operands[0], operation.operands[1]
        broadcast = _producer(divisor)
        if broadcast is not None and broadcast.name == "stablehlo.constant":
            count += _by_constant(ir, operation, dividend, broadcast, result)
            continue
        if broadcast is None or broadcast.name != "stablehlo.broadcast_in_dim":
            continue
        source = broadcast.operands[0]
        small = ir.RankedTensorType(source.type)
        if not small.has_static_shape or _is_constant(dividend):
            continue
        if _element_count(small.shape) >= _element_count(result.shape):
            continue
        count += 1
        with ir.InsertionPoint(operation), operation.location:
            spread = ir.Operation.create(
                "stablehlo.broadcast_in_dim",
                results=[result],
                operands=[_reciprocal(ir, source, small)],
                attributes={"broadcast_dimensions": broadcast.attributes["broadcast_dimensions"]},
            )
            product = ir.Operation.create(
                "stablehlo.multiply", results=[result], operands=[dividend, spread.result]
            )
        operation.results[0].replace_all_uses_with(product.result)
        operation.erase()
    return count


def _by_constant(ir: Any, operation: Any, dividend: Any, constant: Any, result: Any) -> int:
    """``a / c`` of a splat constant ``c`` (a mean's count, ``x / 2`` of a 0-d ``x``) as
    ``a * (1 / c)``, the reciprocal rounded in the type as XLA folds it: 1, or 0 when
    ``a`` is a constant too or ``c`` is no splat."""
    from .mlir_walk import op_result, splat_value

    if _is_constant(dividend):
        return 0
    number = splat_value(ir, constant.results[0])
    if number is None:
        return 0
    inverse = _inverse(number, result.element_type)
    with ir.InsertionPoint(operation), operation.location:
        attribute = ir.DenseElementsAttr.get_splat(
            result, ir.FloatAttr.get(result.element_type, inverse)
        )
        reciprocal = op_result(ir, "stablehlo.constant", result, value=attribute)
        product = op_result(ir, "stablehlo.multiply", result, dividend, reciprocal)
    operation.results[0].replace_all_uses_with(product)
    operation.erase()
    return 1


DYNAMIC_BROADCAST = "stablehlo.dynamic_broadcast_in_dim"


def multiply_by_dynamic_reciprocals(module: Any) -> int:
    """The same of a divisor that is a ``dynamic_broadcast_in_dim`` (jax's broadcast in a
    module of symbolic shapes: ``x / x.sum(1, keepdims=True)`` of ``symbolic_shape("b,
    1024")``, ``x / 255`` of a symbolic batch), where ``jax.jit``, which compiles each call
    at its own sizes, multiplies by the reciprocal. It runs before ``dynamic_broadcasts``
    writes those broadcasts as IREE lowers them.

    Taken where XLA's simplifier takes it whatever the sizes: a constant divisor (XLA
    multiplies by ``1 / c``, a 0-d division too), or a broadcast that spreads a dimension
    of static size 1, or adds one, to a static size above 1 (so to more elements). Where
    only a dynamic size spreads, the broadcast may copy one element to one, which XLA
    leaves a division; those stay divisions. Returns how many."""
    from iree.compiler import ir

    from .mlir_walk import op_result

    count = 0
    for operation in operations_named(module, "stablehlo.divide"):
        result = ir.RankedTensorType(operation.results[0].type)
        if str(result.element_type) not in ELEMENT_TYPES:
            continue
        dividend, divisor = operation.operands[0], operation.operands[1]
        broadcast = _producer(divisor)
        if broadcast is None or broadcast.name != DYNAMIC_BROADCAST or _is_constant(dividend):
            continue
        source = broadcast.operands[0]
        small = ir.RankedTensorType(source.type)
        dimensions = list(ir.DenseI64ArrayAttr(broadcast.attributes["broadcast_dimensions"]))
        if not (_is_constant(source) or _spreads_statically(small, result, dimensions)):
            continue
        count += 1
        with ir.InsertionPoint(operation), operation.location:
            spread = ir.Operation.create(
                DYNAMIC_BROADCAST,
                results=[result],
                operands=[_reciprocal(ir, source, small), *list(broadcast.operands)[1:]],
                attributes={name: broadcast.attributes[name] for name in broadcast.attributes},
            ).result
            product = op_result(ir, "stablehlo.multiply", result, dividend, spread)
        operation.results[0].replace_all_uses_with(product)
        operation.erase()
    return count


def _spreads_statically(small: Any, result: Any, dimensions: list[int]) -> bool:
    """Whether the broadcast of ``small`` to ``result`` along ``dimensions`` makes a
    dimension of static size above 1 from one of static size 1, or from none."""
    from iree.compiler import ir

    def static_above_one(size: int) -> bool:
        return not ir.ShapedType.is_dynamic_size(size) and size > 1

    for position, size in enumerate(result.shape):
        if not static_above_one(size):
            continue
        if position not in dimensions:
            return True
        if small.shape[dimensions.index(position)] == 1:
            return True
    return False
