"""The blocks of speed.py over a grid of shapes and both float types, on every path.

Run from the repository root::

    python benchmarks/shape_sweep.py [--quick] [--programs block,attention,conv]
                                     [--dtypes f32,f64]
                                     [--paths jax,compile,iree,iree-sync,iree-default]
                                     [--rounds 5] [--shapes TEXT] [--markdown]

The three programs of ``speed.py`` (``block``: 4 layers of layer norm, GELU and two square
matmuls; ``attention``: self-attention with four projections; ``conv``: three convolutions,
global pooling and a dense layer), each built for a shape of the grid: the batch and width
of the block; the batch, tokens, width and heads of the attention; the images, their size,
the channels and the kernel size of the conv net; and each in float32 and float64 (the
latter with ``jax_enable_x64``); ``--shapes TEXT`` keeps the shapes whose description
contains TEXT (``--shapes "batch 300, width 512"``), not with ``--markdown``. Paths: ``jax``
is ``jax.jit``; ``compile`` is ``rewriter.compile``; ``iree`` is ``rewriter.iree`` on the
``local-task`` driver, ``iree-sync`` the same module on ``local-sync``, ``iree-default`` the
same module on the driver ``load`` picks when it is not told one (what a user gets:
``rewriter/iree/drivers.py``).

Each round of calls is timed on two clocks: the CPU time of every thread of the process
(the work done, which load on a shared machine inflates less) and wall time (what a caller
waits: where ``local-task``'s worker threads finish sooner than one thread, at the cost of
more CPU). The paths of a case run in turns, a few calls of each a round, and each path's
figures are the least over the rounds of each clock's time of one call. Per case and path:
those figures, their ratios to ``jax.jit``'s, and the largest absolute difference from
``jax.jit``'s results. At the end, the worst ratio of each path on each clock and its case.
A path that fails for a case shows the error's first line in the table; the others still
run.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# As speed.py: one OpenBLAS thread unless the caller says otherwise (before numpy loads
# OpenBLAS), since OpenBLAS's threads spin while they wait on a loaded machine.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import jax  # noqa: E402
import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import rewriter  # noqa: E402
from benchmarks import blocks  # noqa: E402
from benchmarks.blocks import DTYPES  # noqa: E402
from benchmarks.report import figures, header, row  # noqa: E402

# ---------------------------------------------------------------- the programs


@dataclass
class Case:
    """One program at one shape and float type: its function and its numpy inputs."""

    program: str
    dtype: str
    shape: str
    function: Callable[..., object]
    inputs: list[np.ndarray]

    @property
    def label(self) -> str:
        return f"{self.program} {self.dtype} {self.shape}"


def block_case(dtype: str, batch: int, width: int, layers: int = 4) -> Case:
    return Case("block", dtype, *_parts(blocks.block(dtype, batch, width, layers)))


def attention_case(dtype: str, batch: int, tokens: int, width: int, heads: int) -> Case:
    return Case("attention", dtype, *_parts(blocks.attention(dtype, batch, tokens, width, heads)))


def conv_case(
    dtype: str, images: int, size: int, channels: tuple[int, int, int], kernel: int
) -> Case:
    return Case("conv", dtype, *_parts(blocks.conv(dtype, images, size, channels, kernel)))


def _parts(program: blocks.Program) -> tuple[str, Callable[..., object], list[np.ndarray]]:
    return program.shape, program.function, program.inputs


PROGRAMS: dict[str, Callable[..., Case]] = {
    "block": block_case,
    "attention": attention_case,
    "conv": conv_case,
}

# Each program's shapes (the arguments after the dtype). The default grid varies one
# dimension at a time around speed.py's shape, plus the smallest and the largest corner.
GRID: dict[str, list[tuple]] = {
    "block": [(128, 512), (32, 512), (300, 512), (128, 256), (128, 768), (32, 256), (300, 768)],
    "attention": [
        (4, 128, 256, 8),
        (1, 128, 256, 8),
        (4, 64, 256, 8),
        (4, 200, 256, 8),
        (4, 128, 128, 8),
        (4, 128, 256, 4),
        (1, 64, 128, 4),
        (4, 200, 256, 4),
    ],
    "conv": [
        (16, 32, (16, 32, 64), 3),
        (4, 32, (16, 32, 64), 3),
        (16, 48, (16, 32, 64), 3),
        (16, 32, (8, 16, 32), 3),
        (16, 32, (16, 32, 64), 5),
        (4, 32, (8, 16, 32), 3),
        (16, 48, (16, 32, 64), 5),
    ],
}
# --quick: the smallest and the largest corner of each program.
QUICK: dict[str, list[tuple]] = {
    "block": [(32, 256), (300, 768)],
    "attention": [(1, 64, 128, 4), (4, 200, 256, 4)],
    "conv": [(4, 32, (8, 16, 32), 3), (16, 48, (16, 32, 64), 5)],
}
# --tiny (the tests' smoke run): one case per program, as small as it gets.
TINY: dict[str, list[tuple]] = {
    "block": [(2, 16, 1)],
    "attention": [(1, 8, 16, 2)],
    "conv": [(1, 8, (2, 2, 2), 3)],
}


# ---------------------------------------------------------------- the paths


def _as_tuple(value) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def prepare_jax(case: Case, work: Path) -> dict[str, Callable]:
    compiled = jax.jit(case.function).lower(*case.inputs).compile()
    return {"jax": lambda *arrays: tuple(np.asarray(r) for r in _as_tuple(compiled(*arrays)))}


def prepare_compile(case: Case, work: Path) -> dict[str, Callable]:
    from rewriter.compile import compile_module, load

    text = rewriter.export(case.function, *case.inputs).text
    library = work / "libprogram.so"
    compile_module(rewriter.rewrite(text).text, library)
    module = load(library)
    return {"compile": lambda *arrays: _as_tuple(module.main(*arrays))}


def prepare_iree(case: Case, work: Path, drivers: Sequence[str]) -> dict[str, Callable]:
    """One module, loaded on each driver asked for: ``load`` compiles it (once: the second
    comes from the compile cache) with the products it gives the BLAS."""
    from rewriter.iree import load

    text = rewriter.export(case.function, *case.inputs).text
    source = work / "program.iree.mlir"
    source.write_text(rewriter.rewrite(text, abi="iree").text)
    calls = {}
    chosen = (("iree", "local-task"), ("iree-sync", "local-sync"), ("iree-default", None))
    for path, driver in chosen:
        if path in drivers:
            module = load(source, imports={}, driver=driver)
            calls[path] = lambda *arrays, module=module: _as_tuple(module.main(*arrays))
    return calls


PATHS = ("jax", "compile", "iree", "iree-sync", "iree-default")


# ---------------------------------------------------------------- measuring


@dataclass
class Outcome:
    call: Callable[..., tuple] | None = None
    cpu_seconds: float | None = None  # the least CPU time of one call over the rounds
    wall_seconds: float | None = None  # the least wall time of one call over the rounds
    difference: float | None = None
    error: str | None = None
    rounds: list[tuple[float, float]] = field(default_factory=list)  # (CPU, wall) a call


def first_line(error: BaseException) -> str:
    """The error's type and the first line of its message, short enough for a cell."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = f"{type(error).__name__}: {lines[0] if lines else ''}"
    text = text.replace("|", "\\|")
    return text if len(text) <= 160 else text[:157] + "..."


