"""Speed and memory of the rewrite on call-dense exports, against jaxlib's C++ parser.

``python benchmarks/make_call_dense.py`` first (``--large`` adds the 70k-call export),
then ``python benchmarks/call_dense.py [CORPUS_DIR] [--modes] [--repeats N] [--spread S]``.

For every file: the least CPU time of ``rewriter.rewrite(text).text`` (the rewritten text
is joined when first read) and of jaxlib's ``ir.Module.parse`` +
``get_asm(enable_debug_info=True)`` in this process, run in turns (ours, jaxlib's, ours,
...) for at least N rounds (default 5) and ``--spread`` seconds (default 3; files over
20 MB: 3 rounds at most, no spread, but N for their modes), their ratio (jaxlib's time
over ours: above 1.0 the rewrite is faster), and the rewrite's peak Python memory
(tracemalloc) against the limit 3 x input + 100 MB, and the time of the notebook view
(``Result._repr_html_``, which shows 200 calls). Then, per shape, the growth of the time
from each call count to 4x as many (at most 4.4x is linear), the shape's files run in
turns. ``--modes`` also times the CLI's other modes in this process (``--list``,
``--list --format json``, ``--check``, ``--validate``, ``--emit-header``,
``--emit-ffi-adapters``, ``--abi iree``), each as a multiple of the plain rewrite's time
through the same CLI, all of a file's in turns, and each mode's growth as the rewrite's:
in this process and with each run in a new process.

The growth is measured twice. In this process, the least of runs in turns favours the
smaller files: the allocator keeps a run's pages for the next when they are few and gives
them back when they are many (on this machine a rewrite of `long_attributes_16000` faulted
about 3k pages a run after its first, one of `long_attributes_64000`, whose output alone
is 80 MB, about 53k every run). So each rewrite also runs in a new process (``--one``),
as the command line runs it, where every file's pages are new: the second figure, the
least of those runs, in turns. jaxlib's parse+print of the same files, timed in the same
turns as the rewrite in this process, is the third: what 4x the text costs a C++ parser
on this machine.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import os
import re
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import rewriter  # noqa: E402
from benchmarks.report import figures, header, row  # noqa: E402
from rewriter import cli  # noqa: E402

MODES = {
    "list": ["--list"],
    "json": ["--list", "--format", "json"],
    "check": ["--check"],
    "validate": ["--validate", "-o", "{out}.mlir"],
    "header": ["--emit-header", "{out}.h"],
    "adapters": ["--emit-ffi-adapters", "{out}.c"],
    "iree": ["--abi", "iree", "-o", "{out}.mlir"],
}


def least_seconds(action: Callable[[], object], repeats: int) -> float:
    """The least CPU time of ``repeats`` runs of ``action``: on a shared machine the wall
    clock measures the other jobs too, the CPU time (of this process, all its threads) what
    the action costs, and the least of several runs the one the other jobs disturbed least
    (as ``timeit`` advises)."""
    return least_in_turns({"action": action}, repeats, 0.0)["action"]


def least_in_turns(
    actions: dict[str, Callable[[], object]], rounds: int, spread: float
) -> dict[str, float]:
    """The least CPU time of each action, run in turns (one run of each a round) for at
    least ``rounds`` rounds and ``spread`` seconds. On this shared machine a slow phase
    lasts about a second and slows every run in it by up to 1.7x: runs spread over several
    seconds meet a quiet moment, and actions compared run in the same phases alike."""
    least = dict.fromkeys(actions, float("inf"))
    started = time.perf_counter()
    done = 0
    while done < rounds or time.perf_counter() - started < spread:
        for name, action in actions.items():
            gc.collect()
            before = time.process_time()
            action()
            least[name] = min(least[name], time.process_time() - before)
        done += 1
    return least


def jaxlib_parse_and_print(text: str) -> Callable[[], None]:
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir

    context = mlir.make_ir_context()

    def run() -> None:
        ir.Module.parse(text, context=context).operation.get_asm(enable_debug_info=True)

    return run


def peak_megabytes(action: Callable[[], object]) -> float:
    gc.collect()
    tracemalloc.start()
    action()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 1e6


def run_cli(arguments: list[str]) -> None:
    """``python -m rewriter ARGUMENTS`` in this process, its output thrown away."""
    sink = io.TextIOWrapper(open(os.devnull, "wb"))
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        code = cli.main(arguments)
    sink.close()
    if code not in (0, 1):
        raise RuntimeError(f"rewriter {' '.join(arguments)} exited with {code}")


def mode_command(mode: str, path: Path, out: str) -> list[str]:
    """The CLI's arguments for ``mode`` on ``path``, its outputs at ``out`` and a suffix."""
    return [str(path), *(flag.format(out=out) for flag in MODES[mode])]


