"""Long f32 sums of squares on every path: time per call and distance from the exact sum.

Run from the repository root: ``python benchmarks/sum_accuracy.py [--markdown]``. Each
program is ``(x * x).sum(axis)`` of normal f32 numbers, exported with static shapes or
with a symbolic size (``symbolic_shape``), and run by ``jax.jit``, ``rewriter.compile``
and ``rewriter.iree`` side by side in one process: median ms per call (and the ratio to
``jax.jit``'s), and the largest error of an output in units of roundoff of the sum itself
(``|got - exact| / (u S)``, the exact sum in f64, ``u`` = 2^-24): what
``rewriter/compile/two_level_sums.py`` keeps down by summing in blocks.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import jax  # noqa: E402
from jax import export  # noqa: E402

import rewriter  # noqa: E402
from benchmarks.report import aligned, figures, header, row  # noqa: E402
from benchmarks.sort_speed import median_ms  # noqa: E402
from rewriter.compile import compile_module, load  # noqa: E402
from rewriter.iree import load as load_iree  # noqa: E402

UNIT = 2.0**-24  # f32's unit of roundoff
# name: (shape of the input, axis summed, symbolic shape or None)
CASES: dict[str, tuple[tuple[int, ...], int | tuple[int, ...] | None, str | None]] = {
    "whole 4,194,304": ((1 << 22,), None, None),
    "whole 1,048,576 x 4": ((1 << 20, 4), None, None),
    "whole 2048 x 2048": ((2048, 2048), None, None),
    "rows of 4 x 1,048,576": ((4, 1 << 20), 1, None),
    "columns of 1,048,576 x 4": ((1 << 20, 4), 0, None),
    "(1, 2) of 4 x 4096 x 256": ((4, 4096, 256), (1, 2), None),
    "(0, 1) of 4096 x 256 x 4": ((4096, 256, 4), (0, 1), None),
    "whole (b,), b = 2,097,152": ((1 << 21,), None, "b"),
    "whole (b, 4), b = 1,048,576": ((1 << 20, 4), None, "b, 4"),
    "rows of (4, b), b = 1,048,576": ((4, 1 << 20), 1, "4, b"),
}


def squares(axis: int | tuple[int, ...] | None) -> Callable[[jax.Array], jax.Array]:
    def sum_of_squares(x):
        return (x * x).sum(axis)

    return sum_of_squares


def error(got: object, exact: np.ndarray) -> float:
    """The largest ``|got - exact| / (u S)``; the sums are of squares, so ``S`` is exact."""
    return float(np.max(np.abs(np.asarray(got, np.float64) - exact) / (UNIT * exact)))


def main() -> None:
    print(
        header("sum", "jax.jit ms", "jax.jit u S", "compile ms (x jit)", "compile u S",
               "iree ms (x jit)", "iree u S")
    )  # fmt: skip
    work = Path(tempfile.mkdtemp(prefix="sum-accuracy-"))
    for number, (name, (shape, axis, symbolic)) in enumerate(CASES.items()):
        x = aligned(np.random.default_rng(number).normal(size=shape).astype(np.float32))
        function = squares(axis)
        spec = x if symbolic is None else jax.ShapeDtypeStruct(
            export.symbolic_shape(symbolic), np.float32
        )  # fmt: skip
        text = rewriter.export(function, spec).text
        exact = np.sum(x.astype(np.float64) ** 2, axis=axis)
        jitted = jax.jit(function)
        jit_ms = median_ms(jitted, [x])
        library = work / f"{number}.so"
        compile_module(rewriter.rewrite(text).text, library)
        compiled = load(library).main
        module = work / f"{number}.iree.mlir"
        module.write_text(rewriter.rewrite(text, abi="iree").text)
        on_iree = load_iree(module, imports={}).main
        columns = [f"{jit_ms:.2f}", f"{error(jitted(x), exact):.1f}"]
        for run in (compiled, on_iree):
            ms = median_ms(run, [x])
            columns += [f"{ms:.2f} ({ms / jit_ms:.2f}x)", f"{error(run(x), exact):.1f}"]
        print(row(name, *columns), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description="Long f32 sums of squares by jax.jit, rewriter.compile and rewriter.iree: "
        "median ms per call and the error in units of roundoff of the sum."
    )
    parser.add_argument("--markdown", action="store_true", help="write benchmarks/README.md")
    chosen = parser.parse_args()
    with figures("sum_accuracy", chosen.markdown):
        main()
