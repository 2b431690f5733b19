"""Cumulative sums, products and extrema of floats that start from their initial value,
as XLA's do.

jax writes ``jnp.cumsum`` as a ``reduce_window`` from 0 over a window as long as the axis
(``cumprod`` from 1, ``lax.cummax`` from ``-inf``, ``lax.cummin`` from ``+inf``). XLA
computes every output from the initial value, ``0 + x[0]`` first: in XLA:CPU's
floating-point mode a denormal ``x[0]`` becomes 0, and ``-0.0`` becomes ``+0.0`` (so
``jnp.cumsum(-x)`` of ``x[0] = 0`` starts with ``0.0``); ``1 * x[0]``, ``max(-inf, x[0])``
and ``min(inf, x[0])`` make a denormal a zero of its sign. IREE makes the window a scan
that starts from ``x[0]`` itself, which both paths kept: ``-0.0`` and the denormal.

``started_scans`` takes each float cumulative window from its op's identity (static or
dynamic shape, along any axis, reversed too: XLA's ends on the padding):

- a sum from ``+0.0`` gets ``+0.0`` added to its result: every output but those that would
  have started from ``x[0]`` alone is an add already, unchanged by it, and those become
  ``0 + x[0]``'s bits, as does an output that is ``-0.0 + -0.0`` after such a start;
- a product from 1, a maximum from ``-inf`` and a minimum from ``+inf`` get their results'
  denormals made zeros of their sign: ``y + 0.0`` (which flushes one) where that is not 0,
  else ``y * 0.0`` (0 of ``y``'s sign). No other output changes: a product or an extremum
  of XLA's is never denormal, nor ``-0.0`` where ``y + 0.0`` is ``+0.0`` only at zeros.

It runs after ``identity_folds`` (which would fold that add) and before the fixes that
rewrite windows. Not taken: jax's ``dynamic_reduce_window`` call of a cumulative op along
a symbolic axis (``dynamic_window_scans.py``), whose product or extremum keeps a denormal
``x[0]``.
"""

from __future__ import annotations

import math
from typing import Any

from .dynamic_scans import cumulative_axis
from .mlir_walk import Splats, one_op_body, op_result, operations_named, ranked_of, splat_value

WINDOW = "stablehlo.reduce_window"
# A cumulative window's op and the initial value it starts from, which it takes as is
_IDENTITIES = {
    "stablehlo.add": 0.0,
    "stablehlo.multiply": 1.0,
    "stablehlo.maximum": -math.inf,
    "stablehlo.minimum": math.inf,
}


def started_scans(module: Any) -> int:
    """Start every float cumulative sum, product, maximum and minimum from its identity of
    the ``iree.compiler.ir`` ``module`` (in its context), as the module's doc says; return
    how many."""
    from iree.compiler import ir

    count = 0
    for operation in operations_named(module, WINDOW):
        body = _cumulative_op(ir, operation)
        if body is None:
            continue
        result = operation.results[0]
        uses = [(use.owner, use.operand_number) for use in result.uses]
        with ir.InsertionPoint.after(operation), operation.location:
            kind = ir.RankedTensorType(result.type)
            number = Splats(ir, result)
            started = op_result(ir, "stablehlo.add", kind, result, number(0.0, kind))
            if body != "stablehlo.add":
                started = _signed_zeros(ir, result, started, number)
        for owner, number_of_use in uses:
            owner.operands[number_of_use] = started
        count += 1
    return count


def _signed_zeros(ir: Any, result: Any, flushed: Any, number: Any) -> Any:
    """``flushed`` (``result + 0.0``) where it is not 0, else ``result * 0.0``: a zero of
    the result's sign."""
    kind = ir.RankedTensorType(result.type)
    flags = ir.RankedTensorType.get(kind.shape, ir.IntegerType.get_signless(1))
    zero = number(0.0, kind)
    at_zero = op_result(
        ir,
        "stablehlo.compare",
        flags,
        flushed,
        zero,
        comparison_direction=ir.Attribute.parse("#stablehlo<comparison_direction EQ>"),
    )
    signed = op_result(ir, "stablehlo.multiply", kind, result, zero)
    return op_result(ir, "stablehlo.select", kind, at_zero, signed, flushed)


def _cumulative_op(ir: Any, operation: Any) -> str | None:
    """The op of a float cumulative window that starts from that op's identity; else
    None."""
    if len(operation.operands) != 2 or len(operation.results) != 1:
        return None
    given = operation.operands[0].type
    if not ranked_of(ir, given):
        return None
    body = one_op_body(operation, tuple(_IDENTITIES))
    if body is None:
        return None
    shaped = ir.RankedTensorType(given)
    forward, backward = (cumulative_axis(ir, operation, shaped, r) for r in (False, True))
    if forward is None and backward is None:
        return None
    initial = splat_value(ir, operation.operands[1])
    identity = _IDENTITIES[body]
    if initial is None or initial != identity:
        return None
    return body if math.copysign(1.0, initial) == math.copysign(1.0, identity) else None
