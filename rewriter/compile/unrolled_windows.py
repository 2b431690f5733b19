"""A ``reduce_window`` that IREE lowers wrong or not at all, as one strided slice per window
position and the body's ops on whole tensors.

IREE 3.13 ("failed to legalize operation 'stablehlo.reduce_window'", on both paths) lowers
no window over several operands of dynamic shape (an argmax pool, which reduces a value and
its index together: ``lax.reduce_window((x, index), (-inf, 0), body, ...)``, exported with
``symbolic_shape("b, 9, 9, 3")`` or ``"n"`` along the window's own axis), and of one operand
of dynamic shape only a pool of NHWC images (rank 4, the window along the middle two
dimensions): not a moving sum along a symbolic time axis, ``(t, c)`` or ``(n,)``, nor a
``SAME`` pool along that axis, whose padding depends on its length and which jax writes
as a ``@stablehlo.dynamic_reduce_window`` call with the padding an operand. And it
lowers a padded window whose initial value is not its body's identity as StableHLO defines
it, padding combined, where ``jax.jit`` skips the padding (below): ``lax.reduce_window(x,
10.0, lax.add, (3, 3), (1, 1), "SAME")`` of ones is 14 in a corner under ``jax.jit``, 64
in IREE's code.

What ``jax.jit`` computes (XLA's CPU, checked bit for bit with ties and with a
non-commutative body): output ``o`` starts as the initial values, and for each window
position ``k`` in row-major order whose element ``o * stride + k * window_dilation`` of the
padded, base-dilated operands is an operand's element, the accumulators become
``body(accumulators..., elements...)``, the accumulators first. A position in the padding,
or between base-dilated elements, is skipped: XLA does not combine the initial value there
as the StableHLO spec's padding would (a ``SAME`` sum of ones with initial value 10 is 12 at
the edges, not 22). Where the initial value is the body's identity the two agree.

Both paths write each such ``reduce_window`` (``_window``: several operands of which one
or a result is of dynamic shape; one operand of dynamic shape, no NHWC pool; or padding that
is not the identity's, ``identity_padding``), and each ``dynamic_reduce_window`` call whose
window sizes, strides and dilations are constants and whose base dilations are 1
(``_called_window``), at the op, as that loop unrolled over the window's positions, each
step for every output at once:

1. the operands padded by ``stablehlo.pad`` (low, high, and ``base_dilations - 1`` inside)
   with their initial values (a call's by a ``tensor.pad`` of the edges it reads at run
   time), and, when there is any padding, a mask: ``true`` of the operands' shape padded
   likewise with ``false``;
2. per window position ``k``, a ``real_dynamic_slice`` of each padded operand (and of the
   mask) from ``k * window_dilation`` with the window's strides, as many elements as the
   result has: element ``o`` of the slice is element ``o * stride + k * window_dilation`` of
   the padded operand. A count along a dynamic dimension is computed from the padded size
   ``P``, ``max(P - (w - 1) * d - 1 + s, 0) / s`` (none when the window is longer than ``P``);
3. the body's ops, each applied to tensors of the result's shape instead of 0-d tensors:
   an elementwise op on 0-d tensors computes, on whole tensors, the same op at every
   output independently; a constant, and a 0-d value the body reads from outside, is
   broadcast to the result's shape; a ``func.call`` (jax's ``where`` in the body) is its
   function's ops, lifted the same way. The accumulators start as the initial values
   broadcast, and each step's results replace them where the mask's slice is ``true``
   (``stablehlo.select``), everywhere when there is no padding.

Each output then combines the same elements, with the same ops, in the same order as
XLA's loop: a maximum and its index are exact, ties resolved as ``jax.jit`` resolves them.

Taken of those: padding that is not negative, at most ``MOST_POSITIONS`` window
positions (the unrolled loop's length), and a body whose ops are all on 0-d tensors and are
elementwise StableHLO ops (``_ELEMENTWISE``), constants, ``broadcast_in_dim`` or
``reshape`` of a 0-d tensor to itself, or calls of functions of such ops. Any other window
is left as it is.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, cast

from .mlir_walk import (
    Splats,
    constant_elements,
    dimension_size,
    functions_by_name,
    i32_vector,
    joined_vector,
    one_op_body,
    op_result,
    operations_named,
    splat_value,
)

REDUCE_WINDOW = "stablehlo.reduce_window"
CUSTOM_CALL = "stablehlo.custom_call"
DYNAMIC_REDUCE_WINDOW = "stablehlo.dynamic_reduce_window"
MOST_POSITIONS = 64  # window positions (9 for a 3x3 pool): one step of ops each
_DEEPEST_CALL = 8  # calls within calls a body may make
# StableHLO's elementwise ops: on tensors of any shape, element by element.
_ELEMENTWISE = frozenset(
    "stablehlo." + name
    for name in (
        "abs add and atan2 bitcast_convert cbrt ceil clamp compare complex convert cosine "
        "count_leading_zeros divide exponential exponential_minus_one floor imag is_finite "
        "log log_plus_one logistic maximum minimum multiply negate not or popcnt power real "
        "reduce_precision remainder round_nearest_afz round_nearest_even rsqrt select "
        "shift_left shift_right_arithmetic shift_right_logical sign sine sqrt subtract tan "
        "tanh xor"
    ).split()
)
# A body of one of these ops has an identity, which padding with it leaves every output.
_IDENTITIES = tuple(
    f"stablehlo.{name}" for name in ("add", "multiply", "maximum", "minimum", "and", "or")
)
_SAME_VALUE = ("stablehlo.broadcast_in_dim", "stablehlo.reshape")  # of a 0-d tensor to one
_RETURNS = ("stablehlo.return", "func.return")


@dataclass(frozen=True)
class _Window:
    """A window's integer attributes, one per dimension."""

    sizes: list[int]
    strides: list[int]
    base: list[int]  # base_dilations
    dilations: list[int]  # window_dilations
    low: list[int]
    high: list[int]
    body: Any  # the block that combines: the op's region's, or its function's
    padding: Any = None  # a ``dynamic_reduce_window``'s, read at run time (``low``, ``high``: 0)

    @property
    def padded(self) -> bool:
        """Whether it pads the operands: edges, or base dilations."""
        if self.padding is not None:
            return True
        return any(self.low) or any(self.high) or any(b != 1 for b in self.base)


