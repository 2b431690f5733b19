"""Extern declarations are read where MLIR has them, and a description that cannot be read
is a diagnostic, never a traceback.

``--emit-ffi-adapters``, ``--emit-header`` and ``rewriter.compile --ffi-bridge`` read the
``func.func private`` declarations and their ``rewriter.xla_ffi`` descriptions back from a
module. Text in comments (the FileCheck inputs quote declarations with ``{{.*}}`` patterns)
is not a declaration. Expected positions are computed here from the texts the tests build.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import rewriter
from rewriter.cli import main
from rewriter.compile.build import compile_module
from rewriter.emit.ffi_adapters import externs_in
from rewriter.syntax.diagnostics import RewriteError

ROOT = Path(__file__).resolve().parent.parent
FILECHECK = sorted((ROOT / "tests" / "filecheck").glob("*.mlir"))
ATTR_ARRAY = ROOT / "tests" / "filecheck" / "attr_array.mlir"
RMS_REWRITTEN = ROOT / "samples" / "rms_norm" / "rms_norm.rewritten.mlir"
DESCRIPTION = "rewriter.xla_ffi = {"


def _blank_comments(text: str) -> str:
    """``text`` with every whole-line comment emptied to ``//`` (lines stay where they are)."""
    return re.sub(r"^([ \t]*)//[^\n]*", r"\1//", text, flags=re.MULTILINE)


def _damaged(text: str, replacement: str) -> tuple[str, int, int]:
    """``text`` with its first description's ``{`` followed by ``replacement``; the 1-based
    line and column of the inserted text."""
    at = text.index(DESCRIPTION) + len(DESCRIPTION)
    line = text.count("\n", 0, at) + 1
    return text[:at] + replacement + text[at:], line, at - text.rfind("\n", 0, at)


def test_the_filecheck_input_quotes_declarations_in_its_comments():
    """The case this file is about, as it stands in the repository."""
    text = ATTR_ARRAY.read_text(encoding="utf-8")
    assert re.search(r"^// CHECK.*func\.func private @\w+\(.*rewriter\.xla_ffi = \{\{", text, re.M)
    assert externs_in(text) == []


def test_comments_do_not_change_the_header_or_the_adapters():
    text = ATTR_ARRAY.read_text(encoding="utf-8")
    blank = _blank_comments(text)
    assert blank != text
    name = ATTR_ARRAY.name
    assert rewriter.emit_header(text, filename=name) == rewriter.emit_header(blank, filename=name)
    assert rewriter.emit_ffi_adapters(text, filename=name) == rewriter.emit_ffi_adapters(
        blank, filename=name
    )


def test_a_rewritten_module_with_such_comments_reads_as_without_them():
    """The rewrite of the FileCheck input keeps its comments; its one real extern is read,
    the quoted ones are not, and the header is that of the module without comments."""
    rewritten = rewriter.rewrite(ATTR_ARRAY.read_text(encoding="utf-8")).text
    blank = _blank_comments(rewritten)
    assert [extern.symbol for extern in externs_in(rewritten)] == ["arrays"]
    assert externs_in(rewritten) == externs_in(blank)
    assert rewriter.emit_header(rewritten) == rewriter.emit_header(blank)


def test_a_trailing_comment_or_a_string_is_not_the_description():
    text = RMS_REWRITTEN.read_text(encoding="utf-8")
    (described,) = externs_in(text)
    line = next(x for x in text.splitlines() if x.lstrip().startswith("func.func private"))
    # A parameter attribute whose string holds the attribute's name, and a comment after
    # the declaration with a description that would not parse: neither is read.
    quoted = line.replace(
        '{bufferization.access = "read"}',
        '{bufferization.access = "read", x.note = "rewriter.xla_ffi = {{"}',
    )
    assert quoted != line
    commented = quoted + " // rewriter.xla_ffi = {{.*}}"
    assert externs_in(text.replace(line, commented)) == [described]
    plain = re.sub(r", rewriter\.xla_ffi = \{.*\}\}$", "}", line)
    assert plain != line
    assert externs_in(text.replace(line, plain + " // rewriter.xla_ffi = {{.*}}")) == []
    # The header still finds the declaration behind its comment (argN names, same ABI).
    header = rewriter.emit_header(text.replace(line, plain + " // rewriter.xla_ffi = {{.*}}"))
    assert header == rewriter.emit_header(text.replace(line, plain))
    assert "_mlir_ciface_rms_norm(" in header


