"""How fast a jax program runs on each path, side by side in one process.

Run from the repository root::

    python benchmarks/speed.py [--programs block,attention,conv,lapack,ffi_calls]
                               [--paths jax,iree,iree-sync,compile] [--calls 40]
                               [--iree-flag=--iree-opt-data-tiling ...]

Paths: ``jax`` is ``jax.jit`` on XLA:CPU; ``iree`` is the export rewritten with
``--abi iree``, compiled by ``rewriter.iree.compile_module`` (its default flags, plus any
``--iree-flag``) and run by ``rewriter.iree.load`` on the ``local-task`` driver (a worker
thread per core); ``iree-sync`` the same on the ``local-sync`` driver (everything on the
calling thread); ``compile`` is the export rewritten for
the C ABI and compiled by ``rewriter.compile`` (with ``--ffi-bridge`` when the program makes
FFI calls). Every path takes numpy arrays and returns numpy arrays. The custom calls of a
program are served by the very handlers jax calls: jaxlib's LAPACK handlers, or the sample
kernels' handlers (``samples/kernels``), through the FFI bridge.

The calls of all paths are interleaved (a few calls of each path in turn, round after round),
so a change of load on a shared machine touches every path alike. Reported per program and
path: the median time of one call, its ratio to jax.jit, the median CPU time of one call
(every thread of the process: the work done, which a loaded machine inflates less than the
time), the compile time (jax: lower +
compile; iree: rewrite + iree-compile; compile: rewrite + the toolchain) and the largest
difference from jax.jit's results relative to their largest magnitude. A path that fails
for a program shows its error in the table; the others still run.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# jaxlib's LAPACK handlers call the OpenBLAS of SciPy's wheel, whose worker threads spin while
# they wait: on a machine with more runnable threads than cores, the 128x128 problems of the
# lapack program took 50 to 150 ms a call on every path instead of 2 ms. One thread, unless
# the caller says otherwise (before numpy loads OpenBLAS).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

import rewriter  # noqa: E402
from benchmarks import blocks  # noqa: E402
from benchmarks.report import figures  # noqa: E402


@dataclass
class Case:
    """A program ready to run: its function on flat numpy inputs, and the XLA FFI handlers
    (target -> capsule) that serve its custom calls outside XLA."""

    function: Callable[..., object]
    inputs: list[np.ndarray]
    handlers: dict[str, object] = field(default_factory=dict)
    note: str = ""


# ---------------------------------------------------------------- the programs


def _normal(rng, *shape, scale: float = 1.0) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def block_case(work: Path) -> Case:
    """4 layers of layer norm, GELU and two 512x512 matmuls, batch 128; no custom call."""
    return _block_case(blocks.block("f32", batch=128, width=512))


def attention_case(work: Path) -> Case:
    """Self-attention: batch 4, 128 tokens, width 256, 8 heads; projections, a softmax and
    two batched matmuls per head."""
    return _block_case(blocks.attention("f32", batch=4, tokens=128, width=256, heads=8))


def conv_case(work: Path) -> Case:
    """A small conv net: 16 images of 32x32x3, three 3x3 convolutions (16, 32, 64 channels,
    the last two with stride 2) with ReLU, global average pooling, a dense layer of 10."""
    return _block_case(blocks.conv("f32", images=16, size=32, channels=(16, 32, 64), kernel=3))


def _block_case(program: blocks.Program) -> Case:
    return Case(program.function, program.inputs)


def lapack_case(work: Path) -> Case:
    """jaxlib's LAPACK handlers: Cholesky (potrf), a solve with it (trsm twice) and the
    eigenvalues (syevd) of a 128x128 SPD matrix, 16 right-hand sides."""
    from rewriter.compile import jaxlib_handlers

    def linalg(a, b):
        factor = jnp.linalg.cholesky(a)
        solution = jax.scipy.linalg.cho_solve((factor, True), b)
        return solution, jnp.linalg.eigvalsh(a)

    rng = np.random.default_rng(3)
    m = _normal(rng, 128, 128)
    a = m @ m.T + 128 * np.eye(128, dtype=np.float32)
    return Case(linalg, [a, _normal(rng, 128, 16)], jaxlib_handlers())


FFI_CALLS = 64


def ffi_calls_case(work: Path) -> Case:
    """64 FFI calls in a row (``scale`` and ``offset`` of samples/two_targets, alternately)
    on 16 floats: the per-call cost of the FFI bridge and of IREE's imports."""
    from kernel_library import HANDLERS, build_kernel_library, register_with_jax, sample

    with quiet_stderr():  # the compiler's warnings about jax's FFI headers
        library = build_kernel_library(work)
    register_with_jax(library)  # jax.jit calls the same handlers
    handle = ctypes.CDLL(str(library))
    kernels = sample("two_targets")

    def chain(x):
        for _ in range(FFI_CALLS // 2):
            x = kernels.offset(kernels.scale(x, 1.01), 0.1)
        return x

    handlers = {t: jax.ffi.pycapsule(getattr(handle, HANDLERS[t])) for t in ("scale", "offset")}
    rng = np.random.default_rng(4)
    return Case(chain, [_normal(rng, 16)], handlers, note=f"{FFI_CALLS} calls")


@contextlib.contextmanager
def quiet_stderr():
    """Hold back what subprocesses write to stderr; show it only if the block fails."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        try:
            yield
        except BaseException:
            held.seek(0)
            os.write(saved, held.read())
            raise
        finally:
            os.dup2(saved, 2)
            os.close(saved)


PROGRAMS: dict[str, Callable[[Path], Case]] = {
    "block": block_case,
    "attention": attention_case,
    "conv": conv_case,
    "lapack": lapack_case,
    "ffi_calls": ffi_calls_case,
}


# ---------------------------------------------------------------- the paths


def _as_tuple(value) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


@dataclass
class Options:
    iree_flags: tuple[str, ...] = ()


def prepare_jax(case: Case, work: Path, options: Options):
    compiled = jax.jit(case.function).lower(*case.inputs).compile()
    return lambda *arrays: tuple(np.asarray(r) for r in _as_tuple(compiled(*arrays)))


def prepare_iree(case: Case, work: Path, options: Options, driver: str = "local-task"):
    from rewriter.iree import compile_module, load
    from rewriter.plan.ffi_facts import parse_facts

    text = rewriter.export(case.function, *case.inputs).original
    source = work / "program.iree.mlir"
    source.write_text(rewriter.rewrite(text, abi="iree").text)
    vmfb = work / "program.vmfb"
    # Every custom call is served by an XLA FFI handler: each becomes a dispatch that calls it.
    _, signatures = compile_module(source, vmfb, extra_args=options.iree_flags, ffi_dispatch=True)
    imports = {s.name: case.handlers[parse_facts(s.ffi_facts).target] for s in signatures}
    module = load(vmfb, imports=imports, driver=driver)
    return lambda *arrays: _as_tuple(module.main(*arrays))


def prepare_compile(case: Case, work: Path, options: Options):
    from rewriter.compile import compile_module, load

    text = rewriter.export(case.function, *case.inputs).original
    library = work / "libprogram.so"
    bridge = bool(case.handlers)
    compile_module(rewriter.rewrite(text).text, library, ffi_bridge=bridge)
    module = load(library, ffi_handlers=case.handlers if bridge else None)
    return lambda *arrays: _as_tuple(module.main(*arrays))


def prepare_iree_sync(case: Case, work: Path, options: Options):
    return prepare_iree(case, work, options, driver="local-sync")


PATHS = {
    "jax": prepare_jax,
    "iree": prepare_iree,
    "iree-sync": prepare_iree_sync,
    "compile": prepare_compile,
}


# ---------------------------------------------------------------- measuring


@dataclass
class Outcome:
    compile_seconds: float = 0.0
    call: Callable[..., tuple] | None = None
    times: list[float] = field(default_factory=list)
    cpu_times: list[float] = field(default_factory=list)
    difference: float | None = None
    error: str | None = None


def _error_text(error: BaseException) -> str:
    """The last line of the error's message, short enough for a table cell."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = f"{type(error).__name__}: {lines[-1] if lines else ''}"
    return text if len(text) <= 120 else text[:117] + "..."


def relative_difference(got: tuple, expected: tuple) -> float:
    """The largest |got - expected| relative to the largest |expected|, over all results."""
    worst = 0.0
    for one, other in zip(got, expected, strict=True):
        other = np.asarray(other, np.float64)
        scale = float(np.max(np.abs(other))) if other.size else 0.0
        gap = float(np.max(np.abs(np.asarray(one, np.float64) - other))) if other.size else 0.0
        worst = max(worst, gap / scale if scale else gap)
    return worst


def measure(case: Case, paths: Sequence[str], calls: int, options: Options, work: Path):
    outcomes = {}
    for name in paths:
        outcome = outcomes[name] = Outcome()
        folder = work / name
        folder.mkdir()
        started = time.perf_counter()
        try:
            outcome.call = PATHS[name](case, folder, options)
            outcome.compile_seconds = time.perf_counter() - started
            outcome.call(*case.inputs)  # warm up (first-call allocations, thread start)
        except Exception as error:
            outcome.error, outcome.call = _error_text(error), None
            if os.environ.get("SPEED_TRACEBACK"):
                traceback.print_exc()
    expected = None
    if "jax" in outcomes and outcomes["jax"].call is not None:
        expected = outcomes["jax"].call(*case.inputs)
    if expected is None:  # jax.jit not asked for: compare with it all the same
        try:
            expected = tuple(np.asarray(r) for r in _as_tuple(jax.jit(case.function)(*case.inputs)))
        except Exception:
            expected = None
    running = {n: o for n, o in outcomes.items() if o.call is not None}
    for outcome in running.values():
        if expected is not None:
            try:
                outcome.difference = relative_difference(outcome.call(*case.inputs), expected)
            except Exception as error:
                outcome.error, outcome.call = _error_text(error), None
    running = {n: o for n, o in outcomes.items() if o.call is not None}
    per_round = 4
    for _ in range(max(1, calls // per_round)):
        for name, outcome in list(running.items()):
            try:
                for _ in range(per_round):
                    started, cpu_started = time.perf_counter(), time.process_time()
                    outcome.call(*case.inputs)
                    outcome.times.append(time.perf_counter() - started)
                    outcome.cpu_times.append(time.process_time() - cpu_started)
            except Exception as error:
                outcome.error = _error_text(error)
                del running[name]
    return outcomes


# ---------------------------------------------------------------- reporting


def table_rows(program: str, case: Case, outcomes: dict[str, Outcome]) -> list[str]:
    base = outcomes.get("jax")
    base_time = statistics.median(base.times) if base and base.times else None
    rows = []
    for name, outcome in outcomes.items():
        label = f"{program} ({case.note})" if case.note else program
        if outcome.error and not outcome.times:
            rows.append(f"| {label} | {name} | {outcome.error} | | | | |")
            continue
        median = statistics.median(outcome.times)
        ratio = f"{median / base_time:.2f}x" if base_time else "-"
        difference = "-" if outcome.difference is None else f"{outcome.difference:.1e}"
        milliseconds = f"{median * 1e3:.3g}" if median < 0.1 else f"{median * 1e3:.0f}"
        if case.note == f"{FFI_CALLS} calls":
            milliseconds += f" ({median / FFI_CALLS * 1e6:.1f} us/call)"
        cpu = statistics.median(outcome.cpu_times) * 1e3
        rows.append(
            f"| {label} | {name} | {milliseconds} | {ratio} | {cpu:.3g} | "
            f"{outcome.compile_seconds:.1f} | {difference} |"
        )
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", default=",".join(PROGRAMS), help="comma-separated")
    parser.add_argument("--paths", default=",".join(PATHS), help="comma-separated")
    parser.add_argument("--calls", type=int, default=40, help="timed calls per path")
    parser.add_argument(
        "--iree-flag",
        action="append",
        default=[],
        metavar="FLAG",
        help="an extra iree-compile flag for the iree path (repeatable)",
    )
    parser.add_argument("--markdown", action="store_true", help="write benchmarks/README.md")
    args = parser.parse_args(argv)
    programs = [p for p in args.programs.split(",") if p]
    paths = [p for p in args.paths.split(",") if p]
    unknown = sorted(set(programs) - set(PROGRAMS)) + sorted(set(paths) - set(PATHS))
    if unknown:
        parser.error(
            f"unknown: {', '.join(unknown)} (programs: {', '.join(PROGRAMS)}; "
            f"paths: {', '.join(PATHS)})"
        )
    options = Options(tuple(args.iree_flag))
    with figures("speed", args.markdown):
        run(programs, paths, args.calls, options)
    return 0


def run(programs: list[str], paths: list[str], calls: int, options: Options) -> None:
    print(f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}")
    print(f"iree: extra flags: {' '.join(options.iree_flags) or 'none'}")
    print()
    print("| program | path | ms per call | vs jax.jit | CPU ms | compile s | max diff |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    work = Path(tempfile.mkdtemp(prefix="speed-"))
    for program in programs:
        folder = work / program
        folder.mkdir()
        try:
            case = PROGRAMS[program](folder)
        except Exception as error:
            print(f"| {program} | - | {_error_text(error)} | | | | |", flush=True)
            continue
        outcomes = measure(case, paths, calls, options, folder)
        print("\n".join(table_rows(program, case, outcomes)), flush=True)


if __name__ == "__main__":
    sys.exit(main())
