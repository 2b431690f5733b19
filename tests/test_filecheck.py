"""The lit + FileCheck suite in ``tests/filecheck``, run from pytest.

Each ``tests/filecheck/*.mlir`` file is one case: a hand-written module, ``// RUN:`` lines
that rewrite it (and verify the result with jaxlib and IREE), and ``// CHECK:`` lines the
output must match. lit runs the whole directory once; each file is then reported as a
test of its own, with lit's output for that file when it fails. The same suite runs
without pytest as ``lit -v tests/filecheck``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = [pytest.mark.jax, pytest.mark.iree, pytest.mark.slow]

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


def run_lit(tmp_dir: Path) -> LitRun:
    """Run the whole suite once, with lit's per-test results written as JSON."""
    report = tmp_dir / "lit-results.json"
    done = subprocess.run(
        [*LIT, "-v", "--output", str(report), str(SUITE)],
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


@pytest.fixture(scope="module")
def lit_results(tmp_path_factory: pytest.TempPathFactory) -> LitRun:
    return run_lit(tmp_path_factory.mktemp("lit"))


def test_lit_runs_every_case(lit_results: LitRun):
    """lit itself worked (config loaded, tools found) and ran each .mlir file."""
    assert CASES, f"no .mlir files in {SUITE}"
    assert lit_results.returncode in (0, 1), (
        f"lit exited with {lit_results.returncode}:\n{lit_results.output}"
    )
    missing = sorted(set(CASES) - set(lit_results.results))
    assert not missing, f"lit did not run {missing}:\n{lit_results.output}"


@pytest.mark.parametrize("case", CASES)
def test_filecheck(lit_results: LitRun, case: str):
    record = lit_results.results.get(case)
    if record is None:
        pytest.fail(f"lit did not run {case}:\n{lit_results.output}", pytrace=False)
    if record["code"] not in PASSING:
        pytest.fail(f"{case}: {record['code']}\n{record['output']}", pytrace=False)