def max_abs_difference(got: tuple, expected: tuple) -> float:
    worst = 0.0
    for one, other in zip(got, expected, strict=True):
        one, other = np.asarray(one), np.asarray(other)
        if one.shape != other.shape or one.dtype != other.dtype:
            raise ValueError(
                f"result {one.dtype}{list(one.shape)}, jax.jit's {other.dtype}{list(other.shape)}"
            )
        if other.size:
            gap = np.max(np.abs(one.astype(np.float64) - other.astype(np.float64)))
            worst = max(worst, float(gap))
    return worst


def prepare(case: Case, paths: Sequence[str], work: Path) -> dict[str, Outcome]:
    outcomes = {name: Outcome() for name in paths}
    preparers: list[tuple[tuple[str, ...], Callable[[], dict[str, Callable]]]] = [
        (("jax",), lambda: prepare_jax(case, work / "jax")),
        (("compile",), lambda: prepare_compile(case, work / "compile")),
        (("iree", "iree-sync", "iree-default"), lambda: prepare_iree(case, work / "iree", paths)),
    ]
    for names, preparer in preparers:
        asked = [n for n in names if n in paths]
        if not asked:
            continue
        (work / names[0]).mkdir(parents=True, exist_ok=True)
        try:
            for name, call in preparer().items():
                outcomes[name].call = call
        except Exception as error:
            if os.environ.get("SWEEP_TRACEBACK"):
                traceback.print_exc()
            for name in asked:
                outcomes[name].error = first_line(error)
    return outcomes


