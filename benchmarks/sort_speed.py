"""Sorting from 1,000 to 1,000,000 entries: jax.jit, rewriter.compile and rewriter.iree.

Run from the repository root: ``python benchmarks/sort_speed.py [PROGRAM ...] [--sizes N,...]``.
Each program is exported with jax for each size, compiled on both paths and timed against
``jax.jit(f)`` on the same random input, 64-byte aligned as ``jax.jit`` reads it in place
(``report.aligned``), side by side in one process (median ms per call).
A path that cannot compile or run a size prints why in its column. Prints the load
average first.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import rewriter  # noqa: E402
from benchmarks.report import aligned, figures, header, row, sizes  # noqa: E402
from rewriter.compile import LoadError, ToolchainError, compile_module, load  # noqa: E402
from rewriter.iree import BuildError  # noqa: E402
from rewriter.iree import load as load_iree  # noqa: E402

SIZES = (1_000, 8_000, 64_000, 512_000, 1_000_000)


def _keys(size: int) -> list[np.ndarray]:
    return [np.random.default_rng(0).normal(size=size).astype(np.float32)]


def _two_keys(size: int) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.integers(0, 100, size).astype(np.int32), rng.normal(size=size).astype(np.float32)]


PROGRAMS = {
    "argsort": (jnp.argsort, _keys),
    "sort": (jnp.sort, _keys),
    "lexsort": (lambda a, b: jnp.lexsort((b, a)), _two_keys),
}


def median_ms(function, arguments, seconds: float = 1.0) -> float:
    jax.block_until_ready(function(*arguments))
    times: list[float] = []
    deadline = time.perf_counter() + seconds
    while len(times) < 3 or (time.perf_counter() < deadline and len(times) < 50):
        started = time.perf_counter()
        jax.block_until_ready(function(*arguments))
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e3


def _timed(run, arguments, jit_ms: float) -> str:
    try:
        function = run()
    except (BuildError, LoadError, ToolchainError) as error:
        errors = [line for line in str(error).splitlines() if "error: " in line]
        reason = errors[0].split("error: ", 1)[1] if errors else type(error).__name__
        return f"fails: {reason[:70]}"
    ms = median_ms(function, arguments)
    return f"{ms:.2f} ({ms / jit_ms:.2f}x)"


def timed_paths(text: str, arguments, jit_ms: float, work: Path, stem: str) -> tuple[str, str]:
    """The compile and iree columns of the export ``text`` on ``arguments``: each path's
    median ms and its ratio to ``jit_ms``, or why it fails (files named ``stem`` in
    ``work``). trig_speed.py's table is made the same way."""

    def compiled():
        library = work / f"{stem}.so"
        compile_module(rewriter.rewrite(text).text, library)
        return load(library).main

    def on_iree():
        module = work / f"{stem}.iree.mlir"
        module.write_text(rewriter.rewrite(text, abi="iree").text)
        return load_iree(module, imports={}).main

    return _timed(compiled, arguments, jit_ms), _timed(on_iree, arguments, jit_ms)


def main(names: list[str], sizes: list[int]) -> None:
    print(header("program", "entries", "jax.jit ms", "compile ms (x jit)", "iree ms (x jit)"))
    work = Path(tempfile.mkdtemp(prefix="sort-speed-"))
    for name in names:
        function, make = PROGRAMS[name]
        for size in sizes:
            arguments = [aligned(array) for array in make(size)]
            text = rewriter.export(function, *arguments).text
            jit_ms = median_ms(jax.jit(function), arguments)
            columns = timed_paths(text, arguments, jit_ms, work, f"{name}-{size}")
            compile_column, iree_column = columns
            print(row(name, size, f"{jit_ms:.2f}", compile_column, iree_column), flush=True)


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="jax.jit against rewriter.compile and rewriter.iree on sorts of 1k to 1M "
        "entries: median ms per call, side by side in one process."
    )
    parser.add_argument(
        "programs",
        nargs="*",
        metavar="PROGRAM",
        help=f"programs to time, among {', '.join(PROGRAMS)} (default: all)",
    )
    parser.add_argument(
        "--sizes",
        type=sizes,
        default=",".join(map(str, SIZES)),
        help="comma-separated entry counts (default: %(default)s)",
    )
    parser.add_argument("--markdown", action="store_true", help="write benchmarks/README.md")
    arguments = parser.parse_args(argv)
    unknown = [name for name in arguments.programs if name not in PROGRAMS]
    if unknown:
        parser.error(f"unknown program {unknown[0]!r} (choose from {', '.join(PROGRAMS)})")
    return arguments


if __name__ == "__main__":
    chosen = parse_arguments()
    with figures("sort_speed", chosen.markdown):
        main(chosen.programs or list(PROGRAMS), chosen.sizes)
