"""How long ``python -m rewriter.compile`` takes for a block, from nothing and from its cache.

Run from the repository root::

    python benchmarks/compile_time.py [PROGRAM ...] [--runs 3] [--stages]

Programs: ``rms_norm`` (the tutorial's, ``samples/rms_norm``, with its FFI call served by
the bridge) and the blocks of ``benchmarks/speed.py`` (``block``: 4 layers of layer norm,
GELU and two 512x512 matmuls; ``attention``; ``conv``), exported with jax and rewritten.
Each is compiled by the command line, a new process each time, with a compile cache of its
own (``$REWRITER_CACHE_DIR`` in a temporary folder):

- ``empty``: the cache is empty (the package's own C files are compiled too);
- ``new``: the cache has what other modules left (the objects of the package's C files),
  not this module: what compiling a new or changed module costs;
- ``cached``: the same compile again (installed from the cache, no tool runs; Python's
  bytecode of the package is written and used, as an installed package has it, whatever
  ``$PYTHONDONTWRITEBYTECODE`` says);
- ``api cached``: ``compile_module`` again in one process (no interpreter start-up).

Each figure is the least of ``--runs`` runs, in seconds: the wall time and, in brackets,
the CPU time of the compile's processes (what it costs whatever else the cores do; on an
idle machine the wall time is about that). ``jax.jit`` is the first ``lower`` + ``compile``
of the same function in this process (jax keeps what it compiled), for comparison.
``--stages`` prints where the time of one ``new`` compile goes, stage by stage, timed in
this process. Prints the load average first and after: the cores may be shared.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's rewriter, as the command line runs it
sys.path.insert(0, str(ROOT / "benchmarks"))

from benchmarks.report import figures, header, row  # noqa: E402

RMS_NORM = ROOT / "samples" / "rms_norm" / "rms_norm.rewritten.mlir"
BLOCKS = ("block", "attention", "conv")
PROGRAMS = ("rms_norm", *BLOCKS)


def exported(name: str, work: Path) -> tuple[Path, list[str], Callable[[], float] | None]:
    """The rewritten module of ``name``, the command line's options, and a function that
    times jax.jit's lower + compile of the program (None for rms_norm)."""
    if name == "rms_norm":
        return RMS_NORM, ["--ffi-bridge"], None
    import jax
    import speed

    import rewriter

    case = getattr(speed, f"{name}_case")(work)
    text = rewriter.export(case.function, *case.inputs).original
    module = work / f"{name}.rewritten.mlir"
    module.write_text(rewriter.rewrite(text).text, encoding="utf-8")

    def jit_seconds() -> float:
        started = time.perf_counter()
        jax.jit(case.function).lower(*case.inputs).compile()
        return time.perf_counter() - started

    return module, [], jit_seconds


