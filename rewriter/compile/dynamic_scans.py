"""Cumulative sums, products, maxima and minima along a static axis of an array of dynamic
shape (``jnp.cumsum(x, axis=1)`` of a symbolic batch) as ``iree_linalg_ext.scan``.

jax writes a cumulative op along an axis of length n as a ``stablehlo.reduce_window``
whose window is n along that axis and 1 along the others, padded before the axis by n - 1
with the op's identity, which is also its initial value. IREE 3.13 makes a scan of such a
window when its shape is static. Of dynamic shape it fails on both paths: "'tensor.empty'
op incorrect number of dynamic sizes" on the IREE path, and, once ``padded_windows`` has
made the padding a pad, "failed to legalize operation 'stablehlo.reduce_window'" on the
compile path.

Both paths write such a window, in a function of its own, as the scan IREE makes of a
static one: an inclusive ``iree_linalg_ext.scan`` along the axis whose accumulator starts
at the identity. Output i along the axis is then the identity combined with elements 0 to
i, one after another: the window's own elements (its padding is identities), combined in
another order than XLA's, which cuts windows into a tree; a sum or product is within the
bound ``tests/test_op_coverage.py`` derives for any order, a maximum or minimum exact.
A sum adds the identity to every output, as XLA's window does (``0.0 + -0.0`` is 0.0),
except along an axis of length 1 (static, or at run time), where XLA drops the window and
gives each element itself (``-0.0``).

Taken: a body of one ``add``, ``multiply``, ``maximum`` or ``minimum`` of its two arguments
with the identity as initial value (0, 1, the least or greatest value of the
type), f32, f64 or signless integer elements (16-bit floats for maxima and minima only:
their sums and products are ``wide_accumulation``'s), no strides or dilations; or a body
of several f32 or f64 ops that ``scalar_bodies`` writes as scalar ops (``logaddexp``, of
``lax.cumlogsumexp``) whose initial value is its identity there (``Combine.identity``).
"""

from __future__ import annotations

import math
from typing import Any

from .mlir_walk import (
    constant_attribute,
    elementwise_lines,
    one_op_body,
    outline_into_functions,
    splat_value,
    tensor_text,
)
from .scalar_bodies import Combine, scalar_body

REDUCE_WINDOW = "stablehlo.reduce_window"
_PREFIX = "rw_dynamic_scan_"
# The body's op: its arith op on floats and on integers.
ARITH = {
    "stablehlo.add": ("arith.addf", "arith.addi"),
    "stablehlo.multiply": ("arith.mulf", "arith.muli"),
    "stablehlo.maximum": ("arith.maximumf", "arith.maxsi"),
    "stablehlo.minimum": ("arith.minimumf", "arith.minsi"),
}
_WIDE_FLOATS = ("f32", "f64")
_WIDENED = ("stablehlo.add", "stablehlo.multiply")  # of 16-bit floats: wide_accumulation's
_ONES = ("window_strides", "base_dilations", "window_dilations")


def dynamic_scans(module: Any) -> int:
    """Rewrite, in place, the cumulative windows of dynamic shape of the ``iree.compiler.ir``
    ``module`` (in its context) that the module's doc names; return how many."""
    return outline_into_functions(module, REDUCE_WINDOW, _PREFIX, _scan_function)


def _scan_function(ir: Any, operation: Any, symbol: str) -> str | None:
    """``func.func private @symbol(%given, %initial)`` computing the cumulative window
    ``operation`` as a scan; None for any other window."""
    if len(operation.operands) != 2 or len(operation.results) != 1:
        return None
    given = ir.RankedTensorType(operation.operands[0].type)
    if given.has_static_shape or operation.results[0].type != given:
        return None
    combine = combine_of(ir, operation, operation.operands[1], given.element_type)
    axis = cumulative_axis(ir, operation, given)
    if combine is None or axis is None:
        return None
    return scan_text(symbol, given, axis, combine)


def combine_of(ir: Any, body: Any, initial: Any, element: Any) -> Combine | None:
    """How a scan combines two ``element``s as ``body`` (a window, or the function a
    custom call names) does: its one ``ARITH`` op, or its ops as scalar ops
    (``scalar_bodies``); None unless ``initial``, the window's padding, is the body's
    identity, which a scan leaves out."""
    op = one_op_body(body, ARITH)
    if op is not None:
        combining = combining_op(ir, op, element)
        if combining is None or not is_identity(ir, initial, op):
            return None
        return Combine.of_op(combining, str(element))
    combine = scalar_body(ir, body)
    value = splat_value(ir, initial) if combine is not None else None
    return (
        combine if combine is not None and value is not None and combine.identity(value) else None
    )


def combining_op(ir: Any, body: str, element: Any) -> str | None:
    """The arith op that combines two ``element``s as the window's ``body`` op does, or
    None for elements the module's doc does not take."""
    if isinstance(element, ir.FloatType):
        if str(element) not in _WIDE_FLOATS and body in _WIDENED:
            return None
        return ARITH[body][0]
    if isinstance(element, ir.IntegerType) and element.is_signless and element.width > 1:
        return ARITH[body][1]
    return None