def order(path: Path) -> tuple[str, int]:
    shape, _, count = path.stem.rpartition("_")
    return (shape, int(count)) if count.isdigit() else (path.stem, 0)


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("corpus", nargs="?", default=str(ROOT / "benchmarks/corpus/calls"))
    options.add_argument("--modes", action="store_true", help="also time the CLI's modes")
    options.add_argument("--repeats", type=int, default=5, help="least rounds of runs")
    options.add_argument(
        "--spread", type=float, default=3.0, help="least seconds the rounds of a file take"
    )
    options.add_argument(
        "--one", metavar="FILE", help="only time one rewrite of FILE in this process, and print it"
    )
    options.add_argument(
        "--mode", choices=MODES, help="with --one: time the CLI in this mode instead"
    )
    options.add_argument("--markdown", action="store_true", help="write benchmarks/README.md")
    arguments = options.parse_args()
    if arguments.mode and not arguments.one:
        options.error("--mode goes with --one")
    if not arguments.one and not any(Path(arguments.corpus).glob("*.mlir")):
        options.error(
            f"no .mlir files in {arguments.corpus}: write them with "
            "python benchmarks/make_call_dense.py"
        )
    if arguments.one:
        if arguments.mode:
            time_one_mode(Path(arguments.one), arguments.mode)
        else:
            time_one_rewrite(Path(arguments.one))
        return
    with figures("call_dense", arguments.markdown):
        measure(arguments)


def measure(arguments: argparse.Namespace) -> None:
    files = sorted(Path(arguments.corpus).glob("*.mlir"), key=order)
    rewriter.rewrite(files[0].read_text())  # build (or load) the grammar once
    names = ["file", "calls", "MB", "rewrite s", "jaxlib s", "ratio", "peak MB", "limit MB"]
    print(header(*names, "html s", *(MODES if arguments.modes else ())))
    with tempfile.TemporaryDirectory() as scratch:
        for path in files:
            text = path.read_text()
            megabytes = len(text.encode()) / 1e6
            calls = len(re.findall(r"stablehlo\.custom_call", text))
            # Files over 20 MB run 3 rounds at most (a run takes seconds).
            large = megabytes > 20
            repeats = min(3, arguments.repeats) if large else arguments.repeats
            spread = 0.0 if large else arguments.spread
            least = least_in_turns(
                {
                    "ours": lambda text=text: rewriter.rewrite(text).text,
                    "jaxlib": jaxlib_parse_and_print(text),
                },
                repeats,
                spread,
            )
            ours, theirs = least["ours"], least["jaxlib"]
            peak = peak_megabytes(lambda text=text: rewriter.rewrite(text).text)
            result = rewriter.rewrite(text)
            html = least_seconds(result._repr_html_, repeats)
            del result
            cells = [path.stem, calls, f"{megabytes:.1f}", f"{ours:.3f}", f"{theirs:.3f}"]
            cells += [f"{theirs / ours:.2f}", f"{peak:.0f}", f"{3 * megabytes + 100:.0f}"]
            cells.append(f"{html:.3f}")
            if arguments.modes:
                out = str(Path(scratch) / path.stem)
                commands = {"plain": [str(path), "-o", out + ".plain.mlir"]}
                for mode in MODES:
                    commands[mode] = mode_command(mode, path, out)
                # N rounds even for a large file: a mode's ratio to the rewrite, in turns
                # with eight others, moved from 1.62x to 2.12x in 3 (--validate on large).
                modes = least_in_turns(
                    {mode: lambda c=command: run_cli(c) for mode, command in commands.items()},
                    arguments.repeats,
                    spread,
                )
                cells += [f"{modes[mode] / modes['plain']:.2f}x" for mode in MODES]
            print(row(*cells), flush=True)
    print_growth(files, arguments.repeats, arguments.spread, arguments.modes)