def unrolled_windows(module: Any) -> int:
    """Rewrite, in place, every ``reduce_window`` of the ``iree.compiler.ir`` ``module`` (in
    its context) that the module's doc names; return how many."""
    from iree.compiler import ir

    functions = functions_by_name(module)
    count = 0
    found = [*operations_named(module, REDUCE_WINDOW), *operations_named(module, CUSTOM_CALL)]
    for operation in found:
        if operation.name == CUSTOM_CALL:
            window = _called_window(ir, operation, functions)
        else:
            window = _window(ir, operation, functions)
        if window is None:
            continue
        with ir.InsertionPoint(operation), operation.location:
            results = _unrolled(ir, operation, window, functions)
        for old, new in zip(operation.results, results, strict=True):
            old.replace_all_uses_with(new)
        operation.erase()
        count += 1
    return count


def _window(ir: Any, operation: Any, functions: dict[str, Any]) -> _Window | None:
    """The op's window when it is one the module's doc names; else None."""
    count = len(operation.results)
    rank = _ranks_of(ir, operation, 2 * count)
    if rank is None:
        return None
    attributes = operation.attributes

    def integers(name: str) -> list[int]:
        if name not in attributes:
            return [1] * rank
        return list(ir.DenseI64ArrayAttr(attributes[name]))

    padding = [0] * (2 * rank)
    if "padding" in attributes:
        padding = [int(edge) for edge in ir.DenseIntElementsAttr(attributes["padding"])]
    window = _Window(
        integers("window_dimensions"),
        integers("window_strides"),
        integers("base_dilations"),
        integers("window_dilations"),
        padding[0::2],
        padding[1::2],
        operation.regions[0].blocks[0],
    )
    if min(padding) < 0 or not _unrollable(ir, window, functions):
        return None
    shaped = [*list(operation.operands)[:count], *operation.results]
    dynamic = not all(ir.RankedTensorType(v.type).has_static_shape for v in shaped)
    padded_apart = window.padded and not identity_padding(ir, operation)
    if not (padded_apart or dynamic and (count > 1 or not _pooled_by_iree(window, rank))):
        return None
    return window