@pytest.mark.parametrize("emit", [rewriter.emit_header, rewriter.emit_ffi_adapters])
def test_the_api_raises_a_diagnostic_at_the_fault(emit):
    text, line, column = _damaged(RMS_REWRITTEN.read_text(encoding="utf-8"), "= ")
    with pytest.raises(RewriteError) as caught:
        emit(text, filename="m.mlir")
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.filename == "m.mlir"
    assert (diagnostic.line, diagnostic.column) == (line, column)
    assert diagnostic.message == "@rms_norm: malformed rewriter.xla_ffi attribute: unexpected '='"
    assert diagnostic.source_line == text.splitlines()[line - 1]


def test_a_description_that_parses_but_says_too_little_points_at_the_attribute():
    text = RMS_REWRITTEN.read_text(encoding="utf-8")
    text = re.sub(r', target = "rms_norm"\}\}$', "}}", text, count=1, flags=re.M)
    at = text.index("rewriter.xla_ffi")
    with pytest.raises(RewriteError) as caught:
        externs_in(text, "m.mlir")
    (diagnostic,) = caught.value.diagnostics
    assert (diagnostic.line, diagnostic.column) == (
        text.count("\n", 0, at) + 1,
        at - text.rfind("\n", 0, at),
    )
    assert diagnostic.message.startswith("@rms_norm: rewriter.xla_ffi needs target")


def test_a_shape_with_a_word_for_a_dimension_is_a_diagnostic():
    text = RMS_REWRITTEN.read_text(encoding="utf-8").replace('"f32[10,10]{1,0}"', '"f32[a]"', 1)
    with pytest.raises(RewriteError, match="malformed rewriter.xla_ffi attribute"):
        externs_in(text, "m.mlir")


