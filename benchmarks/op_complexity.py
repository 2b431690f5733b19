"""How the ops around third-party calls grow with their size: jax.jit, rewriter.compile and
rewriter.iree, from 1,000 to 4,096,000 elements.

The sizes go up 8x a step, so that every step's growth reads the same way (8x for a
linear op, 64x for a quadratic one), from 1k to past 1M: the fifth size is the first of
the series past 1M (a last step of 1.95x to 1,000,000 would not compare with
the others). 64,000 elements of f32 (256 KB an array) stay in a core's 2 MB L2 cache,
512,000 (2 MB) no longer do, and 4,096,000 (16 MB) are past any private cache: the last
two steps say more about memory and about threads (XLA splits large loops in 2 on this
2-core machine, as the compiled path does from 65,536 iterations) than about the algorithm.

Run from the repository root: ``python benchmarks/op_complexity.py [OP ...] [--sizes N,...]``.
Each op is exported with jax at each size, compiled on both paths and timed against
``jax.jit`` on the same input, in one process: ms per call, the least of ``--repeat``
medians (each over half a second), the three paths taking turns. Inputs are 64-byte
aligned, as ``jax.jit`` reads them in place (``report.aligned``).
Then a markdown table: each path's ms per call at each size, and its growth from one size
to the next (time at 8x the elements over time at the size before), beside XLA's. A path
whose growth is well above XLA's has a worse complexity (a quadratic loop grows 64x). XLA's
fixed cost per call (tens of microseconds) makes its growth small between the small sizes,
so a second table gives each path's time over jax.jit's at each size: a ratio that rises
with the size is a path falling behind XLA, whatever the fixed costs. A size
whose predicted time (the last time times the last growth) exceeds ``--budget`` seconds per
call is skipped, and so is a path that cannot compile or run it (the reason is printed).
Prints the load average first and last. ``--clock cpu`` measures the CPU time of the
process (every thread) instead of wall time: the work a path does, which load on shared
cores inflates less than the wall time it takes. ``--one-core`` runs everything on one CPU: XLA
splits large elementwise loops in 2 (``outer_dimension_partitions``), IREE's task system
has a worker per core and the compiled path's pool a thread per core.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import rewriter  # noqa: E402
from benchmarks.report import aligned, figures, sizes  # noqa: E402
from rewriter.compile import LoadError, ToolchainError, compile_module, load  # noqa: E402
from rewriter.iree import BuildError  # noqa: E402
from rewriter.iree import load as load_iree  # noqa: E402

SIZES = (1_000, 8_000, 64_000, 512_000, 4_096_000)


# What a figure measures: wall time, or the CPU time of the whole process (every thread),
# the work done, which a burst of load on the shared cores inflates less.
CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}


def median_ms(function, arguments, seconds: float = 0.5, clock: str = "wall") -> float:
    """The median time of a call on ``clock``, in ms, over ``seconds`` of wall time (at
    least 3 calls, at most 50), after one call that is not timed."""
    jax.block_until_ready(function(*arguments))
    times: list[float] = []
    now = CLOCKS[clock]
    deadline = time.perf_counter() + seconds
    while len(times) < 3 or (time.perf_counter() < deadline and len(times) < 50):
        started = now()
        jax.block_until_ready(function(*arguments))
        times.append(now() - started)
    return statistics.median(times) * 1e3


def _normal(size: int) -> list[np.ndarray]:
    return [np.random.default_rng(0).normal(size=size).astype(np.float32)]


def _two_keys(size: int) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.integers(0, 100, size).astype(np.int32), rng.normal(size=size).astype(np.float32)]


def _values_and_indices(size: int) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [
        rng.normal(size=size).astype(np.float32),
        rng.integers(0, size, size).astype(np.int32),
        rng.normal(size=size).astype(np.float32),
    ]


def _image(size: int) -> list[np.ndarray]:
    side = int(round(size**0.5))
    return [np.random.default_rng(0).normal(size=(side, side)).astype(np.float32)]


def _small_factors(size: int) -> list[np.ndarray]:
    return [np.random.default_rng(0).uniform(0.999, 1.001, size).astype(np.float32)]


def _token_loop(size: int) -> str:
    """A while loop carrying a token (tests/test_op_coverage.py, TOKEN_LOOP), on ``size``
    elements: three doublings."""
    return f"""module @jit_token_loop {{
  func.func public @main(%arg0: tensor<{size}xf32>) -> tensor<{size}xf32> {{
    %token = stablehlo.create_token : !stablehlo.token
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %c3 = stablehlo.constant dense<3> : tensor<i32>
    %two = stablehlo.constant dense<2.0> : tensor<{size}xf32>
    %r:3 = stablehlo.while(%i = %c0, %t = %token, %y = %arg0)
        : tensor<i32>, !stablehlo.token, tensor<{size}xf32>
    cond {{
      %lt = stablehlo.compare LT, %i, %c3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    }} do {{
      %next = stablehlo.add %i, %c1 : tensor<i32>
      %t2 = stablehlo.after_all %t, %token : !stablehlo.token
      %y2 = stablehlo.multiply %y, %two : tensor<{size}xf32>
      stablehlo.return %next, %t2, %y2 : tensor<i32>, !stablehlo.token, tensor<{size}xf32>
    }}
    return %r#2 : tensor<{size}xf32>
  }}
}}
"""


def _window_max(x):
    return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (3, 3), (1, 1), "SAME")


def _window_sum(x):
    return jax.lax.reduce_window(x, 0.0, jax.lax.add, (2, 2), (2, 2), "VALID")


# name: (function, inputs of a size); a function None is exported from text (_token_loop).
OPS: dict[str, tuple[Callable[..., object] | None, Callable[[int], list[np.ndarray]]]] = {
    "argsort": (jnp.argsort, _normal),
    "lexsort": (lambda a, b: jnp.lexsort((b, a)), _two_keys),
    "top_k": (lambda x: jax.lax.top_k(x, 16), _normal),
    "cumsum": (jnp.cumsum, _normal),
    "cumprod": (jnp.cumprod, _small_factors),
    "scatter_add": (lambda x, i, v: x.at[i].add(v), _values_and_indices),
    "gather": (lambda x, i, v: x[i] + v, _values_and_indices),
    "argmax": (jnp.argmax, _normal),
    "reduce_window_max": (_window_max, _image),
    "reduce_window_sum": (_window_sum, _image),
    "token_while": (None, _normal),
}
PATHS = ("jit", "compile", "iree")


def _export(name: str, size: int, arguments: list[np.ndarray]) -> str:
    function = OPS[name][0]
    if function is None:
        return _token_loop(size)
    return rewriter.export(function, *arguments).text


def _jit(name: str) -> Callable[..., object]:
    function = OPS[name][0]
    if function is None:  # the token orders nothing: the loop without it
        return jax.jit(lambda y: jax.lax.fori_loop(0, 3, lambda i, z: z * 2.0, y))
    return jax.jit(function)


def _build(path: str, name: str, text: str, work: Path) -> Callable[..., object]:
    if path == "jit":
        return _jit(name)
    if path == "compile":
        library = work / f"lib{name}.so"
        compile_module(rewriter.rewrite(text).text, library)
        return load(library).main
    module = work / f"{name}.iree.mlir"
    module.write_text(rewriter.rewrite(text, abi="iree").text)
    return load_iree(module, imports={}).main


def measure(
    names: list[str], sizes: list[int], budget: float, repeat: int, clock: str = "wall"
) -> dict:
    """{(op, path): [ms or a reason, per size]}, printing each figure as it comes. Each
    figure is the least of ``repeat`` medians, the paths taking turns (so that a burst of
    load on the shared cores falls on all three)."""
    results: dict[tuple[str, str], list[float | str]] = {}
    work = Path(tempfile.mkdtemp(prefix="op-complexity-"))
    for name in names:
        for path in PATHS:
            results[name, path] = []
        for size in sizes:
            arguments = [aligned(array) for array in OPS[name][1](size)]
            text = _export(name, size, arguments)
            functions: dict[str, Callable[..., object]] = {}
            for path in PATHS:
                done = [t for t in results[name, path] if isinstance(t, float)]
                if results[name, path] and not isinstance(results[name, path][-1], float):
                    results[name, path].append("skipped")
                    continue
                if len(done) >= 2 and done[-1] * (done[-1] / done[-2]) > budget * 1e3:
                    results[name, path].append(f"skipped (> {budget:g} s predicted)")
                    continue
                try:
                    functions[path] = _build(path, name, text, work)
                except (BuildError, LoadError, ToolchainError) as error:
                    lines = [line for line in str(error).splitlines() if "error: " in line]
                    reason = lines[0].split("error: ", 1)[1] if lines else type(error).__name__
                    results[name, path].append(f"fails: {reason[:60]}")
            least: dict[str, float] = {}
            for _ in range(repeat):
                for path, function in functions.items():
                    ms = median_ms(function, arguments, clock=clock)
                    least[path] = min(ms, least.get(path, ms))
            for path, ms in least.items():
                results[name, path].append(ms)
                print(f"{name:18} {size:8} {path:8} {ms:10.3f} ms", file=sys.stderr, flush=True)
    return results


def table(results: dict, names: list[str], sizes: list[int]) -> str:
    """The markdown table: ms per call and, after the first size, the growth from the
    size before (xG), per path."""
    header = ["op", "path", *(f"{s:,}" for s in sizes), "growth per 8x (XLA's)"]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for name in names:
        xla = results[name, "jit"]
        for path in PATHS:
            row = results[name, path]
            cells = [f"{t:.3g}" if isinstance(t, float) else t for t in row]
            growths = []
            for i in range(1, len(row)):
                if isinstance(row[i], float) and isinstance(row[i - 1], float):
                    own = row[i] / row[i - 1]
                    if path == "jit":
                        growths.append(f"{own:.1f}")
                    elif isinstance(xla[i], float) and isinstance(xla[i - 1], float):
                        growths.append(f"{own:.1f} ({xla[i] / xla[i - 1]:.1f})")
            lines.append(f"| {name} | {path} | " + " | ".join(cells) + f" | {', '.join(growths)} |")
    return "\n".join(lines)


def ratios(results: dict, names: list[str], sizes: list[int]) -> str:
    """The markdown table of each path's time over jax.jit's at each size: a ratio that
    rises with the size is a path falling behind XLA, whatever XLA's fixed cost per call
    (which makes XLA's growth small from the smallest sizes)."""
    header = ["op", "path", *(f"{s:,}" for s in sizes)]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for name in names:
        xla = results[name, "jit"]
        for path in PATHS[1:]:
            cells = [
                f"{own / base:.2f}" if isinstance(own, float) and isinstance(base, float) else "-"
                for own, base in zip(results[name, path], xla, strict=True)
            ]
            lines.append(f"| {name} | {path} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="jax.jit against rewriter.compile and rewriter.iree on the ops around "
        "third-party calls, 1k to 4M elements: ms per call and growth per 8x size."
    )
    parser.add_argument(
        "ops", nargs="*", metavar="OP", help=f"ops to time, among {', '.join(OPS)} (default: all)"
    )
    parser.add_argument(
        "--sizes",
        type=sizes,
        default=",".join(map(str, SIZES)),
        help="comma-separated element counts (default: %(default)s)",
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=5.0,
        help="skip a size whose predicted time per call exceeds this many seconds "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="each figure is the least of this many medians (default: %(default)s)",
    )
    parser.add_argument(
        "--one-core",
        action="store_true",
        help="run on one CPU (sched_setaffinity), so that XLA's and IREE's threads share it: "
        "growth then compares the code, not the threads",
    )
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="wall",
        help="wall time, or the CPU time of every thread of the process (default: %(default)s)",
    )
    parser.add_argument("--markdown", action="store_true", help="write benchmarks/README.md")
    arguments = parser.parse_args(argv)
    unknown = [name for name in arguments.ops if name not in OPS]
    if unknown:
        parser.error(f"unknown op {unknown[0]!r} (choose from {', '.join(OPS)})")
    return arguments


if __name__ == "__main__":
    chosen = parse_arguments()
    names = chosen.ops or list(OPS)
    if chosen.one_core:  # before jax makes its thread pool, at the first call
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    with figures("op_complexity", chosen.markdown):
        if chosen.one_core:
            print(f"on one CPU only (--one-core: CPU {min(os.sched_getaffinity(0))})\n")
        if chosen.clock == "cpu":
            print("CPU time of the process (--clock cpu: every thread's), not wall time\n")
        timed = measure(names, chosen.sizes, chosen.budget, chosen.repeat, chosen.clock)
        print(table(timed, names, chosen.sizes))
        print("\nEach path's time over jax.jit's at each size (above 1: slower than XLA):\n")
        print(ratios(timed, names, chosen.sizes))
