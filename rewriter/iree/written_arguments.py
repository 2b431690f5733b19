"""Which arguments of a public function IREE may write into: those an in-place op's operand
can be made of.

IREE 3.13 computes some ops in place on an operand's buffer (``IN_PLACE_OPS``); when that
operand is an argument, the dispatch writes into the caller's imported memory (IREE's
"exported I/O buffer views improperly alias with tied ops", iree-org/iree#16168), so
``load`` gives such an argument a copy (``calls.Call``). An argument can only be written
through a value that the in-place op computes in place, and that value is the argument
itself or made from it: ``written_arguments`` follows each such operand back through
every op that made it, to every operand of that op, and marks each argument of a public
function it reaches. That is more than IREE can write (an add's result is a new buffer),
never less. When the walk reaches a value it cannot follow (a block argument of a region
or of a private function, the result of an op with regions), every argument of every
public function counts as written. ``x.at[i].add(v)`` copies ``x`` only, not ``i`` and
``v`` (a third of the copies at 4,096,000 elements).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# StableHLO ops that IREE 3.13 computes in place on their operand's buffer.
IN_PLACE_OPS = frozenset(
    (
        "stablehlo.sort",
        "stablehlo.scatter",
        "stablehlo.dynamic_update_slice",
        "stablehlo.select_and_scatter",
    )
)


def written_arguments(module: Any, functions: Sequence[Any]) -> list[list[int]]:
    """For each public function of ``functions`` (ops of ``module``), the indices of the
    arguments IREE may write into (module doc)."""
    from iree.compiler import ir

    made_of: dict[Any, list[Any] | None] = {}  # an op's result -> its operands (None: has regions)
    computed_in_place: list[Any] = []

    def visit(operation):
        operands = list(operation.operands)
        for result in operation.results:
            made_of[result] = None if len(operation.regions) else operands
        if operation.name in IN_PLACE_OPS:
            computed_in_place.extend(_in_place_operands(operation, operands))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    arguments = {
        argument: (number, index)
        for number, function in enumerate(functions)
        for index, argument in enumerate(function.regions[0].blocks[0].arguments)
    }
    written: list[set[int]] = [set() for _ in functions]
    seen: set[Any] = set()
    pending = list(computed_in_place)
    while pending:
        value = pending.pop()
        if value in seen:
            continue
        seen.add(value)
        operands = made_of.get(value)
        if value in arguments:
            number, index = arguments[value]
            written[number].add(index)
        elif operands is not None:
            pending.extend(operands)
        else:  # a region's or a private function's argument, or an op with regions
            return [list(range(len(f.regions[0].blocks[0].arguments))) for f in functions]
    return [sorted(indices) for indices in written]


def _in_place_operands(operation: Any, operands: list[Any]) -> list[Any]:
    """The operands ``operation`` may compute in place: a scatter's inputs (its first
    operands, one per result) and a dynamic_update_slice's operand; every operand of a sort
    (all are sorted in place) and of anything else."""
    if operation.name == "stablehlo.scatter":
        return operands[: len(operation.results)]
    if operation.name == "stablehlo.dynamic_update_slice":
        return operands[:1]
    return operands