def test_the_ffi_bridge_refuses_before_any_stage(tmp_path):
    """``rewriter.compile --ffi-bridge`` reads the descriptions before the toolchain runs:
    the diagnostic even where no native tool is installed, and no library."""
    text, line, column = _damaged(RMS_REWRITTEN.read_text(encoding="utf-8"), "= ")
    module, library = tmp_path / "m.mlir", tmp_path / "lib.so"
    module.write_text(text, encoding="utf-8")
    with pytest.raises(RewriteError) as caught:
        compile_module(module, library, ffi_bridge=True)
    (diagnostic,) = caught.value.diagnostics
    assert (diagnostic.filename, diagnostic.line, diagnostic.column) == (str(module), line, column)
    run = subprocess.run(
        [sys.executable, "-m", "rewriter.compile", str(module), "-o", str(library), "--ffi-bridge"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert run.returncode == 1
    assert run.stderr.splitlines()[0] == (
        f"{module}:{line}:{column}: error: @rms_norm: malformed rewriter.xla_ffi attribute: "
        "unexpected '='"
    )
    assert not library.exists()


@pytest.mark.parametrize("flag", ["--emit-ffi-adapters", "--emit-header"])
def test_the_cli_refuses_a_damaged_description_and_writes_nothing(tmp_path, flag):
    text, line, column = _damaged(RMS_REWRITTEN.read_text(encoding="utf-8"), "= ")
    module = tmp_path / "m.mlir"
    module.write_text(text, encoding="utf-8")
    emitted, rewritten = tmp_path / "out.c", tmp_path / "out.mlir"
    run = subprocess.run(
        [sys.executable, "-m", "rewriter", str(module), flag, str(emitted), "-o", str(rewritten)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    head, shown, caret = run.stderr.splitlines()[:3]
    assert head == (
        f"{module}:{line}:{column}: error: @rms_norm: malformed rewriter.xla_ffi attribute: "
        "unexpected '='"
    )
    assert shown[caret.index("^")] == "="
    assert not emitted.exists() and not rewritten.exists()


def test_both_outputs_are_refused_together(tmp_path):
    """--emit-header and --emit-ffi-adapters at once: neither file when one cannot be made."""
    text, _, _ = _damaged(RMS_REWRITTEN.read_text(encoding="utf-8"), "= ")
    module = tmp_path / "m.mlir"
    module.write_text(text, encoding="utf-8")
    header, adapters = tmp_path / "k.h", tmp_path / "a.c"
    status = main([str(module), "--emit-header", str(header), "--emit-ffi-adapters", str(adapters)])
    assert status == 1
    assert not header.exists() and not adapters.exists()


@pytest.mark.parametrize("path", FILECHECK, ids=lambda p: p.name)
@pytest.mark.parametrize("flag", ["--emit-ffi-adapters", "--emit-header"])
def test_emitting_from_every_filecheck_input_ends_without_a_traceback(tmp_path, capsys, path, flag):
    """The CLI's own entry point in this process: an uncaught exception fails the test."""
    status = main([str(path), flag, str(tmp_path / "out")])
    assert status in (0, 1)
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("mode", ["--list", "--check"])
def test_listing_and_checking_every_filecheck_input_ends_without_a_traceback(mode):
    run = subprocess.run(
        [sys.executable, "-m", "rewriter", mode, *map(str, FILECHECK)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert run.returncode in (0, 1)
    assert "Traceback" not in run.stderr
    assert len(FILECHECK) > 40


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (  # the declaration resized by hand, the description left
            "@rms_norm(tensor<10x10xf32>",
            "@rms_norm(tensor<64x64xf32>",
            "operand 0 is f32[10,10]{1,0} in the description, tensor<64x64xf32> declared",
        ),
        (  # the description given another rank
            'results = ["f32[10,10]{1,0}"]',
            'results = ["f32[10,10,10000]{2,1,0}"]',
            "result 0 is f32[10,10,10000]{2,1,0} in the description, tensor<10x10xf32> declared",
        ),
        (
            'operands = ["f32[10,10]{1,0}"]',
            'operands = ["f64[10,10]{1,0}"]',
            "operand 0 is f64[10,10]{1,0} in the description, tensor<10x10xf32> declared",
        ),
        (  # a column-major description of a row-major declaration: other physical dims
            'operands = ["f32[10,10]{1,0}"]',
            'operands = ["f32[10,10]{0,1}"]',
            None,  # a square: the same physical dims, so it agrees
        ),
        (
            'attributes = {eps = "f32"}',
            'attributes = {eps = "f64"}',
            'attribute eps is "f64" in the description, f32 declared',
        ),
        (
            'attributes = {eps = "f32"}',
            'attributes = {eps = "f32", n = "s32"}',
            "1 operands, 2 attributes and 1 results described, 2 parameters and 1 results declared",
        ),
    ],
)
def test_a_description_must_agree_with_its_declaration(old: str, new: str, message):
    text = RMS_REWRITTEN.read_text(encoding="utf-8")
    assert old in text
    text = text.replace(old, new, 1)
    if message is None:
        assert [extern.symbol for extern in externs_in(text, "m.mlir")] == ["rms_norm"]
        return
    with pytest.raises(RewriteError) as caught:
        externs_in(text, "m.mlir")
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.message == (
        f"@rms_norm: the description disagrees with the declaration: {message}"
    )
    assert diagnostic.line == text.count("\n", 0, text.index("rewriter.xla_ffi")) + 1


def test_a_column_major_description_agrees_with_its_transposed_declaration():
    text = (ROOT / "samples" / "column_major" / "column_major.rewritten.mlir").read_text()
    (extern,) = externs_in(text, "m.mlir")
    assert extern.facts.operands[0].dims == (3, 5)
    resized = text.replace("@col_major_kernel(tensor<5x3xf32>", "@col_major_kernel(tensor<3x5xf32>")
    with pytest.raises(RewriteError, match="operand 0 is f32\\[3,5\\]\\{0,1\\}"):
        externs_in(resized, "m.mlir")
