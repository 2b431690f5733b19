"""Cumulative sums and products of floats in XLA:CPU's order of operations.

jax writes ``jnp.cumsum`` (``cumprod``, ``lax.cumsum(..., reverse=True)``) as a
``reduce_window`` whose window is the whole axis. XLA:CPU computes it in a way of its own
(``ReduceWindowRewriter`` with a base of 16, and XLA's window loop; ``jax.jit``'s optimized
HLO shows both):

- an axis longer than 16 is padded at its end to a multiple of 16 with the initial value
  and cut into blocks of 16; each block is scanned on its own, the blocks' last elements
  (first, reversed) are scanned exclusively (the same way again when there are more than
  16 blocks), and each block's elements are combined with its block's prefix;
- a window of 16 or fewer is XLA's loop: each output starts from the initial value and
  combines the elements of its window from left to right, ``init + x[i] + ... + x[n-1]``
  for a reversed scan (not from its end), ``init + x[0] + ... + x[i]`` forward.

Both paths made each window one running scan from ``x[0]`` (from ``x[n-1]`` reversed),
which adds in another order: ``jnp.cumsum`` of 64 normal f32 values a row differed from
``jax.jit`` in one value of 8 (a reversed one in 4 of 10 already at 10 values), 1,000 in
most. ``xla_scans`` writes every float (f32 and f64) sum or product window of static shape
that is cumulative along one axis from the identity, reversed or longer than 16, as XLA's
steps, in a function of its own: pads, reshapes into blocks, slices and broadcasts of the
prefixes; a forward window of 16 or fewer as a ``reduce_window`` (IREE's running scan,
which ``started_scans``, after this fix, starts from the identity as XLA's loop does), a
reversed one as a ``linalg.generic`` whose reduction takes the elements from the output's
on, in order. Windows of dynamic shape are ``dynamic_scans``', maxima and minima (exact in
any order) and 16-bit floats (``wide_accumulation``'s) are left.
"""

from __future__ import annotations

import math
from typing import Any

from .dynamic_scans import cumulative_axis
from .mlir_walk import one_op_body, outline_into_functions, splat_value, tensor_text

WINDOW = "stablehlo.reduce_window"
BASE = 16  # XLA:CPU's block length (ReduceWindowRewriter's base_length)
_PREFIX = "rw_xla_scan_"
_IDENTITIES = {"stablehlo.add": 0.0, "stablehlo.multiply": 1.0}
_BODIES = tuple(_IDENTITIES)
_ELEMENTS = ("f32", "f64")


def xla_scans(module: Any) -> int:
    """Rewrite, in place, the cumulative windows the module's doc names of the
    ``iree.compiler.ir`` ``module`` (in its context); return how many."""
    return outline_into_functions(
        module, WINDOW, _PREFIX, _function_text, operands=lambda op: [op.operands[0]]
    )


def _function_text(ir: Any, operation: Any, symbol: str) -> str | None:
    if len(operation.operands) != 2 or len(operation.results) != 1:
        return None
    given = operation.operands[0].type
    if not isinstance(given, ir.RankedTensorType) or not given.has_static_shape:
        return None
    element = str(given.element_type)
    body = one_op_body(operation, _BODIES)
    if element not in _ELEMENTS or body is None:
        return None
    shaped = ir.RankedTensorType(given)
    forward, backward = (cumulative_axis(ir, operation, shaped, r) for r in (False, True))
    axis = forward if forward is not None else backward
    if axis is None or shaped.shape[axis] < 2:
        return None  # a window of one element: identity_folds' (XLA keeps the element)
    if forward is not None and shaped.shape[axis] <= BASE:
        return None  # IREE's running scan adds as XLA's loop does
    initial, identity = splat_value(ir, operation.operands[1]), _IDENTITIES[body]
    if initial != identity or math.copysign(1.0, initial) != 1.0:
        return None  # the padding past a reversed window's end must change nothing
    writer = _Writer(body, element)
    shape = list(shaped.shape)
    result = writer.scan("%x", shape, axis, forward is not None)
    kind = tensor_text(shape, element)
    # The initial value a constant (the identity): ``unrolled_windows`` and IREE see the
    # blocks' windows as padded with the identity.
    lines = [
        f"func.func private @{symbol}(%x: {kind}) -> {kind} {{",
        f"  %init = stablehlo.constant dense<{identity:e}> : tensor<{element}>",
        *writer.lines,
        f"  return {result} : {kind}",
        "}",
    ]
    return "\n".join(lines)


