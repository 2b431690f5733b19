"""A ``reduce_window`` with padding over a tensor of dynamic shape, as a pad and no padding.

jax writes a pool with ``padding="SAME"`` (a max pool, an average pool's sum) as a
``stablehlo.reduce_window`` with a ``padding`` attribute. Exported with a symbolic batch
size (``jax.export.symbolic_shape("b, ...")``), its operand has a dynamic dimension, and
IREE 3.13 lowers no such op: "failed to legalize operation 'stablehlo.reduce_window'", on
both paths. Without padding it lowers one of dynamic shape, and it lowers a
``stablehlo.pad`` of one.

Both paths write each ``reduce_window`` of one operand, of dynamic shape, whose ``padding``
is not all zero, whose base dilations are all 1 and whose initial value is the identity of
its body's one op (``unrolled_windows.identity_padding``: 0 with ``add``, ``-inf`` with
``maximum``, ...), as the same ``reduce_window`` without padding over the operand padded by
``stablehlo.pad`` with the initial value, ``padding`` on each side. That is the op's
definition: StableHLO pads the operand with the initial value before it takes the windows,
so the windows and their elements are the same, in the same order; XLA's CPU skips the
padding instead, which the identity makes no different. Static shapes are left to IREE,
which lowers them; ``unrolled_windows`` writes the other windows IREE lowers wrong or not
at all (several operands, an initial value that is not the identity, a dynamic window
that is no pool of NHWC images).
"""

from __future__ import annotations

from typing import Any

from .mlir_walk import operations_named
from .unrolled_windows import identity_padding

REDUCE_WINDOW = "stablehlo.reduce_window"


def explicit_window_padding(module: Any) -> int:
    """Rewrite, in place, every ``reduce_window`` of the ``iree.compiler.ir`` ``module``
    (in its context) that the module's doc names; return how many."""
    from iree.compiler import ir

    count = 0
    for operation in operations_named(module, REDUCE_WINDOW):
        attributes = operation.attributes
        if "padding" not in attributes:
            continue
        padding = [int(edge) for edge in ir.DenseIntElementsAttr(attributes["padding"])]
        if not any(padding):
            continue
        if "base_dilations" in attributes and any(
            dilation != 1 for dilation in ir.DenseI64ArrayAttr(attributes["base_dilations"])
        ):
            continue
        if len(operation.operands) != 2 or not identity_padding(ir, operation):
            continue  # padding combined would change an output: unrolled_windows'
        given, initial = operation.operands
        if ir.RankedTensorType(given.type).has_static_shape:
            continue
        low, high = padding[0::2], padding[1::2]
        with ir.InsertionPoint(operation), operation.location:
            operation.operands[0] = _padded(ir, given, initial, low, high)
        del operation.attributes["padding"]
        count += 1
    return count


def _padded(ir: Any, value: Any, init: Any, low: list[int], high: list[int]) -> Any:
    """``value`` padded with the 0-d tensor ``init``, ``low`` and ``high`` on each side."""
    kind = ir.RankedTensorType(value.type)
    dynamic = ir.ShapedType.get_dynamic_size()
    shape = [
        dynamic if kind.is_dynamic_dim(d) else size + low[d] + high[d]
        for d, size in enumerate(kind.shape)
    ]
    return ir.Operation.create(
        "stablehlo.pad",
        results=[ir.RankedTensorType.get(shape, kind.element_type)],
        operands=[value, init],
        attributes={
            "edge_padding_low": ir.DenseI64ArrayAttr.get(low),
            "edge_padding_high": ir.DenseI64ArrayAttr.get(high),
            "interior_padding": ir.DenseI64ArrayAttr.get([0] * len(low)),
        },
    ).result