def _called_window(ir: Any, call: Any, functions: dict[str, Any]) -> _Window | None:
    """The window of a ``@stablehlo.dynamic_reduce_window`` call whose window sizes,
    strides and dilations are constants, its padding read at run time (jax's ``SAME``
    pool along a symbolic axis); else None. The call's operands are the operands, the
    initial values, then those five."""
    attributes = call.attributes
    if str(attributes["call_target_name"]).strip('"') != DYNAMIC_REDUCE_WINDOW:
        return None
    if "called_computations" not in attributes:
        return None
    computations = ir.ArrayAttr(attributes["called_computations"])
    body = functions.get(ir.FlatSymbolRefAttr(computations[0]).value)
    count = len(call.results)
    rank = _ranks_of(ir, call, 2 * count + 5)
    if len(computations) != 1 or body is None or rank is None:
        return None
    read = [constant_elements(ir, v, rank) for v in list(call.operands)[2 * count : -1]]
    if any(numbers is None or None in numbers for numbers in read):
        return None
    sizes, strides, base, dilations = (cast(list[int], numbers) for numbers in read)
    if any(b != 1 for b in base):
        return None  # a pad at run time has no interior padding (``_padded_at_run_time``)
    nothing = [0] * rank
    window = _Window(
        sizes, strides, base, dilations, nothing, nothing, body.regions[0].blocks[0],
        padding=call.operands[-1],
    )  # fmt: skip
    return window if _unrollable(ir, window, functions) else None


def _ranks_of(ir: Any, operation: Any, operands: int) -> int | None:
    """The rank of the operation's window operands, when it has ``operands`` operands and
    its window operands are ranked tensors of one shape and its results of another; else
    None."""
    count = len(operation.results)
    if count < 1 or len(operation.operands) != operands:
        return None
    shaped = [*list(operation.operands)[:count], *operation.results]
    if not all(isinstance(v.type, ir.RankedTensorType) for v in shaped):
        return None
    kinds = [ir.RankedTensorType(v.type) for v in shaped]
    if any(k.shape != kinds[0].shape for k in kinds[:count]):
        return None  # the operands of one shape, the results of one: the slices'
    if any(k.shape != kinds[count].shape for k in kinds[count:]):
        return None
    return int(kinds[0].rank)


def _unrollable(ir: Any, window: _Window, functions: dict[str, Any]) -> bool:
    """Whether the window's numbers are positive, its positions at most
    ``MOST_POSITIONS`` and its body one that ``_Lifter`` lifts."""
    numbers = [*window.sizes, *window.strides, *window.base, *window.dilations]
    if min(numbers) < 1 or math.prod(window.sizes) > MOST_POSITIONS:
        return False
    return _liftable(ir, window.body, functions, 0)


def _pooled_by_iree(window: _Window, rank: int) -> bool:
    """Whether IREE lowers the window of one operand of dynamic shape: as a pool of NHWC
    images, rank 4 with the window along the middle two dimensions, undilated."""
    if rank != 4 or any(b != 1 for b in window.base) or any(d != 1 for d in window.dilations):
        return False
    return all(window.sizes[d] == window.strides[d] == 1 for d in (0, 3))


def identity_padding(ir: Any, operation: Any) -> bool:
    """Whether the ``reduce_window`` ``operation`` combines one operand with one op of which
    its initial value is the identity (``0`` with ``add``, ``-inf`` with ``maximum``, the
    least integer with an integer ``maximum``, ...): its padding then changes no output,
    whether it is combined, as StableHLO defines it, or skipped, as XLA's CPU does."""
    if len(operation.results) != 1:
        return False
    op = one_op_body(operation, _IDENTITIES)
    if op is None:
        return False
    value = _splat_number(ir, operation.operands[1])
    element = ir.RankedTensorType(operation.operands[1].type).element_type
    if value is None:
        return False
    name = op.removeprefix("stablehlo.")
    if isinstance(element, ir.IntegerType):
        bits = element.width
        signed = bits > 1 and not element.is_unsigned  # i1: false < true
        if not signed:
            value %= 2**bits  # an i1's true may read as -1
        least = -(2 ** (bits - 1)) if signed else 0
        most = 2 ** (bits - 1) - 1 if signed else 2**bits - 1
        every_bit = -1 if signed else 2**bits - 1  # and's identity
        identities = {"add": 0, "multiply": 1, "maximum": least, "minimum": most, "or": 0}
        return value == identities.get(name, every_bit)
    identities = {"add": 0.0, "multiply": 1.0, "maximum": -math.inf, "minimum": math.inf}
    return value == identities.get(name)