def measure(
    case: Case,
    paths: Sequence[str],
    rounds: int,
    work: Path,
) -> dict[str, Outcome]:
    """Each path's least CPU time and least wall time of one call."""
    outcomes = prepare(case, paths, work)
    expected = None
    try:
        expected = tuple(np.asarray(r) for r in _as_tuple(jax.jit(case.function)(*case.inputs)))
    except Exception as error:
        if "jax" in outcomes:
            outcomes["jax"].error, outcomes["jax"].call = first_line(error), None
    per_round = {}
    for name, outcome in outcomes.items():
        if outcome.call is None:
            continue
        try:
            outcome.call(*case.inputs)  # warm up: first-call allocations, threads
            started = time.process_time()
            got = outcome.call(*case.inputs)
            one = time.process_time() - started
            if expected is not None:
                outcome.difference = max_abs_difference(got, expected)
            # Enough calls a round for 20 ms of CPU, so the clock's grain does not count.
            per_round[name] = max(1, min(50, math.ceil(0.02 / max(one, 1e-6))))
        except Exception as error:
            if os.environ.get("SWEEP_TRACEBACK"):
                traceback.print_exc()
            outcome.error, outcome.call = first_line(error), None
    running = {n: (o, o.call) for n, o in outcomes.items() if o.call is not None}
    for _ in range(rounds):
        for name, (outcome, call) in list(running.items()):
            calls = per_round[name]
            try:
                cpu, wall = time.process_time(), time.perf_counter()
                for _ in range(calls):
                    call(*case.inputs)
                cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
                outcome.rounds.append((cpu / calls, wall / calls))
            except Exception as error:
                outcome.error = first_line(error)
                del running[name]
    for outcome in outcomes.values():
        if outcome.rounds:
            outcome.cpu_seconds = min(cpu for cpu, _ in outcome.rounds)
            outcome.wall_seconds = min(wall for _, wall in outcome.rounds)
    return outcomes


# ---------------------------------------------------------------- reporting


def _milliseconds(seconds: float) -> str:
    return f"{seconds * 1e3:.3g}" if seconds < 0.1 else f"{seconds * 1e3:.0f}"


def table_rows(case: Case, outcomes: dict[str, Outcome]) -> list[str]:
    base = outcomes.get("jax")
    rows = []
    for name, outcome in outcomes.items():
        cells = [case.program, case.dtype, case.shape, name]
        if outcome.cpu_seconds is None or outcome.wall_seconds is None:
            rows.append(row(*cells, f"failed: {outcome.error}", "", "", "", ""))
            continue
        figures = []
        for seconds, base_seconds in (
            (outcome.cpu_seconds, base.cpu_seconds if base else None),
            (outcome.wall_seconds, base.wall_seconds if base else None),
        ):
            ratio = f"{seconds / base_seconds:.2f}x" if base_seconds else "-"
            if outcome.error:  # failed after some rounds
                ratio += f" (then failed: {outcome.error})"
            figures += [_milliseconds(seconds), ratio]
        difference = "-" if outcome.difference is None else f"{outcome.difference:.1e}"
        rows.append(row(*cells, *figures, difference))
    return rows


@dataclass
class Worst:
    """A path's worst ratio to ``jax.jit`` on one clock, its case, and the counts."""

    ratio: float = 0.0
    label: str = ""
    cases: int = 0
    over: int = 0  # cases above LIMIT
    failures: list[str] = field(default_factory=list)

    def add(self, label: str, seconds: float | None, base: float | None) -> None:
        if seconds is None:
            self.failures.append(label)
        elif base:
            ratio = seconds / base
            self.cases += 1
            self.over += ratio > LIMIT
            if ratio > self.ratio:
                self.ratio, self.label = ratio, label