def children_cpu() -> float:
    """CPU seconds (user and system) of the processes this one has waited for, theirs
    included: what a compile costs whatever else the cores are doing."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cli_seconds(module: Path, options: list[str], output: Path, cache: Path) -> Figure:
    environment = dict(os.environ, REWRITER_CACHE_DIR=str(cache))
    # Python keeps the package's compiled bytecode (pip compiles it at install): without
    # it every run compiles the rewriter's source again (~50 ms), which no user pays.
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    started, cpu = time.perf_counter(), children_cpu()
    subprocess.run(
        [sys.executable, "-m", "rewriter.compile", str(module), "-o", str(output), *options],
        cwd=ROOT,
        env=environment,
        check=True,
        capture_output=True,
    )
    return Figure(time.perf_counter() - started, children_cpu() - cpu)


@dataclass(frozen=True, order=True)
class Figure:
    seconds: float  # wall time
    cpu: float  # CPU time of the compile's processes

    def __str__(self) -> str:
        return f"{self.seconds:.3f} ({self.cpu:.3f})"


def api_cached_seconds(module: Path, options: list[str], output: Path, cache: Path) -> float:
    from rewriter.compile import compile_module

    os.environ["REWRITER_CACHE_DIR"] = str(cache)
    text = module.read_text(encoding="utf-8")
    bridge = "--ffi-bridge" in options
    compile_module(text, output, ffi_bridge=bridge, filename=str(module))
    started = time.perf_counter()
    compile_module(text, output, ffi_bridge=bridge, filename=str(module))
    return time.perf_counter() - started


def stage_seconds(module: Path, options: list[str], output: Path, cache: Path) -> list[str]:
    """One compile with the cache's objects but not this module, timed stage by stage."""
    from rewriter.compile import build, toolchain

    shutil.rmtree(cache / "compile", ignore_errors=True)
    os.environ["REWRITER_CACHE_DIR"] = str(cache)
    timed: list[tuple[str, Figure]] = []
    depth = [0]  # a step inside a timed step (a stage's tool) is not timed again

    def cpu() -> float:
        return time.process_time() + children_cpu()

    def wrap(owner, name: str, label: Callable[..., str]):
        original = getattr(owner, name)

        def timing(*arguments, **keywords):
            depth[0] += 1
            started, used = time.perf_counter(), cpu()
            try:
                return original(*arguments, **keywords)
            finally:
                depth[0] -= 1
                if depth[0] == 0:
                    figure = Figure(time.perf_counter() - started, cpu() - used)
                    timed.append((label(*arguments), figure))

        setattr(owner, name, timing)
        return original

    originals = [
        (build, "_import_iree", wrap(build, "_import_iree", lambda: "import iree.compiler")),
        (build, "_entries", wrap(build, "_entries", lambda *a: "entries (IREE's bindings)")),
        (build, "run_stage", wrap(build, "run_stage", lambda stage, *a: f"stage {stage.name}")),
        (
            toolchain,
            "_run_together",
            wrap(toolchain, "_run_together", lambda s, c: f"clang -c, {len(c)} at once"),
        ),
        (toolchain, "_run", wrap(toolchain, "_run", lambda s, c: f"{s} ({Path(c[0]).name})")),
    ]
    try:
        started, used = time.perf_counter(), cpu()
        text = module.read_text(encoding="utf-8")
        build.compile_module(
            text, output, ffi_bridge="--ffi-bridge" in options, filename=str(module)
        )
        total = Figure(time.perf_counter() - started, cpu() - used)
    finally:
        for owner, name, original in originals:
            setattr(owner, name, original)
    shown = [f"    {figure!s:>14} {label}" for label, figure in timed]
    rest = Figure(
        total.seconds - sum(f.seconds for _, f in timed), total.cpu - sum(f.cpu for _, f in timed)
    )
    shown.append(f"    {rest!s:>14} the rest (checks, key, tools' questions)")
    shown.append(f"    {total!s:>14} in all")
    return shown


def main(argv: list[str] | None = None) -> None:
    arguments = parse_arguments(argv)
    with figures("compile_time", arguments.markdown):
        measure(arguments)


def measure(arguments: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="compile-time-"))
    print("Seconds: wall time (CPU time of the compile's processes), least of the runs.")
    print(header("program", "empty", "new", "cached", "api cached", "jax.jit"))
    try:
        for name in arguments.programs or PROGRAMS:
            module, options, jit = exported(name, work)
            output = work / f"lib{name}.so"
            empty: list[Figure] = []
            new: list[Figure] = []
            cached: list[Figure] = []
            api: list[float] = []
            for run in range(arguments.runs):
                cache = work / f"cache-{name}-{run}"
                empty.append(cli_seconds(module, options, output, cache))
                shutil.rmtree(cache / "compile", ignore_errors=True)  # the entry; objects stay
                new.append(cli_seconds(module, options, output, cache))
                cached.append(cli_seconds(module, options, output, cache))
                api.append(api_cached_seconds(module, options, output, cache))
            jit_figure = f"{jit():.3f}" if jit else ""  # once: jax keeps what it compiled
            cells = [min(empty), min(new), min(cached), f"{min(api):.3f}", jit_figure]
            print(row(name, *(str(cell).strip() for cell in cells)), flush=True)
            if arguments.stages:
                print(f"Stages of one new compile of {name}:")
                for line in stage_seconds(module, options, output, work / f"cache-{name}-0"):
                    print(line)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Compile times of rewriter.compile (command line, a new process each "
        "time): from an empty cache, for a module new to the cache, and from the cache."
    )
    parser.add_argument(
        "programs",
        nargs="*",
        metavar="PROGRAM",
        help=f"programs to compile, among {', '.join(PROGRAMS)} (default: all)",
    )
    parser.add_argument("--runs", type=int, default=3, help="runs of each; the least is shown")
    parser.add_argument(
        "--stages", action="store_true", help="also time the stages of one new compile"
    )
    parser.add_argument("--markdown", action="store_true", help="write benchmarks/README.md")
    arguments = parser.parse_args(argv)
    unknown = [name for name in arguments.programs if name not in PROGRAMS]
    if unknown:
        parser.error(f"unknown program {unknown[0]!r} (choose from {', '.join(PROGRAMS)})")
    if arguments.runs < 1:
        parser.error("--runs must be at least 1")
    return arguments


if __name__ == "__main__":
    main()