def _splat_number(ir: Any, value: Any) -> float | int | None:
    """The number of ``value`` when it is a float or integer splat constant; else None."""
    element = ir.RankedTensorType(value.type).element_type
    if not isinstance(element, ir.IntegerType):
        return splat_value(ir, value)
    while isinstance(value, ir.OpResult) and value.owner.name == "stablehlo.broadcast_in_dim":
        value = value.owner.operands[0]
    if not isinstance(value, ir.OpResult) or value.owner.name != "stablehlo.constant":
        return None
    attribute = ir.DenseElementsAttr(value.owner.attributes["value"])
    return ir.IntegerAttr(attribute.get_splat_value()).value if attribute.is_splat else None


def _liftable(ir: Any, block: Any, functions: dict[str, Any], depth: int) -> bool:
    """Whether every op of ``block`` (a window's body, or a function it calls) is one the
    module's doc lifts to whole tensors, on 0-d tensors only."""
    operations = [op.operation for op in block.operations]
    if not operations or operations[-1].name not in _RETURNS:
        return False
    for op in operations:
        values = [*op.operands, *op.results]
        if op.regions or not all(_scalar(ir, v) for v in values):
            return False
        if op.name in _RETURNS or op.name in _ELEMENTWISE or op.name == "stablehlo.constant":
            continue
        if op.name in _SAME_VALUE and op.operands[0].type == op.results[0].type:
            continue
        if op.name != "func.call" or depth == _DEEPEST_CALL:
            return False
        callee = functions.get(ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
        if callee is None or len(callee.regions[0].blocks) != 1:
            return False
        if not _liftable(ir, callee.regions[0].blocks[0], functions, depth + 1):
            return False
    return True


def _scalar(ir: Any, value: Any) -> bool:
    """Whether ``value`` is a 0-d tensor."""
    return isinstance(value.type, ir.RankedTensorType) and value.type.rank == 0


def _unrolled(ir: Any, operation: Any, window: _Window, functions: dict[str, Any]) -> list[Any]:
    """The op's results, written as the module's doc says at the insertion point."""
    count = len(operation.results)
    operands = list(operation.operands)[:count]
    initials = list(operation.operands)[count : 2 * count]
    results = [ir.RankedTensorType(r.type) for r in operation.results]
    shape = list(results[0].shape)  # ShapedType's dynamic size where dynamic
    padded = [_padded(ir, x, init, window) for x, init in zip(operands, initials, strict=True)]
    mask = None
    if window.padded:
        i1 = ir.IntegerType.get_signless(1)
        flags = ir.RankedTensorType.get(ir.RankedTensorType(operands[0].type).shape, i1)
        scalar = ir.RankedTensorType.get([], i1)
        false = op_result(
            ir,
            "stablehlo.constant",
            scalar,
            value=ir.DenseElementsAttr.get_splat(scalar, ir.IntegerAttr.get(i1, 0)),
        )
        mask = _padded(ir, Splats(ir, operands[0]).integer(1, flags), false, window)
    slicer = _Slicer(ir, padded[0], shape, window)
    positions = itertools.product(*(range(size) for size in window.sizes))
    splats: Splats | None = None
    broadcasts: dict[Any, Any] = {}
    accumulators: list[Any] = []
    for position in positions:
        bounds = slicer.bounds(position)
        parts = [slicer(p, bounds) for p in padded]
        if splats is None:
            splats = Splats(ir, parts[0])
            accumulators = [splats.broadcast(i, r) for i, r in zip(initials, results, strict=True)]
        lifter = _Lifter(ir, shape, splats, broadcasts, functions)
        combined = lifter(window.body, [*accumulators, *parts])
        if mask is None:
            accumulators = combined
            continue
        inside = slicer(mask, bounds)
        accumulators = [
            op_result(ir, "stablehlo.select", new.type, inside, new, old)
            for new, old in zip(combined, accumulators, strict=True)
        ]
    return accumulators


def _padded(ir: Any, value: Any, init: Any, window: _Window) -> Any:
    """``value`` padded with the 0-d tensor ``init`` as the window pads it: low and high
    on each side, ``base_dilations - 1`` between elements; ``value`` when it pads none."""
    if not window.padded:
        return value
    kind = ir.RankedTensorType(value.type)
    dynamic = ir.ShapedType.get_dynamic_size()
    if window.padding is not None:
        return _padded_at_run_time(ir, value, init, window)
    shape = []
    for d, size in enumerate(kind.shape):
        inner = (size - 1) * window.base[d] + 1 if size else 0
        shape.append(dynamic if kind.is_dynamic_dim(d) else window.low[d] + inner + window.high[d])
    return op_result(
        ir,
        "stablehlo.pad",
        ir.RankedTensorType.get(shape, kind.element_type),
        value,
        init,
        edge_padding_low=ir.DenseI64ArrayAttr.get(window.low),
        edge_padding_high=ir.DenseI64ArrayAttr.get(window.high),
        interior_padding=ir.DenseI64ArrayAttr.get([b - 1 for b in window.base]),
    )


def _padded_at_run_time(ir: Any, value: Any, init: Any, window: _Window) -> Any:
    """``value`` padded as ``_padded`` pads it, the low and high edges read from the
    window's ``padding`` (``rank x 2``: low, high) at run time: a ``tensor.pad`` of index
    edges (both pipelines lower it; neither lowers ``stablehlo.dynamic_pad``)."""
    kind = ir.RankedTensorType(value.type)
    index = ir.IndexType.get()
    table = ir.RankedTensorType(window.padding.type)
    edges: list[list[Any]] = [[], []]
    for d in range(kind.rank):
        for side in (0, 1):
            at = [_index_constant(ir, d), _index_constant(ir, side)]
            read = op_result(ir, "tensor.extract", table.element_type, window.padding, *at)
            edges[side].append(op_result(ir, "arith.index_cast", index, read))
    element = op_result(ir, "tensor.extract", kind.element_type, init)
    shape = [ir.ShapedType.get_dynamic_size()] * kind.rank
    dynamic = ir.ShapedType.get_dynamic_size()
    pad = ir.Operation.create(
        "tensor.pad",
        results=[ir.RankedTensorType.get(shape, kind.element_type)],
        operands=[value, *edges[0], *edges[1]],
        attributes={
            "static_low": ir.DenseI64ArrayAttr.get([dynamic] * kind.rank),
            "static_high": ir.DenseI64ArrayAttr.get([dynamic] * kind.rank),
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, kind.rank, kind.rank]),
        },
        regions=1,
    )
    block = pad.regions[0].blocks.append(*([index] * kind.rank))
    with ir.InsertionPoint(block):
        ir.Operation.create("tensor.yield", operands=[element])
    return pad.result


