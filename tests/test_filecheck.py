"""The lit + FileCheck suite in ``tests/filecheck``, run from pytest.

Each ``tests/filecheck/*.mlir`` file is one case: a hand-written module, ``// RUN:`` lines
that rewrite it (and verify the result with jaxlib and IREE), and ``// CHECK:`` lines the
output must match. lit runs the whole directory once per mode; each file is then reported
as a test of its own, with lit's output for that file when it fails. The same suite runs
without pytest as ``lit -v tests/filecheck``.

Three modes: the slow tier verifies every output with jaxlib and IREE (``%verify``); the
fast tier checks the rewrite alone (``--param verify=off``), on the default path and on the
reference path (``--param plain=1``, ``REWRITER_PLAIN=1``), which must pass the same checks.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

SUITE = Path(__file__).resolve().parent / "filecheck"
CASES = sorted(path.name for path in SUITE.glob("*.mlir"))
# lit 23 has no `python -m lit`; this is what its `lit` script does.
LIT = [sys.executable, "-c", "import sys; from lit.main import main; sys.exit(main())"]
PASSING = {"PASS", "XFAIL"}


@dataclass
class LitRun:
    returncode: int
    output: str  # lit's own stdout and stderr
    results: dict[str, dict]  # file name -> lit's JSON record (code, output, elapsed)


def run_lit(tmp_dir: Path, *params: str) -> LitRun:
    """Run the whole suite once, with lit's per-test results written as JSON."""
    report = tmp_dir / "lit-results.json"
    done = subprocess.run(
        [*LIT, "-v", *(f"--param={p}" for p in params), "--output", str(report), str(SUITE)],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    results: dict[str, dict] = {}
    if report.exists():
        for record in json.loads(report.read_text(encoding="utf-8"))["tests"]:
            # "rewriter :: pretty_form.mlir" -> "pretty_form.mlir"
            results[record["name"].split(" :: ", 1)[-1]] = record
    return LitRun(done.returncode, done.stdout + done.stderr, results)


MODES = {
    "verified": (),
    "rewrite": ("verify=off",),
    "rewrite-plain": ("verify=off", "plain=1"),
}
SLOW = [pytest.mark.jax, pytest.mark.iree, pytest.mark.slow]
MODE_PARAMS = [
    pytest.param(mode, marks=SLOW if mode == "verified" else (), id=mode) for mode in MODES
]


@pytest.fixture(scope="module")
def lit_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, LitRun]:
    """Each mode's lit run, made when a test first asks for it."""
    return {}


def lit_results(runs: dict[str, LitRun], mode: str, factory: pytest.TempPathFactory) -> LitRun:
    if mode not in runs:
        runs[mode] = run_lit(factory.mktemp(f"lit-{mode}"), *MODES[mode])
    return runs[mode]


@pytest.mark.parametrize("mode", MODE_PARAMS)
def test_lit_runs_every_case(lit_runs, mode: str, tmp_path_factory):
    """lit itself worked (config loaded, tools found) and ran each .mlir file."""
    assert CASES, f"no .mlir files in {SUITE}"
    results = lit_results(lit_runs, mode, tmp_path_factory)
    assert results.returncode in (0, 1), f"lit exited with {results.returncode}:\n{results.output}"
    missing = sorted(set(CASES) - set(results.results))
    assert not missing, f"lit did not run {missing}:\n{results.output}"


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("mode", MODE_PARAMS)
def test_filecheck(lit_runs, mode: str, case: str, tmp_path_factory):
    results = lit_results(lit_runs, mode, tmp_path_factory)
    record = results.results.get(case)
    if record is None:
        pytest.fail(f"lit did not run {case}:\n{results.output}", pytrace=False)
    if record["code"] not in PASSING:
        pytest.fail(f"{case}: {record['code']}\n{record['output']}", pytrace=False)