LIMIT = 1.2  # the target: at most 1.2x jax.jit on every block


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", default=",".join(PROGRAMS), help="comma-separated")
    parser.add_argument("--dtypes", default=",".join(DTYPES), help="comma-separated")
    parser.add_argument("--paths", default=",".join(PATHS), help="comma-separated")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of calls per path")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="two shapes per program")
    size.add_argument("--tiny", action="store_true", help="one tiny shape (a smoke test)")
    parser.add_argument(
        "--shapes", default="", help='only shapes whose description contains this ("tokens 64")'
    )
    parser.add_argument("--markdown", action="store_true", help="write benchmarks/README.md")
    args = parser.parse_args(argv)
    programs = [p for p in args.programs.split(",") if p]
    dtypes = [d for d in args.dtypes.split(",") if d]
    paths = [p for p in args.paths.split(",") if p]
    for what, given, known in (
        ("program", programs, PROGRAMS),
        ("dtype", dtypes, DTYPES),
        ("path", paths, PATHS),
    ):
        unknown = [g for g in given if g not in known]
        if unknown:
            parser.error(f"unknown {what} {unknown[0]!r} (choose from {', '.join(known)})")
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.shapes and args.markdown:
        parser.error("--markdown writes the whole grid's table: not with --shapes")
    if "jax" not in paths:
        paths.insert(0, "jax")  # the ratios are to jax.jit
    grid = TINY if args.tiny else QUICK if args.quick else GRID
    with figures("shape_sweep", args.markdown):
        run(programs, dtypes, paths, args.rounds, grid, args.shapes)
    return 0


def run(
    programs: list[str],
    dtypes: list[str],
    paths: list[str],
    rounds: int,
    grid: dict[str, list[tuple]],
    shapes: str = "",
) -> None:
    print(f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}")
    print(
        f"CPU ms: the least over {rounds} rounds of the CPU time of one call (all threads of "
        "the process); wall ms: the least over the same rounds of the wall time of one call"
    )
    print()
    print(
        header(
            "program", "dtype", "shape", "path", "CPU ms", "vs jax.jit",
            "wall ms", "vs jax.jit", "max abs diff",
        )
    )  # fmt: skip
    work = Path(tempfile.mkdtemp(prefix="shape-sweep-"))
    clocks = ("CPU", "wall")
    worst = {(name, clock): Worst() for name in paths if name != "jax" for clock in clocks}
    number = 0
    for dtype in dtypes:  # f64 needs jax_enable_x64; f32 runs without, as speed.py
        jax.config.update("jax_enable_x64", dtype == "f64")
        for program in programs:
            for shape in grid[program]:
                number += 1
                folder = work / str(number)
                try:
                    case = PROGRAMS[program](dtype, *shape)
                except Exception as error:
                    failed = f"failed: {first_line(error)}"
                    print(row(program, dtype, shape, "-", failed, "", "", "", ""))
                    continue
                if shapes not in case.shape:
                    continue
                outcomes = measure(case, paths, rounds, folder)
                print("\n".join(table_rows(case, outcomes)), flush=True)
                base = outcomes["jax"]
                for name, outcome in outcomes.items():
                    if name != "jax":
                        worst[name, "CPU"].add(case.label, outcome.cpu_seconds, base.cpu_seconds)
                        worst[name, "wall"].add(case.label, outcome.wall_seconds, base.wall_seconds)
    jax.config.update("jax_enable_x64", False)
    print()
    print(f"The worst ratio to jax.jit per path and clock (the issue asks at most {LIMIT}x):")
    print()
    print(header("path", "clock", "worst vs jax.jit", "case", f"cases over {LIMIT}x", "failed"))
    for (name, clock), mark in worst.items():
        failed = str(len(mark.failures))
        if mark.failures:
            failed += f" ({'; '.join(mark.failures)})"
        worst_ratio = f"{mark.ratio:.2f}x" if mark.cases else "-"
        cells = (name, clock, worst_ratio, mark.label or "-", f"{mark.over} of {mark.cases}")
        print(row(*cells, failed))


if __name__ == "__main__":
    sys.exit(main())