def _index_constant(ir: Any, number: int) -> Any:
    """``arith.constant number : index`` at the insertion point."""
    index = ir.IndexType.get()
    return op_result(ir, "arith.constant", index, value=ir.IntegerAttr.get(index, number))


class _Slicer:
    """The slices of the padded operands (all of one shape, ``like``'s) at a window
    position: from ``k * window_dilation``, the window's strides, as many elements as the
    result has (computed at run time along a dynamic dimension, once)."""

    def __init__(self, ir: Any, like: Any, shape: list[int], window: _Window) -> None:
        self.ir, self.shape, self.window = ir, shape, window
        self.kind = ir.RankedTensorType(like.type)
        self.sizes: list[Any] = []  # a dynamic dimension's (padded size, elements' span)
        for d in range(self.kind.rank):
            stride = window.strides[d]
            reach = (window.sizes[d] - 1) * window.dilations[d] + 1
            if not self.kind.is_dynamic_dim(d):
                counted = max(self.kind.shape[d] - reach + stride, 0) // stride
                self.sizes.append((None, max(counted * stride - stride + 1, 0)))
                continue
            extent = dimension_size(ir, like, d)  # P
            over = self._arith("stablehlo.subtract", extent, reach - stride)
            counted = self._arith(
                "stablehlo.divide", self._arith("stablehlo.maximum", over, 0), stride
            )
            # (count - 1) * stride + 1 elements, none for no count
            spread = self._arith("stablehlo.multiply", counted, stride)
            span = self._arith("stablehlo.subtract", spread, stride - 1)
            self.sizes.append((extent, self._arith("stablehlo.maximum", span, 0)))

    def _arith(self, name: str, left: Any, right: int | Any) -> Any:
        """``name`` of the ``tensor<1xi32>`` ``left`` and ``right`` (a number: its constant)."""
        if isinstance(right, int):
            right = i32_vector(self.ir, [right])
        return op_result(self.ir, name, left.type, left, right)

    def bounds(self, position: tuple[int, ...]) -> tuple[Any, Any, Any]:
        """The starts, limits and strides of the slices at window ``position``."""
        ir = self.ir
        starts, limits = [], []
        for d, (extent, span) in enumerate(self.sizes):
            offset = position[d] * self.window.dilations[d]
            if extent is None:
                starts.append(i32_vector(ir, [offset]))
                limits.append(i32_vector(ir, [offset + span]))
                continue
            start = i32_vector(ir, [0])
            if offset:  # kept within the padded size when the slice is empty
                start = self._arith("stablehlo.minimum", extent, offset)
            starts.append(start)
            limits.append(self._arith("stablehlo.add", start, span))
        strides = i32_vector(ir, self.window.strides)
        return joined_vector(ir, starts), joined_vector(ir, limits), strides

    def __call__(self, padded: Any, bounds: tuple[Any, Any, Any]) -> Any:
        """The slice of ``padded`` within ``bounds``: of the result's shape."""
        ir = self.ir
        element = ir.RankedTensorType(padded.type).element_type
        return op_result(
            ir,
            "stablehlo.real_dynamic_slice",
            ir.RankedTensorType.get(self.shape, element),
            padded,
            *bounds,
        )


