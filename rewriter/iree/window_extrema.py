"""Small max and min windows of the IREE path as the extremum of shifted slices.

IREE 3.13 makes a ``stablehlo.reduce_window`` a pooling ``linalg.generic`` whose window
loops it tiles poorly: ``lax.reduce_window`` max over 3 x 3 SAME windows of a 716 x 716
f32 image took 4.4 ms of CPU against 3.1 under ``jax.jit`` (benchmarks/op_complexity.py).
``window_extrema`` writes each reduce_window of one operand whose body is a
``stablehlo.maximum`` or ``stablehlo.minimum`` of its two arguments, with windows of at
most ``MAX_WINDOW`` elements and no base dilation, as the padded operand (padded with the
init value, as reduce_window pads), one strided ``stablehlo.slice`` of it per window
position, and their maximum (minimum) with the init value: elementwise ops IREE fuses into
one vectorized loop. A maximum (minimum) of the same elements in any order is the same
value, NaN and signed zeros included, so the results are reduce_window's.
"""

from __future__ import annotations

import itertools
from typing import Any

from ..compile.mlir_walk import outline_into_functions, window_of

MAX_WINDOW = 16  # window elements, and so slices, from which reduce_window stays IREE's
_BODIES = {"stablehlo.maximum", "stablehlo.minimum"}
_PREFIX = "rw_window_extremum_"


def window_extrema(module: Any) -> int:
    """Rewrite, in the ``iree.compiler.ir`` module, every reduce_window the module's doc
    names; return how many."""
    return outline_into_functions(module, "stablehlo.reduce_window", _PREFIX, _function_text)


def _function_text(ir: Any, operation: Any, name: str) -> str | None:
    """The text of ``func.func private @name`` that computes ``operation`` as the module's
    doc says, or None when it is not such a reduce_window."""
    found = window_of(ir, operation, _BODIES)
    if found is None:
        return None
    extremum, given, result, integers = found
    rank = given.rank
    window = integers("window_dimensions")
    strides = integers("window_strides")
    dilations = integers("window_dilations")
    if integers("base_dilations") != [1] * rank:
        return None
    count = 1
    for size in window:
        count *= size
    if count > MAX_WINDOW:
        return None
    padding = [[0, 0]] * rank
    if "padding" in operation.attributes:
        flat = [int(v) for v in ir.DenseIntElementsAttr(operation.attributes["padding"])]
        padding = [flat[2 * d : 2 * d + 2] for d in range(rank)]
    if any(p < 0 for pair in padding for p in pair):
        return None
    element = str(given.element_type)
    padded = [size + low + high for size, (low, high) in zip(given.shape, padding, strict=True)]
    out = list(result.shape)

    def tensor(dims: list[int]) -> str:
        return f"tensor<{'x'.join(map(str, dims))}x{element}>" if dims else f"tensor<{element}>"

    zeros = ", ".join("0" for _ in range(rank))
    lines = [
        f"func.func private @{name}(%x: {tensor(list(given.shape))}, %init: {tensor([])}) -> "
        f"{tensor(out)} {{",
        f"%padded = stablehlo.pad %x, %init, low = [{', '.join(str(p[0]) for p in padding)}], "
        f"high = [{', '.join(str(p[1]) for p in padding)}], interior = [{zeros}] : "
        f"({tensor(list(given.shape))}, {tensor([])}) -> {tensor(padded)}",
        f"%m0 = stablehlo.broadcast_in_dim %init, dims = [] : ({tensor([])}) -> {tensor(out)}",
    ]
    for index, offsets in enumerate(itertools.product(*(range(w) for w in window)), 1):
        starts = [o * d for o, d in zip(offsets, dilations, strict=True)]
        limits = [s + (n - 1) * t + 1 for s, n, t in zip(starts, out, strides, strict=True)]
        ranges = ", ".join(f"{s}:{e}:{t}" for s, e, t in zip(starts, limits, strides, strict=True))
        lines += [
            f"%s{index} = stablehlo.slice %padded [{ranges}] : ({tensor(padded)}) -> {tensor(out)}",
            f"%m{index} = {extremum} %m{index - 1}, %s{index} : {tensor(out)}",
        ]
    lines += [f"return %m{count} : {tensor(out)}", "}"]
    return "\n".join(lines)
