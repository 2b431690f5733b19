"""The compiled path's loops on one thread and split over the machine's cores, beside
jax.jit: wall time and CPU time, in one process.

Run from the repository root: ``python benchmarks/thread_split.py [OP ...] [--sizes N,...]``.
Each op of ``benchmarks/op_complexity.py`` is exported at each size and compiled twice,
``threads=1`` (one thread) and ``threads=N`` (``--threads``, by default the CPUs this
process may use: ``rewriter/compile/parallel_loops.py``); the three take turns, and each
figure is the least of ``--repeat`` medians (``op_complexity.median_ms``), on the wall
clock and on the process's CPU clock (every thread: the work done). Prints the load
average first and last, then a markdown table: ms per call and each compile's time over
jax.jit's.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import rewriter  # noqa: E402
from benchmarks.op_complexity import OPS, _export, _jit, median_ms  # noqa: E402
from benchmarks.report import sizes  # noqa: E402
from rewriter.compile import compile_module, load  # noqa: E402
from rewriter.compile.parallel_loops import default_threads  # noqa: E402

OPS_SHOWN = ("gather", "token_while", "cumsum", "argmax", "reduce_window_max")
SIZES = (1_000, 64_000, 512_000, 4_096_000)
CLOCKS = ("wall", "cpu")


def measure(names: list[str], counts: list[int], threads: int, repeat: int) -> list[str]:
    """The table's rows, printing each figure as it comes."""
    work = Path(tempfile.mkdtemp(prefix="thread-split-"))
    rows = []
    for name in names:
        for size in counts:
            arguments = OPS[name][1](size)
            text = rewriter.rewrite(_export(name, size, arguments)).text
            functions: dict[str, Callable[..., object]] = {"jit": _jit(name)}
            for count in (1, threads):
                library = work / f"lib{name}{size}-{count}.so"
                compile_module(text, library, threads=count, cache=False)
                functions[f"{count} thread{'s' if count > 1 else ''}"] = load(library).main
            for clock in CLOCKS:
                least: dict[str, float] = {}
                for _ in range(repeat):
                    for path, function in functions.items():
                        ms = median_ms(function, arguments, clock=clock)
                        least[path] = min(ms, least.get(path, ms))
                base = least["jit"]
                cells = [f"{ms:.3g} ({ms / base:.2f}x)" for ms in least.values()]
                rows.append(f"| {name} | {size:,} | {clock} | " + " | ".join(cells) + " |")
                print(rows[-1], file=sys.stderr, flush=True)
    header = f"| op | elements | clock | jit | 1 thread | {threads} threads |"
    return [header, "|" + " --- |" * 6, *rows]


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="jax.jit against rewriter.compile on one thread and on N: wall and CPU "
        "ms per call of the ops around third-party calls."
    )
    parser.add_argument(
        "ops",
        nargs="*",
        metavar="OP",
        help=f"ops to time, among {', '.join(OPS)} (default: {', '.join(OPS_SHOWN)})",
    )
    parser.add_argument(
        "--sizes",
        type=sizes,
        default=",".join(map(str, SIZES)),
        help="comma-separated element counts (default: %(default)s)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=max(2, default_threads()),
        help="threads of the split compile (default: the CPUs this process may use, at "
        "least 2: %(default)s)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="each figure is the least of this many medians (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    for name in args.ops:
        if name not in OPS:
            parser.error(f"unknown op {name!r} (choose from {', '.join(OPS)})")
    if args.threads < 2:
        parser.error("--threads must be at least 2")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    names = args.ops or list(OPS_SHOWN)
    print(f"load average: {os.getloadavg()}", file=sys.stderr)
    lines = measure(names, args.sizes, args.threads, args.repeat)
    print(f"load average: {os.getloadavg()}", file=sys.stderr)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
