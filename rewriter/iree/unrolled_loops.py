"""While loops of a few counted iterations, unrolled for IREE.

IREE 3.13 turns a ``stablehlo.while`` whose trip count it knows into an ``scf.for``, and
then gives every tensor the loop carries a ``stream.async.transfer`` before the dispatch
that reads it, which becomes a copy of the whole tensor into a new buffer per iteration
(and a new buffer for its result): three doublings of 4M floats in a loop (the
``token_while`` of benchmarks/op_complexity.py) took 14 ms of ``local-sync`` against 4.5
under ``jax.jit``. ``unroll_counted_loops`` writes the body of each such loop out once per
iteration in its place, where IREE fuses the iterations' elementwise ops into one dispatch
and copies nothing.

A loop is counted when one of its carries starts at an integer constant, the condition is
that carry ``LT`` (signed or unsigned) an integer constant and computes nothing else, and
the body returns that carry plus a positive integer constant; it is unrolled when it runs
at most ``MAX_TRIPS`` times and its body, written out that often, holds at most
``MAX_OPS`` ops. The body's ops run in
the same order on the same values as the loop ran them, so the results are the loop's.
"""

from __future__ import annotations

from typing import Any

from ..compile.mlir_walk import constant_attribute, remap_operands

MAX_TRIPS = 8
MAX_OPS = 256  # ops of the body (nested ones included) times the trips
_CONDITION_OPS = ("stablehlo.constant", "stablehlo.compare")


def unroll_counted_loops(module: Any) -> int:
    """Unroll, in the ``iree.compiler.ir`` module, every counted while loop that the
    module's doc allows (inner loops first); return how many."""
    from iree.compiler import ir

    found: list[tuple[Any, int]] = []

    def visit(operation):
        if operation.name == "stablehlo.while":
            trips = trip_count(ir, operation)
            if trips is not None and trips <= MAX_TRIPS:
                if trips * _op_count(operation.regions[1]) <= MAX_OPS:
                    found.append((operation, trips))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.POST_ORDER)
    for operation, trips in found:
        _unroll(ir, operation, trips)
    return len(found)


def trip_count(ir: Any, loop: Any) -> int | None:
    """How many times the ``stablehlo.while`` ``loop`` runs its body, when it is counted
    (module doc); None otherwise."""
    condition = loop.regions[0].blocks[0]
    body = loop.regions[1].blocks[0]
    operations = list(condition.operations)
    if any(o.name not in _CONDITION_OPS for o in operations[:-1]):
        return None
    returned = operations[-1].operands
    compare = _defining(ir, returned[0]) if len(returned) == 1 else None
    if (
        compare is None
        or compare.name != "stablehlo.compare"
        or "LT" not in str(compare.attributes["comparison_direction"])
    ):
        return None
    counter, bound = compare.operands
    if not isinstance(counter, ir.BlockArgument) or counter.owner != condition:
        return None
    index = counter.arg_number
    start = _integer_constant(ir, loop.operands[index])
    end = _integer_constant(ir, bound)
    step_op = _defining(ir, list(body.operations)[-1].operands[index])
    if start is None or end is None or step_op is None or step_op.name != "stablehlo.add":
        return None
    left, right = step_op.operands
    step = None
    if _is_argument(ir, left, body, index):
        step = _integer_constant(ir, right)
    elif _is_argument(ir, right, body, index):
        step = _integer_constant(ir, left)
    if step is None or step <= 0:
        return None
    return max(0, -(-(end - start) // step))


def _is_argument(ir: Any, value: Any, block: Any, index: int) -> bool:
    argument = isinstance(value, ir.BlockArgument)
    return argument and value.owner == block and value.arg_number == index


def _defining(ir: Any, value: Any) -> Any:
    """The op whose result ``value`` is, or None for a block argument."""
    return value.owner.operation if isinstance(value, ir.OpResult) else None


def _integer_constant(ir: Any, value: Any) -> int | None:
    """The integer of a scalar integer ``stablehlo.constant``'s result, or None."""
    owner = _defining(ir, value)
    if owner is None or owner.name != "stablehlo.constant":
        return None
    attribute = constant_attribute(ir, owner)
    if not isinstance(attribute, ir.DenseIntElementsAttr) or not attribute.is_splat:
        return None
    if ir.RankedTensorType(value.type).rank != 0:
        return None
    return int(attribute.get_splat_value().value)


def _op_count(region: Any) -> int:
    count = 0
    for block in region.blocks:
        for operation in block.operations:
            count += 1 + sum(_op_count(inner) for inner in operation.regions)
    return count


def _unroll(ir: Any, loop: Any, trips: int) -> None:
    """Write the body of ``loop`` out ``trips`` times before it, and replace it by the
    values the last copy returns (its operands when ``trips`` is 0)."""
    body = loop.regions[1].blocks[0]
    carried = list(loop.operands)
    point = ir.InsertionPoint(loop)
    for _ in range(trips):
        mapping = dict(zip(body.arguments, carried, strict=True))
        operations = list(body.operations)
        for operation in operations[:-1]:
            copy = operation.clone(point)
            remap_operands(copy, mapping)
            mapping.update(zip(operation.results, copy.results, strict=True))
        carried = [mapping.get(value, value) for value in operations[-1].operands]
    for result, value in zip(loop.results, carried, strict=True):
        result.replace_all_uses_with(value)
    loop.erase()
