"""Cumulative sums of floats that start from their initial value, as XLA's do.

jax writes ``jnp.cumsum`` as a ``reduce_window`` from 0 over a window as long as the axis.
XLA computes every output from the initial value, ``0 + x[0]`` first: in XLA:CPU's
floating-point mode a denormal ``x[0]`` becomes 0, and ``-0.0`` becomes ``+0.0`` (so
``jnp.cumsum(-x)`` of ``x[0] = 0`` starts with ``0.0``). IREE makes the window a scan that
starts from ``x[0]`` itself, which both paths kept: ``-0.0`` and the denormal.

``started_sums`` adds ``+0.0`` to the result of each float cumulative sum from ``+0.0``
(static or dynamic shape, along any axis, reversed too: XLA's ends on the padding's
zeros): every output but those that would have started from ``x[0]`` alone is an add
already, unchanged by it, and those become ``0 + x[0]``'s bits, as does an output that is
``-0.0 + -0.0`` after such a start. It runs after
``identity_folds`` (which would fold that add) and before the fixes that rewrite windows.
"""

from __future__ import annotations

import math
from typing import Any

from .dynamic_scans import cumulative_axis
from .mlir_walk import Splats, one_op_body, op_result, operations_named, ranked_of, splat_value

WINDOW = "stablehlo.reduce_window"


def started_sums(module: Any) -> int:
    """Add ``+0.0`` to every float cumulative sum from ``+0.0`` of the ``iree.compiler.ir``
    ``module`` (in its context), as the module's doc says; return how many."""
    from iree.compiler import ir

    count = 0
    for operation in operations_named(module, WINDOW):
        if not _is_cumulative_sum(ir, operation):
            continue
        result = operation.results[0]
        uses = [(use.owner, use.operand_number) for use in result.uses]
        with ir.InsertionPoint.after(operation), operation.location:
            kind = ir.RankedTensorType(result.type)
            started = op_result(ir, "stablehlo.add", kind, result, Splats(ir, result)(0.0, kind))
        for owner, number in uses:
            owner.operands[number] = started
        count += 1
    return count


def _is_cumulative_sum(ir: Any, operation: Any) -> bool:
    if len(operation.operands) != 2 or len(operation.results) != 1:
        return False
    given = operation.operands[0].type
    if not ranked_of(ir, given):
        return False
    if one_op_body(operation, ("stablehlo.add",)) is None:
        return False
    shaped = ir.RankedTensorType(given)
    forward, backward = (cumulative_axis(ir, operation, shaped, r) for r in (False, True))
    if forward is None and backward is None:
        return False
    return _is_positive_zero(ir, operation.operands[1])


def _is_positive_zero(ir: Any, value: Any) -> bool:
    """Whether ``value`` is a constant ``+0.0`` (through ``broadcast_in_dim``s)."""
    number = splat_value(ir, value)
    return number == 0 and math.copysign(1.0, number) > 0
