"""jax's shape assertions as checks that stop the call.

A module exported with symbolic sizes (``jax.export.symbolic_shape("b, ...")``) begins
``main`` with ``stablehlo.custom_call @shape_assertion(%holds, %sizes...)`` calls: two
arguments of one symbol must have one size, a constraint (``b >= 2``) must hold, each
with jax's ``error_message``. ``Exported.call`` refuses an input that breaks one. IREE's
input pipeline drops these calls, on both paths: code compiled for equal sizes then read
past the shorter argument (``x + y`` of ``(b,)`` arrays called with 5 and 3 elements), and
``lax.top_k(x, 2)`` under ``b >= 2`` read past a 1-element argument.

Both paths write each assertion as ``cf.assert`` of its predicate with jax's message (each
``{N}`` placeholder, a size jax formats in, written ``?``), the predicate computed by
scalar ops where it can be (``host_scalars.py``: on IREE's host, with no dispatch and no
wait for one): IREE's runtime fails the call
with the message; the compiled code aborts the process. Neither is reached from ``load``
or the C API: both paths run a copy of the predicates first (``shape_checks.py``), and
the compiled path compares the sizes of one dimension variable (``Entry.shared_sizes``);
a broken assertion raises ``ValueError`` or returns ``STATUS_INVALID_ARGUMENT`` there.
"""

from __future__ import annotations

import re
from typing import Any

from .host_scalars import HostScalars
from .mlir_walk import operations_named

SHAPE_ASSERTION = "shape_assertion"


def checked_shape_assertions(module: Any) -> int:
    """Rewrite, in place, every ``@shape_assertion`` call of the ``iree.compiler.ir``
    ``module`` (in its context) as the module's doc says; return how many."""
    from iree.compiler import ir

    count = 0
    for call in operations_named(module, "stablehlo.custom_call"):
        attributes = call.attributes
        if str(attributes["call_target_name"]).strip('"') != SHAPE_ASSERTION:
            continue
        if not call.operands or call.results:
            continue
        holds = call.operands[0]
        kind = ir.RankedTensorType(holds.type)
        if kind.rank != 0 or str(kind.element_type) != "i1":
            continue
        message = "a shape assertion of the export failed"
        if "error_message" in attributes:
            message = re.sub(r"\{\d+\}", "?", ir.StringAttr(attributes["error_message"]).value)
        with ir.InsertionPoint(call), call.location:
            flag = HostScalars(ir).scalar_of(holds)
            if flag is None:
                flag = ir.Operation.create(
                    "tensor.extract", results=[kind.element_type], operands=[holds]
                ).result
            ir.Operation.create(
                "cf.assert", operands=[flag], attributes={"msg": ir.StringAttr.get(message)}
            )
        call.erase()
        count += 1
    return count
