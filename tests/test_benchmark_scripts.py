"""The benchmark scripts' command lines: ``--help`` and a wrong argument are answered by
argparse, never by a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

# The scripts import jax before they read their arguments (a few seconds each).
pytestmark = [pytest.mark.jax, pytest.mark.slow]

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def run_script(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / name), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


SCRIPTS = [
    "call_dense.py", "compile_speed.py", "instructions.py", "speed.py", "make_corpus.py",
    "run.py", "make_call_dense.py", "call_overhead.py", "sort_speed.py", "compile_time.py",
    "op_complexity.py", "shape_sweep.py", "trig_speed.py", "thread_split.py", "wide_calls.py",
    "math_speed.py",
]  # fmt: skip


@pytest.mark.parametrize("name", SCRIPTS)
def test_help_prints_usage(name):
    done = run_script(name, "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: {name}")
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("name", "argument", "error"),
    [
        ("compile_speed.py", "nope", "unknown program 'nope' (choose from block, attention, conv)"),
        ("instructions.py", "no/such.mlir", "no such file: no/such.mlir"),
        (
            "compile_time.py",
            "nope",
            "unknown program 'nope' (choose from rms_norm, block, attention, conv)",
        ),
        ("op_complexity.py", "nope", "unknown op 'nope' (choose from argsort, lexsort,"),
        (
            "shape_sweep.py",
            "--programs=nope",
            "unknown program 'nope' (choose from block, attention, conv)",
        ),
        ("shape_sweep.py", "--dtypes=f16", "unknown dtype 'f16' (choose from f32, f64)"),
        ("call_dense.py", "no/such/folder", "no .mlir files in no/such/folder"),
        ("trig_speed.py", "--size=nope", "argument --size: invalid int value: 'nope'"),
        ("math_speed.py", "--size=nope", "argument --size: invalid int value: 'nope'"),
        (
            "wide_calls.py",
            "--operands=nope",
            "argument --operands: counts separated by commas, not 'nope'",
        ),
    ],
)
def test_a_wrong_argument_is_named(name, argument, error):
    done = run_script(name, argument)
    assert done.returncode == 2
    assert f"error: {error}" in done.stderr
    assert "Traceback" not in done.stderr


def test_shape_sweep_writes_no_table_of_some_shapes():
    done = run_script("shape_sweep.py", "--shapes=tokens 8", "--markdown")
    assert done.returncode == 2
    assert "error: --markdown writes the whole grid's table: not with --shapes" in done.stderr


@pytest.mark.toolchain
def test_shape_sweep_runs_only_the_shapes_asked_for():
    """``--shapes`` keeps the cases whose shape's description contains the text."""
    done = run_script(
        "shape_sweep.py",
        "--tiny",
        "--programs=block,attention",
        "--dtypes=f32",
        "--paths=jax,compile",
        "--rounds=1",
        "--shapes=tokens 8",
    )
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert [row.split(" | ")[0] for row in rows if "| jax |" in row] == ["| attention"]
    summary = done.stdout.split("The worst ratio to jax.jit per path", 1)[1]
    lines = [line for line in summary.splitlines() if line.startswith("| compile |")]
    assert [line.split(" | ")[1] for line in lines] == ["CPU", "wall"]
    for line in lines:
        assert line.endswith(" of 1 | 0 |"), line  # one case, the attention's


@pytest.mark.toolchain
@pytest.mark.iree
def test_shape_sweep_runs_every_path_in_both_float_types():
    """A smoke run at the tiniest shape: every path gives a figure and agrees with jax.jit
    in float32 and in float64, and the worst ratio of each path is reported. Not timed."""
    done = run_script("shape_sweep.py", "--tiny", "--programs=block", "--rounds=1")
    assert done.returncode == 0, done.stderr
    assert "failed:" not in done.stdout, done.stdout
    rows = [line.split(" | ") for line in done.stdout.splitlines() if line.startswith("| block")]
    assert {(cells[1], cells[3]) for cells in rows} == {
        (dtype, path)
        for dtype in ("f32", "f64")
        for path in ("jax", "compile", "iree", "iree-sync", "iree-default")
    }
    for cells in rows:  # CPU ms, its ratio, wall ms, its ratio, the largest difference
        assert float(cells[4]) > 0 and float(cells[6]) > 0, cells
        assert cells[5].endswith("x") and cells[7].endswith("x"), cells
        limit = 1e-4 if cells[1] == "f32" else 1e-12
        assert float(cells[8].rstrip(" |")) < limit, cells
    summary = done.stdout.split("The worst ratio to jax.jit per path", 1)[1]
    for path in ("compile", "iree", "iree-sync", "iree-default"):  # 2 cases, none failed
        lines = [line for line in summary.splitlines() if line.startswith(f"| {path} |")]
        assert [line.split(" | ")[1] for line in lines] == ["CPU", "wall"]
        for line in lines:
            assert line.endswith(" of 2 | 0 |"), line