def cumulative_axis(ir: Any, operation: Any, given: Any, reverse: bool = False) -> int | None:
    """The axis along which ``operation``'s window is cumulative (as long as the axis,
    padded before by its length less one, 1 and unpadded along the others; a window of
    one element is cumulative along an axis of length 1), or None. ``reverse``: padded
    after instead (``lax.cumsum(..., reverse=True)``)."""
    attributes, rank = operation.attributes, given.rank
    for name in _ONES:
        if name in attributes and set(ir.DenseI64ArrayAttr(attributes[name])) != {1}:
            return None
    window = list(ir.DenseI64ArrayAttr(attributes["window_dimensions"]))
    padding = [0] * (2 * rank)
    if "padding" in attributes:
        padding = [int(v) for v in ir.DenseIntElementsAttr(attributes["padding"])]
    long = [d for d in range(rank) if window[d] != 1]
    if not long:  # a cumulative op along an axis of length 1: windows of one element
        long = [d for d in range(rank) if not given.is_dynamic_dim(d) and given.shape[d] == 1]
        long = long[:1]
    if len(long) != 1 or given.is_dynamic_dim(long[0]):
        return None
    axis = long[0]
    expected = [0] * (2 * rank)
    expected[2 * axis + reverse] = given.shape[axis] - 1
    return axis if window[axis] == given.shape[axis] and padding == expected else None


def is_identity(ir: Any, value: Any, body: str) -> bool:
    """Whether ``value`` is a constant (through ``broadcast_in_dim``s, as jax writes a
    window's initial value) that is the identity of ``body``'s op."""
    while isinstance(value, ir.OpResult) and value.owner.name == "stablehlo.broadcast_in_dim":
        value = value.owner.operands[0]
    if not isinstance(value, ir.OpResult) or value.owner.name != "stablehlo.constant":
        return False
    found = constant_attribute(ir, value.owner)
    if found is None:
        return False
    attribute = ir.DenseElementsAttr(found)
    if not attribute.is_splat:
        return False
    splat = attribute.get_splat_value()
    if isinstance(splat, ir.FloatAttr):
        identities = {
            "stablehlo.add": 0.0,
            "stablehlo.multiply": 1.0,
            "stablehlo.maximum": -math.inf,
            "stablehlo.minimum": math.inf,
        }
        return bool(splat.value == identities[body])
    width = ir.IntegerType(splat.type).width
    least, greatest = -(1 << (width - 1)), (1 << (width - 1)) - 1
    identities = {
        "stablehlo.add": 0,
        "stablehlo.multiply": 1,
        "stablehlo.maximum": least,
        "stablehlo.minimum": greatest,
    }
    return ir.IntegerAttr(splat).value == identities[body]


def scan_text(symbol: str, given: Any, axis: int, combine: Combine) -> str:
    """The scan's function: the accumulator of ``given``'s shape without ``axis`` filled
    with the initial value, an inclusive scan along ``axis`` combining with ``combine``."""
    element = given.element_type
    sizes = [None if given.is_dynamic_dim(d) else given.shape[d] for d in range(given.rank)]
    kept = [d for d in range(given.rank) if d != axis]
    initial = f"tensor<{element}>"
    lines = [f"func.func private @{symbol}(%given: {given}, %initial: {initial}) -> {given} {{"]
    dynamic = []
    for d in range(given.rank):
        if sizes[d] is None:
            lines.append(f"  %at{d} = arith.constant {d} : index")
            lines.append(f"  %size{d} = tensor.dim %given, %at{d} : {given}")
            dynamic.append(d)
    accumulator = tensor_text([sizes[d] for d in kept], element)
    kept_sizes = ", ".join(f"%size{d}" for d in dynamic if d != axis)
    lines += [
        f"  %empty = tensor.empty({', '.join(f'%size{d}' for d in dynamic)}) : {given}",
        f"  %empty_accumulator = tensor.empty({kept_sizes}) : {accumulator}",
        f"  %value = tensor.extract %initial[] : {initial}",
        f"  %accumulator = linalg.fill ins(%value : {element}) "
        f"outs(%empty_accumulator : {accumulator}) -> {accumulator}",
        f"  %scanned:2 = iree_linalg_ext.scan dimension({axis}) inclusive(true) "
        f"ins(%given : {given}) outs(%empty, %accumulator : {given}, {accumulator}) {{",
        f"  ^bb0(%element: {element}, %carried: {element}):",
        *combine.lines("%element", "%carried", "%combined", indent="    "),
        f"    iree_linalg_ext.yield %combined : {element}",
        f"  }} -> {given}, {accumulator}",
    ]
    if not combine.adds:
        return "\n".join([*lines, f"  return %scanned#0 : {given}", "}"])
    # The scan's first output is the first element alone: -0.0 where XLA's window gives
    # 0.0 + -0.0 = 0.0. Adding the initial value to every output gives XLA's zeros and
    # changes nothing else. Along an axis of length 1, XLA drops the window and gives
    # the element itself, -0.0 too (``jnp.cumsum`` of ``[-0.0]``).
    if sizes[axis] == 1:
        return "\n".join([*lines, f"  return %scanned#0 : {given}", "}"])
    adding = [f"%yielded = arith.addf %in0, %value : {element}"]
    lines += elementwise_lines("%added", ["%scanned#0"], "%empty", given, adding)
    if sizes[axis] is not None:
        return "\n".join([*lines, f"  return %added : {given}", "}"])
    return "\n".join(
        [
            *lines,
            "  %one = arith.constant 1 : index",
            f"  %alone = arith.cmpi eq, %size{axis}, %one : index",
            f"  %zeros_kept = arith.select %alone, %scanned#0, %added : {given}",
            f"  return %zeros_kept : {given}",
            "}",
        ]
    )
