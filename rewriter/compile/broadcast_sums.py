"""A sum over the dimensions a broadcast spread, as XLA computes it: a multiply by their
count.

XLA's algebraic simplifier writes ``reduce(broadcast(x))`` of an add, when every reduced
dimension is one the broadcast spread, as ``broadcast(x) * N``, N the number of elements
each sum would add (``jax.jit(f).lower(...).compile().as_text()`` shows a
``broadcast_multiply_fusion``). jax writes such sums in gradients: the gradient of a bias
under a mean is the sum over the batch of a broadcast ``1 / n``. Both paths added the
copies one by one, about N / 2 units of roundoff off ``jax.jit`` (a sum of 1,000 copies
of ``x[0]`` of f32 was 6122.7134 where ``jax.jit`` gives ``x[0] * 1000``, 6122.7573).

``broadcast_sums`` makes the same multiply for f32 and f64 of static shapes: each
``stablehlo.reduce`` of one operand, an add from ``+0.0`` or ``-0.0``, whose operand is a
``broadcast_in_dim`` and whose reduced dimensions are each one the broadcast adds or spreads
from size 1 (HLO's broadcast adds dimensions only: jax's spread of a dimension of size 1
reaches XLA as a reshape and a broadcast that adds it). The broadcast's operand, reshaped
without the dimensions of size 1 that are reduced, is broadcast to the reduce's result and
multiplied by N. It runs before the fixes that cut long sums into blocks.
"""

from __future__ import annotations

import math
from typing import Any

from .mlir_walk import one_op_body, op_result, operations_named, ranked_of, splat_value

REDUCE = "stablehlo.reduce"
_BROADCAST = "stablehlo.broadcast_in_dim"


def broadcast_sums(module: Any) -> int:
    """Rewrite, in place, every sum of a broadcast over dimensions it spread in the
    ``iree.compiler.ir`` ``module`` (in its context) as the module's doc says; return how
    many."""
    from iree.compiler import ir

    count = 0
    for operation in operations_named(module, REDUCE):
        spread = _spread_sum(ir, operation)
        if spread is None:
            continue
        broadcast, reduced = spread
        with ir.InsertionPoint(operation), operation.location:
            product = _multiplied(ir, operation, broadcast, reduced)
        operation.results[0].replace_all_uses_with(product)
        operation.erase()
        count += 1
    return count


def _spread_sum(ir: Any, operation: Any) -> tuple[Any, list[int]] | None:
    """The broadcast a float sum of static shape adds up and its reduced dimensions, when
    each of those is one the broadcast spreads; else None."""
    if len(operation.operands) != 2 or len(operation.results) != 1:
        return None
    operand, result = operation.operands[0], operation.results[0].type
    if not ranked_of(ir, result, ("f32", "f64")):
        return None
    if not (ir.RankedTensorType(operand.type).has_static_shape and result.has_static_shape):
        return None
    if one_op_body(operation, ("stablehlo.add",)) is None or not _is_zero(
        ir, operation.operands[1]
    ):
        return None
    if not isinstance(operand, ir.OpResult) or operand.owner.name != _BROADCAST:
        return None
    broadcast = operand.owner
    source = ir.RankedTensorType(broadcast.operands[0].type)
    if not source.has_static_shape:
        return None
    placed = list(ir.DenseI64ArrayAttr(broadcast.attributes["broadcast_dimensions"]))
    reduced = list(ir.DenseI64ArrayAttr(operation.attributes["dimensions"]))
    for dimension in reduced:
        if dimension in placed and source.shape[placed.index(dimension)] != 1:
            return None  # a dimension the broadcast's operand has: its sums add values
    return broadcast, reduced


def _is_zero(ir: Any, value: Any) -> bool:
    """Whether ``value`` is a constant ``+0.0`` or ``-0.0`` (through ``broadcast_in_dim``s):
    the identity XLA takes the initial value of a sum for."""
    return splat_value(ir, value) == 0


def _multiplied(ir: Any, operation: Any, broadcast: Any, reduced: list[int]) -> Any:
    """``broadcast(x) * N`` at the insertion point: x without its reduced dimensions of
    size 1, broadcast to the reduce's result, times the elements each sum adds."""
    result = ir.RankedTensorType(operation.results[0].type)
    source = broadcast.operands[0]
    source_type = ir.RankedTensorType(source.type)
    spread = ir.RankedTensorType(broadcast.results[0].type)
    placed = list(ir.DenseI64ArrayAttr(broadcast.attributes["broadcast_dimensions"]))
    kept = [i for i, dimension in enumerate(placed) if dimension not in reduced]
    if len(kept) < len(placed):  # the reduced dimensions of size 1 it spread: gone
        shape = [source_type.shape[i] for i in kept]
        reshaped = ir.RankedTensorType.get(shape, source_type.element_type)
        source = op_result(ir, "stablehlo.reshape", reshaped, source)
    # a dimension's place in the result: those before it that are not reduced
    places = [placed[i] - sum(1 for r in reduced if r < placed[i]) for i in kept]
    copies = op_result(
        ir,
        _BROADCAST,
        result,
        source,
        broadcast_dimensions=ir.DenseI64ArrayAttr.get(places),
    )
    count = math.prod(spread.shape[dimension] for dimension in reduced)
    number = ir.FloatAttr.get(result.element_type, float(count))
    splat = ir.DenseElementsAttr.get_splat(result, number)
    times = op_result(ir, "stablehlo.constant", result, value=splat)
    return op_result(ir, "stablehlo.multiply", result, copies, times)