class _Writer:
    """The lines of a scan in XLA's order, their values numbered."""

    def __init__(self, body: str, element: str):
        self.body = body
        self.element = element
        self.lines: list[str] = []
        self.count = 0

    def _new(self, text: str, shape: list[int]) -> str:
        """A new value ``text`` of ``shape``: ``text`` ends with its operands' types in
        parentheses (the functional form), or with no type (an elementwise op's)."""
        name = f"%v{self.count}"
        self.count += 1
        result = self._type(shape)
        typed = f"{text} -> {result}" if text.endswith(")") else f"{text} : {result}"
        self.lines.append(f"  {name} = {typed}")
        return name

    def _type(self, shape: list[int]) -> str:
        return tensor_text(shape, self.element)

    def scan(self, value: str, shape: list[int], axis: int, forward: bool) -> str:
        """The inclusive scan of ``value`` along ``axis``, as XLA computes it."""
        length = shape[axis]
        if length <= BASE:
            return self._window_loop(value, shape, axis, forward)
        padded_length = math.ceil(length / BASE) * BASE
        blocks = padded_length // BASE
        padded_shape = _with(shape, axis, padded_length)
        padded = value
        if padded_length != length:
            padded = self._pad(value, shape, axis, 0, padded_length - length)
        tiled_shape = [*shape[:axis], blocks, BASE, *shape[axis + 1 :]]
        tiled = self._reshape(padded, padded_shape, tiled_shape)
        local = self._window_loop(tiled, tiled_shape, axis + 1, forward)
        edge = BASE - 1 if forward else 0
        column_shape = [*shape[:axis], blocks, *shape[axis + 1 :]]
        cut = self._slice(local, tiled_shape, axis + 1, edge, edge + 1)
        column = self._reshape(cut, _with(tiled_shape, axis + 1, 1), column_shape)
        prefix = self._exclusive(column, column_shape, axis, forward)
        dimensions = [d for d in range(len(tiled_shape)) if d != axis + 1]
        spread = self._new(
            f"stablehlo.broadcast_in_dim {prefix}, dims = {dimensions} : "
            f"({self._type(column_shape)})",
            tiled_shape,
        )
        combined = self._op(local, spread, tiled_shape)
        whole = self._reshape(combined, tiled_shape, padded_shape)
        if padded_length == length:
            return whole
        return self._slice(whole, padded_shape, axis, 0, length)

    def _exclusive(self, value: str, shape: list[int], axis: int, forward: bool) -> str:
        """The exclusive scan of ``value`` along ``axis`` (the initial value first, or last
        reversed), as XLA computes it: its inclusive scan shifted by one."""
        length = shape[axis]
        inclusive = self.scan(value, shape, axis, forward)
        low, high = (1, 0) if forward else (0, 1)
        shifted = self._pad(inclusive, shape, axis, low, high)
        start = 0 if forward else 1
        return self._slice(shifted, _with(shape, axis, length + 1), axis, start, start + length)

    def _window_loop(self, value: str, shape: list[int], axis: int, forward: bool) -> str:
        """XLA's loop of a cumulative window of at most ``BASE`` along ``axis``: each
        output the initial value combined with its window's elements from the left.
        Forward, that is IREE's running scan of the window (``started_scans`` starts it
        from the initial value); reversed, output i is ``init, x[i], ..., x[n - 1]``: a
        ``linalg.generic`` whose reduction runs over the axis in order and takes the
        elements from i on."""
        if forward:
            return self._cumulative_window(value, shape, axis)
        rank = len(shape)
        dims = [f"d{d}" for d in range(rank + 1)]
        read = [dims[rank] if d == axis else dims[d] for d in range(rank)]
        maps = [
            f"affine_map<({', '.join(dims)}) -> ({', '.join(read)})>",
            f"affine_map<({', '.join(dims)}) -> ({', '.join(dims[:rank])})>",
        ]
        iterators = ", ".join(['"parallel"'] * rank + ['"reduction"'])
        kind = self._type(shape)
        arith = {"stablehlo.add": "arith.addf", "stablehlo.multiply": "arith.mulf"}[self.body]
        number = f"%v{self.count}"
        self.count += 1
        self.lines += [
            f"  {number}_start = arith.constant {_IDENTITIES[self.body]:e} : {self.element}",
            f"  {number}_empty = tensor.empty() : {kind}",
            f"  {number}_filled = linalg.fill ins({number}_start : {self.element}) "
            f"outs({number}_empty : {kind}) -> {kind}",
            f"  {number} = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
            f"iterator_types = [{iterators}]}} ins({value} : {kind}) "
            f"outs({number}_filled : {kind}) {{",
            f"  ^bb0(%in: {self.element}, %acc: {self.element}):",
            f"    %i = linalg.index {axis} : index",
            f"    %k = linalg.index {rank} : index",
            "    %taken = arith.cmpi uge, %k, %i : index",
            f"    %combined = {arith} %acc, %in : {self.element}",
            f"    %next = arith.select %taken, %combined, %acc : {self.element}",
            f"    linalg.yield %next : {self.element}",
            f"  }} -> {kind}",
        ]
        return number

    def _cumulative_window(self, value: str, shape: list[int], axis: int) -> str:
        """A forward cumulative ``reduce_window`` of the body's op along ``axis``."""
        rank, length = len(shape), shape[axis]
        window = ", ".join(str(length if d == axis else 1) for d in range(rank))
        padding = ", ".join(f"[{length - 1 if d == axis else 0}, 0]" for d in range(rank))
        scalar = f"tensor<{self.element}>"
        name = f"%v{self.count}"
        self.count += 1
        kind = self._type(shape)
        self.lines += [
            f'  {name} = "stablehlo.reduce_window"({value}, %init) <{{padding = '
            f"dense<[{padding}]> : tensor<{rank}x2xi64>, window_dimensions = "
            f"array<i64: {window}>}}> ({{",
            f"  ^bb0(%a: {scalar}, %b: {scalar}):",
            f"    %c = {self.body} %a, %b : {scalar}",
            f"    stablehlo.return %c : {scalar}",
            f"  }}) : ({kind}, {scalar}) -> {kind}",
        ]
        return name

    def _op(self, left: str, right: str, shape: list[int]) -> str:
        return self._new(f"{self.body} {left}, {right}", shape)

    def _slice(self, value: str, shape: list[int], axis: int, start: int, limit: int) -> str:
        starts = [start if d == axis else 0 for d in range(len(shape))]
        limits = [limit if d == axis else size for d, size in enumerate(shape)]
        ranges = ", ".join(f"{a}:{b}" for a, b in zip(starts, limits, strict=True))
        return self._new(
            f"stablehlo.slice {value} [{ranges}] : ({self._type(shape)})",
            _with(shape, axis, limit - start),
        )

    def _pad(self, value: str, shape: list[int], axis: int, low: int, high: int) -> str:
        lows = [low if d == axis else 0 for d in range(len(shape))]
        highs = [high if d == axis else 0 for d in range(len(shape))]
        zeros = [0] * len(shape)
        return self._new(
            f"stablehlo.pad {value}, %init, low = {lows}, high = {highs}, interior = {zeros}"
            f" : ({self._type(shape)}, tensor<{self.element}>)",
            _with(shape, axis, shape[axis] + low + high),
        )

    def _reshape(self, value: str, given: list[int], shape: list[int]) -> str:
        return self._new(f"stablehlo.reshape {value} : ({self._type(given)})", shape)


def _with(shape: list[int], axis: int, size: int) -> list[int]:
    """``shape`` with ``size`` along ``axis``."""
    return [size if d == axis else s for d, s in enumerate(shape)]