def print_growth(files: list[Path], rounds: int, spread: float, modes: bool) -> None:
    """Per shape, the growth of the rewrite's time from each call count to 4x as many: in
    this process, the files of one shape in turns, so that a slow phase of the machine
    (see ``least_in_turns``) slows them alike instead of one figure of a ratio; and with
    each rewrite in a new process (``fresh_process_seconds``), in turns too. jaxlib's
    parse+print of the same files, in the same turns, shows what the machine's memory
    makes of 4x the text for a C++ parser. ``modes``: each mode's growth as well, through
    the CLI in this process."""
    by_shape: dict[str, dict[int, Path]] = {}
    for path in files:
        shape, count = order(path)
        if count:
            by_shape.setdefault(shape, {})[count] = path
    print(
        "Growth for 4x the calls (linear: at most 4.4x; a shape's files run in turns): in "
        "this process, with each rewrite in a new process, and jaxlib's parse+print in "
        "this process."
    )
    print(header("shape", "calls", "rewrite", "new processes", "jaxlib"))
    for shape, paths in sorted(by_shape.items()):
        counts = sorted(paths)
        texts = {count: paths[count].read_text() for count in counts}
        actions: dict[str, Callable[[], object]] = {}
        for count in counts:
            actions[f"ours {count}"] = lambda text=texts[count]: rewriter.rewrite(text).text
            actions[f"jaxlib {count}"] = jaxlib_parse_and_print(texts[count])
        least = least_in_turns(actions, rounds, spread)
        del texts, actions
        fresh = least_reported(
            {
                f"ours {count}": lambda path=paths[count]: fresh_process_seconds(path)
                for count in counts
            },
            rounds,
        )
        for count in counts:
            if 4 * count in paths:
                ours, anew, jaxlib = (
                    times[f"{who} {4 * count}"] / times[f"{who} {count}"]
                    for who, times in (("ours", least), ("ours", fresh), ("jaxlib", least))
                )
                steps = f"{count} -> {4 * count}"
                print(row(shape, steps, f"{ours:.2f}x", f"{anew:.2f}x", f"{jaxlib:.2f}x"))
        if modes:
            print_modes_growth(shape, paths, rounds, spread)


def print_modes_growth(shape: str, paths: dict[int, Path], rounds: int, spread: float) -> None:
    """Each mode's growth for 4x the calls, the shape's files in turns through the CLI:
    in this process, and with each run in a new process (``fresh_process_seconds``)."""
    counts = sorted(paths)
    with tempfile.TemporaryDirectory() as scratch:
        for mode in MODES:
            commands = {
                str(count): mode_command(mode, path, f"{scratch}/{shape}_{count}")
                for count, path in paths.items()
            }
            least = least_in_turns(
                {count: lambda c=command: run_cli(c) for count, command in commands.items()},
                rounds,
                spread,
            )
            fresh = least_reported(
                {
                    str(count): lambda path=path, mode=mode: fresh_process_seconds(path, mode)
                    for count, path in paths.items()
                },
                rounds,
            )
            steps = [
                f"{count} -> {4 * count}: {least[str(4 * count)] / least[str(count)]:.2f}x"
                f" / {fresh[str(4 * count)] / fresh[str(count)]:.2f}x"
                for count in counts
                if 4 * count in paths
            ]
            print(f"{shape}, {mode} (this process / new processes): " + "; ".join(steps))


def least_reported(actions: dict[str, Callable[[], float]], rounds: int) -> dict[str, float]:
    """The least of the seconds each action reports, run in turns for ``rounds`` rounds."""
    least = dict.fromkeys(actions, float("inf"))
    for _ in range(rounds):
        for name, action in actions.items():
            least[name] = min(least[name], action())
    return least


def fresh_process_seconds(path: Path, mode: str | None = None) -> float:
    """The CPU time of one rewrite of ``path`` in a new Python process, as the command line
    runs it (``time_one_rewrite``), or of one run of the CLI in ``mode`` (``time_one_mode``)."""
    command = [sys.executable, __file__, "--one", str(path)]
    if mode is not None:
        command += ["--mode", mode]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return float(done.stdout)


def time_one_rewrite(path: Path) -> None:
    """Print the CPU time of one rewrite of ``path``, after one of a bundled sample, which
    loads what every process loads once (the modules, the grammar's tables)."""
    rewriter.rewrite((ROOT / "samples/rms_norm/rms_norm.mlir").read_text())
    text = path.read_text()
    before = time.process_time()
    rewritten = rewriter.rewrite(text).text
    print(time.process_time() - before)
    del rewritten


def time_one_mode(path: Path, mode: str) -> None:
    """Print the CPU time of one run of the CLI in ``mode`` on ``path`` (its outputs thrown
    away), after one on a bundled sample, which loads what every such process loads."""
    with tempfile.TemporaryDirectory() as scratch:
        run_cli(mode_command(mode, ROOT / "samples/rms_norm/rms_norm.mlir", f"{scratch}/sample"))
        command = mode_command(mode, path, f"{scratch}/{path.stem}")
        before = time.process_time()
        run_cli(command)
        seconds = time.process_time() - before
    print(seconds)


if __name__ == "__main__":
    main()
