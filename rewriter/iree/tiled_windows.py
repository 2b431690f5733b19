"""Sums over windows that tile the operand, on the IREE path, as a reshape and a reduce.

IREE 3.13 makes a ``stablehlo.reduce_window`` a pooling ``linalg.generic`` whose window
loops it tiles poorly: ``lax.reduce_window`` sums over 2 x 2 windows with strides 2 of a
2024 x 2024 f32 image took 5.4 ms, 1.3 times ``jax.jit`` (``benchmarks/op_complexity.py``;
the compiled path takes 0.5). When the windows tile the operand (each window's size is its
stride, no padding, no dilation), each output is the sum of the elements of one block of
the operand: ``tiled_windows`` writes such a reduce_window as the operand cut to the
windows it covers (a slice, when a dimension is no multiple of its window: a window that
would reach past the end is not summed, as in reduce_window), reshaped so that each
dimension d becomes (outputs, window), and one ``stablehlo.reduce`` of the window
dimensions with the same body and initial value: 3.1 ms at 2024 x 2024, 0.46 at 716 x 716
(0.52 before). A reduce folds the body over the init value and each window's elements,
as reduce_window does; only the order of the sum may differ, within the rounding any order
allows, as XLA's order is its own (``tests/test_op_coverage.py``'s ``window_bound``).
Only a body of one ``stablehlo.add`` of its two arguments is taken (max and min windows
are ``window_extrema.py``'s).
"""

from __future__ import annotations

from typing import Any

from ..compile.mlir_walk import outline_into_functions, window_of

_PREFIX = "rw_tiled_window_"


def tiled_windows(module: Any) -> int:
    """Rewrite, in the ``iree.compiler.ir`` module, every reduce_window the module's doc
    names into a call of a private function; return how many."""
    return outline_into_functions(module, "stablehlo.reduce_window", _PREFIX, _function_text)


def _function_text(ir: Any, operation: Any, name: str) -> str | None:
    """The text of ``func.func private @name`` that computes ``operation`` as the module's
    doc says, or None when it is not such a reduce_window."""
    found = window_of(ir, operation, ("stablehlo.add",))
    if found is None:
        return None
    given, result, integers = found.given, found.result, found.integers
    rank = given.rank
    window = integers("window_dimensions")
    if integers("window_strides") != window or all(w == 1 for w in window):
        return None
    if integers("base_dilations") != [1] * rank or integers("window_dilations") != [1] * rank:
        return None
    attributes = operation.attributes
    if "padding" in attributes:
        if any(int(v) for v in ir.DenseIntElementsAttr(attributes["padding"])):
            return None
    out = list(result.shape)
    element = str(given.element_type)
    covered = [o * w for o, w in zip(out, window, strict=True)]
    split = [n for o, w in zip(out, window, strict=True) for n in (o, w)]

    def tensor(dims: list[int]) -> str:
        return f"tensor<{'x'.join(map(str, dims))}x{element}>" if dims else f"tensor<{element}>"

    lines = [
        f"func.func private @{name}(%x: {tensor(list(given.shape))}, %init: {tensor([])}) -> "
        f"{tensor(out)} {{",
    ]
    source = "%x"
    if covered != list(given.shape):
        ranges = ", ".join(f"0:{c}" for c in covered)
        lines.append(
            f"%cut = stablehlo.slice %x [{ranges}] : ({tensor(list(given.shape))}) -> "
            f"{tensor(covered)}"
        )
        source = "%cut"
    reduced = ", ".join(str(2 * d + 1) for d in range(rank))
    lines += [
        f"%blocks = stablehlo.reshape {source} : ({tensor(covered)}) -> {tensor(split)}",
        f"%sums = stablehlo.reduce(%blocks init: %init) applies stablehlo.add across "
        f"dimensions = [{reduced}] : ({tensor(split)}, {tensor([])}) -> {tensor(out)}",
        f"return %sums : {tensor(out)}",
        "}",
    ]
    return "\n".join(lines)