@dataclass(frozen=True)
class _Outside:
    """A 0-d value from outside the body (jax's dimension variable passed to a call),
    broadcast only if an op reads it."""

    value: Any


class _Lifter:
    """A body's ops applied to tensors of ``shape`` in place of 0-d tensors, at the
    insertion point (the module's doc, step 3); ``broadcasts`` keeps the broadcast
    constants and outside values, made once for every window position."""

    def __init__(
        self,
        ir: Any,
        shape: list[int],
        splats: Splats,
        broadcasts: dict[Any, Any],
        functions: dict[str, Any],
    ) -> None:
        self.ir, self.shape, self.splats = ir, shape, splats
        self.broadcasts, self.functions = broadcasts, functions

    def _kind(self, value: Any) -> Any:
        """The tensor type of ``shape`` of the 0-d tensor ``value``'s element."""
        element = self.ir.RankedTensorType(value.type).element_type
        return self.ir.RankedTensorType.get(self.shape, element)

    def _broadcast(self, value: Any) -> Any:
        """``value``, a 0-d tensor from outside the body, broadcast to ``shape``."""
        if value not in self.broadcasts:
            self.broadcasts[value] = self.splats.broadcast(value, self._kind(value))
        return self.broadcasts[value]

    def __call__(self, block: Any, inputs: list[Any]) -> list[Any]:
        """What ``block`` returns, its arguments ``inputs`` (tensors of ``shape``, or
        ``_Outside`` 0-d values, broadcast when an op reads them)."""
        ir = self.ir
        values = dict(zip(block.arguments, inputs, strict=True))

        def value(v: Any) -> Any:
            found = values.get(v, _Outside(v))
            return self._broadcast(found.value) if isinstance(found, _Outside) else found

        operations = [op.operation for op in block.operations]
        for op in operations[:-1]:
            if op.name == "func.call":
                callee = self.functions[ir.FlatSymbolRefAttr(op.attributes["callee"]).value]
                passed = [values.get(v, _Outside(v)) for v in op.operands]
                made = self(callee.regions[0].blocks[0], passed)
            elif op.name == "stablehlo.constant":
                key = op.results[0]
                if key not in self.broadcasts:
                    copy = op.clone()  # at the insertion point, outside the body
                    self.broadcasts[key] = self.splats.broadcast(copy.result, self._kind(key))
                made = [self.broadcasts[key]]
            elif op.name in _SAME_VALUE:
                made = [value(op.operands[0])]
            else:
                made = list(
                    ir.Operation.create(
                        op.name,
                        results=[self._kind(r) for r in op.results],
                        operands=[value(v) for v in op.operands],
                        attributes={name: op.attributes[name] for name in op.attributes},
                        loc=op.location,
                    ).results
                )
            values.update(zip(op.results, made, strict=True))
        return [value(v) for v in operations[-1].operands]