def test_call_dense_times_its_actions_in_turns():
    """Actions compared run in turns, one run of each a round, for at least the rounds
    asked and the seconds asked, and each gets its least time. A fake clock, moved by the
    actions alone, keeps the test from depending on how long a collection takes."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("call_dense", BENCHMARKS / "call_dense.py")
    assert spec is not None and spec.loader is not None
    call_dense = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(call_dense)

    class Clock:
        now = 0.0

        def perf_counter(self) -> float:
            return self.now

        def process_time(self) -> float:
            return self.now

    clock = Clock()
    call_dense.time = clock
    runs: list[str] = []

    def action(name: str, seconds: float) -> None:
        runs.append(name)
        clock.now += seconds

    least = call_dense.least_in_turns(
        {"a": lambda: action("a", 0.1), "b": lambda: action("b", 0.2)}, 3, 0.0
    )
    assert runs == ["a", "b"] * 3
    assert least == {"a": pytest.approx(0.1), "b": pytest.approx(0.2)}
    runs.clear()
    call_dense.least_in_turns({"a": lambda: action("a", 0.1)}, 1, 0.35)
    assert runs == ["a"] * 4  # rounds go on until 0.35 s have passed: 0.1, 0.2, 0.3, 0.4


def test_call_dense_times_a_rewrite_in_a_new_process():
    """``--one FILE`` is what the growth's second figure runs in each new process: the
    CPU time of one rewrite of FILE, after one of a bundled sample; the least of what
    such runs report, in turns, is taken."""
    import importlib.util

    sample = BENCHMARKS.parent / "samples/mlp_model/mlp_model.mlir"
    done = run_script("call_dense.py", "--one", str(sample))
    assert done.returncode == 0, done.stderr
    assert 0 < float(done.stdout) < 60
    # and of one run of the CLI in a mode, its outputs thrown away
    for mode in ("json", "validate", "header"):
        done = run_script("call_dense.py", "--one", str(sample), "--mode", mode)
        assert done.returncode == 0, done.stderr
        assert 0 < float(done.stdout) < 60
    done = run_script("call_dense.py", "--mode", "json")
    assert done.returncode == 2
    assert "error: --mode goes with --one" in done.stderr

    spec = importlib.util.spec_from_file_location("call_dense", BENCHMARKS / "call_dense.py")
    assert spec is not None and spec.loader is not None
    call_dense = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(call_dense)
    reports = {"a": iter([0.3, 0.1, 0.2]), "b": iter([0.5, 0.6, 0.4])}
    runs: list[str] = []

    def reported(name: str) -> float:
        runs.append(name)
        return next(reports[name])

    least = call_dense.least_reported({n: lambda n=n: reported(n) for n in reports}, 3)
    assert runs == ["a", "b"] * 3
    assert least == {"a": 0.1, "b": 0.4}


def test_instructions_reads_callgrinds_count():
    """The count is callgrind's "Collected" line, valgrind 3.19's format."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("instructions", BENCHMARKS / "instructions.py")
    assert spec is not None and spec.loader is not None
    instructions = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(instructions)
    report = (
        "==4242== Callgrind, a call-graph generating cache profiler\n"
        "==4242== Events    : Ir\n"
        "==4242== Collected : 187812345\n"
        "==4242== \n"
        "==4242== I   refs:      187,812,345\n"
    )
    assert instructions.collected(report) == 187812345
    with pytest.raises(RuntimeError, match="no instruction count"):
        instructions.collected("==1== Memcheck, a memory error detector\n")


def test_op_complexity_ratios_are_each_path_over_jax_jit():
    """The second table of op_complexity.py: time over jax.jit's at the same size, and a dash
    where a figure is missing (derived by hand)."""
    sys.path.insert(0, str(BENCHMARKS.parent))
    from benchmarks.op_complexity import ratios

    results = {
        ("gather", "jit"): [1.0, 2.0],
        ("gather", "compile"): [0.5, "skipped"],
        ("gather", "iree"): [2.0, 8.0],
    }
    assert ratios(results, ["gather"], [1000, 8000]).splitlines() == [
        "| op | path | 1,000 | 8,000 |",
        "| --- | --- | --- | --- |",
        "| gather | compile | 0.50 | - |",
        "| gather | iree | 2.00 | 4.00 |",
    ]
