"""The one switch to the reference path (``plain=True``, ``REWRITER_PLAIN=1``), and the
default path held to it: the goldens, the FileCheck inputs, jax's exports and the call-dense
exports give the same rewrite, reports, diagnostics and validation either way.

The reference path parses every custom call statement with lark and judges it on its own,
and validates by lark's parse of the whole module; the default path reuses statement shapes
and line shapes. A rule edit that makes the two differ fails here.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from jax_corpus import corpus

import rewriter
from rewriter.plan import call_shapes
from rewriter.syntax import plain_validation, validation

pytestmark = pytest.mark.jax

ROOT = Path(__file__).resolve().parent.parent
GOLDENS = sorted((ROOT / "samples").glob("*/*.rewritten.mlir"))
FILECHECK = sorted((ROOT / "tests" / "filecheck").glob("*.mlir"))
CALL_DENSE = sorted((ROOT / "tests" / "data" / "call_dense").glob("*.mlir"))
CORPUS = corpus()


@pytest.mark.parametrize(
    "files", [GOLDENS, FILECHECK, CALL_DENSE, CORPUS], ids=["goldens", "filecheck", "dense", "jax"]
)
def test_every_set_of_inputs_is_there(files):
    assert len(files) >= 5  # a glob that finds nothing would test nothing


def validation_outcome(text: str, plain: bool) -> object:
    try:
        rewriter.validate(text, filename="m.mlir", plain=plain)
    except rewriter.RewriteError as error:
        return error.diagnostics
    return None


def assert_both_paths_agree(text: str, filename: str) -> rewriter.Result:
    reference = rewriter.analyze(text, filename=filename, plain=True)
    default = rewriter.analyze(text, filename=filename, plain=False)
    assert default == reference  # text, reports, warnings, errors
    for abi in ("c", "iree"):
        plain = rewriter.analyze(text, filename=filename, abi=abi, plain=True)
        assert rewriter.analyze(text, filename=filename, abi=abi) == plain
    assert validation_outcome(text, False) == validation_outcome(text, True)
    if not reference.errors:
        assert validation_outcome(reference.text, False) == validation_outcome(reference.text, True)
    return reference


@pytest.mark.parametrize("golden", GOLDENS, ids=lambda p: p.parent.name)
def test_goldens_on_both_paths(golden: Path):
    original = golden.with_name(golden.name.replace(".rewritten.mlir", ".mlir"))
    result = assert_both_paths_agree(original.read_text(), str(original))
    assert result.text == golden.read_text()


@pytest.mark.parametrize("path", FILECHECK, ids=lambda p: p.stem)
def test_filecheck_inputs_on_both_paths(path: Path):
    assert_both_paths_agree(path.read_text(), str(path))


@pytest.mark.parametrize("path", CALL_DENSE, ids=lambda p: p.stem)
def test_call_dense_exports_on_both_paths(path: Path):
    assert_both_paths_agree(path.read_text(), str(path))


@pytest.mark.parametrize(("name", "text"), CORPUS, ids=[name for name, _ in CORPUS])
def test_jax_exports_on_both_paths(name: str, text: str):
    assert_both_paths_agree(text, name)


def count_calls(monkeypatch, owner, name: str) -> list[int]:
    """Count the calls of ``owner.name`` from now on."""
    counted = [0]
    original = getattr(owner, name)

    def counting(*args, **kwargs):
        counted[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counting)
    return counted


def test_the_reference_path_parses_every_statement_and_the_whole_module(monkeypatch):
    text = CALL_DENSE[0].read_text()
    calls = text.count("stablehlo.custom_call")
    exact = count_calls(monkeypatch, call_shapes.CallShapes, "_place_exact")
    rewriter.analyze(text)
    assert exact[0] < calls / 4  # the default path reuses statement shapes
    rewriter.analyze(text, plain=True)
    assert exact[0] >= calls
    lines = count_calls(monkeypatch, validation.Validation, "lines")
    whole = count_calls(monkeypatch, plain_validation, "_parse")
    rewriter.validate(text, plain=True)
    assert (lines[0], whole[0]) == (0, 1)
    rewriter.validate(text)
    assert lines[0] >= 1 and whole[0] == 1


@pytest.mark.parametrize("value", ["1", "yes"])
def test_rewriter_plain_in_the_environment_switches_the_api_and_the_command_line(
    monkeypatch, value: str, tmp_path: Path
):
    monkeypatch.setenv("REWRITER_PLAIN", value)
    assert rewriter.plain_path() is True and rewriter.plain_path(False) is False
    monkeypatch.setenv("REWRITER_PLAIN", "0")
    assert rewriter.plain_path() is False and rewriter.plain_path(True) is True
    # The command line reads the same switch: the same bytes, --validate included.
    source = GOLDENS[0].with_name(GOLDENS[0].name.replace(".rewritten.mlir", ".mlir"))
    outputs = []
    for plain in ("0", value):
        run = subprocess.run(
            [sys.executable, "-m", "rewriter", "--validate", str(source)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={"REWRITER_PLAIN": plain, "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
        )
        assert run.returncode == 0, run.stderr
        outputs.append(run.stdout)
    assert outputs[0] == outputs[1] == GOLDENS[0].read_text()
