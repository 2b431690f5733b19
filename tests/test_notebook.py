"""Notebooks and jax: ``Result._repr_html_``, ``rewriter.export``, binary inputs (MLIR bytecode,
``jax.export.Exported`` and its ``serialize()`` bytes) through the API and the command line,
and ``samples/inspect.ipynb`` executed with nbclient.
"""

from __future__ import annotations

import difflib
import io
import json
import os
import re
import subprocess
import sys
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import jax
import jax.numpy as jnp
import nbformat
import numpy as np
import pytest
from jax.interpreters import mlir
from jaxlib.mlir import ir
from nbclient import NotebookClient

import rewriter
import rewriter.emit.notebook as rewriter_html
from rewriter.emit.notebook import (
    MAX_DIFF_CHARS,
    MAX_DIFF_LINES,
    MAX_LINE_CHARS,
    MAX_TABLE_ROWS,
    diff_lines,
)
from rewriter.inputs.jax_inputs import input_kind, refused_targets

pytestmark = pytest.mark.jax

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
NOTEBOOK = SAMPLES / "inspect.ipynb"
RMS_NORM = SAMPLES / "rms_norm" / "rms_norm.mlir"
RMS_NORM_REWRITTEN = SAMPLES / "rms_norm" / "rms_norm.rewritten.mlir"
RMS_TEXT = RMS_NORM.read_text(encoding="utf-8")
# Samples with one target, two targets, layouts (a wrapper), every attribute kind.
BYTECODE_SAMPLES = ["rms_norm", "two_targets", "cholesky_lapack", "attribute_kinds"]
X = jax.ShapeDtypeStruct((10, 10), jnp.float32)


def rms_norm(x, eps=1e-5):
    """samples/rms_norm/export.py's function."""
    call = jax.ffi.ffi_call(
        "rms_norm", jax.ShapeDtypeStruct(x.shape, x.dtype), vmap_method="broadcast_all"
    )
    return call(x, eps=np.float32(eps))


def call_facts(result: rewriter.Result) -> list[tuple]:
    """Everything about the calls except where they are (locations differ between exports)."""
    return [
        (
            c.target,
            c.status,
            c.symbol,
            c.wrapper,
            c.reason,
            c.operand_types,
            c.result_types,
            tuple((a.path, a.source_type, a.type, a.value) for a in c.attributes),
            c.extern_operand_types,
            c.extern_result_types,
        )
        for c in result.calls
    ]


def to_bytecode(text: str) -> bytes:
    """``text`` parsed by jaxlib's MLIR and written as (plain) MLIR bytecode."""
    module = ir.Module.parse(text, context=mlir.make_ir_context())
    output = io.BytesIO()
    module.operation.write_bytecode(output)
    return output.getvalue()


def run_cli(*args: object, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rewriter", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        timeout=300,
        env=env,
    )


@pytest.fixture(scope="module")
def exported_result() -> rewriter.Result:
    return rewriter.export(rms_norm, X, platforms=["cpu"])


# ---------------------------------------------------------------- HTML


class _Cells(HTMLParser):
    """The text of every table cell, and every tag seen."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.tags: set[str] = set()
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs) -> None:
        self.tags.add(tag)
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def parse_html(html: str) -> _Cells:
    parser = _Cells()
    parser.feed(html)
    parser.close()
    return parser


def assert_self_contained(html: str) -> None:
    tags = parse_html(html).tags
    assert not tags & {"script", "link", "iframe", "img", "style"}, tags
    assert "src=" not in html and "href=" not in html and "javascript" not in html.lower()


def test_result_html_table_for_the_seed_example() -> None:
    result = rewriter.rewrite(RMS_TEXT, filename="samples/rms_norm/rms_norm.mlir")
    html = result._repr_html_()
    assert_self_contained(html)
    rows = parse_html(html).rows
    assert rows[0] == [
        "location",
        "target",
        "operand types",
        "result types",
        "attributes",
        "decision",
    ]
    offset = RMS_TEXT.index("%0 = stablehlo.custom_call")
    line = RMS_TEXT.count("\n", 0, offset) + 1
    column = offset - RMS_TEXT.rindex("\n", 0, offset)
    assert rows[1] == [
        f"samples/rms_norm/rms_norm.mlir:{line}:{column}",
        "@rms_norm",
        "tensor<10x10xf32>",
        "tensor<10x10xf32>",
        "eps: f32 \u2192 float",
        "rewritten as @rms_norm",
    ]
    assert len(rows) == 2


def test_call_report_html_is_one_row() -> None:
    report = rewriter.rewrite(RMS_TEXT).calls[0]
    html = report._repr_html_()
    assert_self_contained(html)
    rows = parse_html(html).rows
    assert len(rows) == 2 and rows[1][-1] == "rewritten as @rms_norm"


def test_html_decisions_wrapper_left_alone_and_error() -> None:
    cholesky = (SAMPLES / "cholesky_lapack" / "cholesky_lapack.mlir").read_text()
    rows = parse_html(rewriter.rewrite(cholesky)._repr_html_()).rows[1:]
    assert any(re.fullmatch(r"rewritten as @\w+ \(through @\w+_layout\)", r[-1]) for r in rows)
    left = rewriter.rewrite(RMS_TEXT, skip=["rms_*"])
    assert parse_html(left._repr_html_()).rows[1][-1].startswith("left alone: ")
    tuple_call = RMS_TEXT.replace(
        ": (tensor<10x10xf32>) -> tensor<10x10xf32> loc(#loc14)",
        ": (tensor<10x10xf32>) -> tuple<tensor<10x10xf32>> loc(#loc14)",
    ).replace("return %0 : tensor<10x10xf32>", "return %0 : tuple<tensor<10x10xf32>>")
    analyzed = rewriter.analyze(tuple_call)
    assert analyzed.errors
    html = analyzed._repr_html_()
    assert parse_html(html).rows[1][-1].startswith("error: ")
    assert "Errors" in html and "tuple" in html


def test_html_escapes_every_value() -> None:
    # A target that needs quoting, and a string attribute with markup characters.
    text = RMS_TEXT.replace("@rms_norm(", '@"a<b&c"(').replace(
        "{eps = 9.99999974E-6 : f32}", '{eps = 9.99999974E-6 : f32, s = "<i>x</i>&\\22q"}'
    )
    result = rewriter.rewrite(text, filename="<in & out>.mlir")
    html = result._repr_html_()
    assert_self_contained(html)
    for raw in ("a<b&c", "<i>x</i>", "<in & out>"):
        assert raw not in html
    assert "@a&lt;b&amp;c" in html and "&lt;in &amp; out&gt;.mlir" in html
    assert "&lt;i&gt;x&lt;/i&gt;" in html  # in the warning's source line and in the diff
    cells = parse_html(html)
    assert cells.tags <= {
        "div",
        "p",
        "b",
        "i",
        "code",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "span",
        "br",
        "pre",
    }
    row = cells.rows[1]
    assert row[1] == "@a<b&c"  # the parser decodes the entities back to the name
    assert row[4] == "eps: f32 \u2192 float" + "s: string \u2192 rw_memref_i8_1d *"
    assert row[5] == "rewritten as @a_b_c"
    assert "Warnings" in html and "is not a valid C identifier" in html


def test_html_without_pygments_is_plain_escaped_pre(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pygments", None)  # import pygments -> ImportError
    text = RMS_TEXT.replace("@rms_norm(", '@"a<b&c"(')
    html = rewriter.rewrite(text)._repr_html_()
    diff = html[html.index("<b>Rewrite</b>") :]
    assert "a<b&c" not in html and "<span" not in diff and "<pre" in diff
    assert "+    %0 = func.call @a_b_c(%arg0, %eps)" in html


def test_diff_is_difflib_unified_diff_on_every_sample() -> None:
    for path in sorted(SAMPLES.glob("*/*.mlir")):
        if path.name.endswith(".rewritten.mlir"):
            continue
        result = rewriter.analyze(path.read_text(encoding="utf-8"))
        lines, _ = diff_lines(result.original, result.edits)
        expected = difflib.unified_diff(
            result.original.split("\n"), result.text.split("\n"), n=3, lineterm=""
        )
        assert lines == list(expected)[2:], path


@pytest.mark.parametrize("filler", [10, 1])
def test_a_cut_diff_is_the_start_of_the_whole_diff_and_reads_only_that(
    monkeypatch: pytest.MonkeyPatch, filler: int
) -> None:
    """The view makes the diff only as far as it shows it: its lines are the whole diff's
    first lines, and the module's lines past them are never looked for. With calls a line
    apart the whole diff is one hunk: the view shows a hunk of its start (the same lines
    under a header that counts only them)."""
    text = _big_module(calls=2000, filler=filler)
    assert text.count("\n") > 2000 * (filler + 1)
    result = rewriter.rewrite(text)
    whole, hunk_count = diff_lines(result.original, result.edits)
    assert hunk_count == (2001 if filler == 10 else 1) and len(whole) > 10 * MAX_DIFF_LINES
    made: list[rewriter_html._Lines] = []
    original_init = rewriter_html._Lines.__init__

    def recording_init(self: rewriter_html._Lines, text: str) -> None:
        original_init(self, text)
        made.append(self)

    monkeypatch.setattr(rewriter_html._Lines, "__init__", recording_init)
    html = result._repr_html_()
    pre = html[html.index("<pre", html.index("<b>Rewrite</b>")) :]
    shown = unescape(re.sub(r"<[^>]*>", "", pre[: pre.index("</pre>")])).split("\n")
    if filler == 10:
        assert shown[2 : 2 + MAX_DIFF_LINES] == whole[:MAX_DIFF_LINES]
    else:  # one hunk: its header counts what is shown, its lines are the whole diff's
        assert whole[0].startswith("@@ -1,") and shown[2].startswith("@@ -1,")
        assert shown[3 : 2 + MAX_DIFF_LINES] == whole[1:MAX_DIFF_LINES]
    assert len(made) == 1 and len(made[0].starts) < 2 * MAX_DIFF_LINES


def _big_module(calls: int, filler: int, long_line: int = 0) -> str:
    """One function: ``filler`` constant ops before each of ``calls`` rms_norm calls, and a
    constant of ``long_line`` bytes (one line of twice as many hex digits) before the first.
    """
    f32 = "tensor<10x10xf32>"
    lines = ["module @big {", f"  func.func public @main(%arg0: {f32}) -> {f32} {{"]
    value = "%arg0"
    for i in range(calls):
        lines += [
            f"    %f{i}_{j} = stablehlo.constant dense<{j}.0> : tensor<f32>" for j in range(filler)
        ]
        if long_line and i == 0:
            hex_digits = "AB" * long_line
            lines.append(
                f'    %s = stablehlo.constant dense<"0x{hex_digits}"> : tensor<{long_line}xui8>'
            )
        lines.append(
            f"    %c{i} = stablehlo.custom_call @rms_norm({value}) "
            f"{{mhlo.backend_config = {{eps = 1.0E-5 : f32}}}} : ({f32}) -> {f32}"
        )
        value = f"%c{i}"
    lines += [f"    return {value} : tensor<10x10xf32>", "  }", "}", ""]
    return "\n".join(lines)


def test_diff_holds_only_changed_hunks() -> None:
    result = rewriter.rewrite(_big_module(calls=3, filler=100))
    html = result._repr_html_()
    assert "3 rewritten" in html
    # declaration at the top, then each call: 4 hunks with 3 lines of context
    assert html.count("@@ -") == 4 and "4 changed hunks" in html
    for i in range(3):
        assert f"%f{i}_99 = " in html and f"%f{i}_97 = " in html  # context before the call
        assert f"%f{i}_96 = " not in html and f"%f{i}_50 = " not in html  # far from any change
    assert "Diff cut" not in html


@pytest.mark.slow
def test_diff_and_table_are_capped_on_a_large_input() -> None:
    text = _big_module(calls=2000, filler=20, long_line=50_000)
    assert len(text) > 2_000_000  # megabytes of module
    result = rewriter.rewrite(text)
    html = result._repr_html_()
    assert len(html) < 1_000_000
    assert f"Diff cut after {MAX_DIFF_LINES} lines" in html
    # The declaration's hunk (6 lines), then 10 lines a call (3 + 1 + 2 + 3 and the @@):
    # line 400 falls in the 40th call's hunk, the 41st started.
    assert "the first 41 changed hunks of 2001 edits" in html
    diff = html[html.index("<b>Rewrite</b>") :]
    assert len(re.sub(r"<[^>]*>", "", diff)) < MAX_DIFF_CHARS + 1000  # text without markup
    # kilobyte lines are cut too (the context line " " + the long constant)
    long_line = next(line for line in text.split("\n") if line.startswith("    %s = "))
    assert f"[{1 + len(long_line) - MAX_LINE_CHARS} more characters]" in html
    # the table: the first calls, then a count of the others
    assert html.count("<tr>") == 1 + MAX_TABLE_ROWS
    assert (
        f"{2000 - MAX_TABLE_ROWS} more calls not shown ({2000 - MAX_TABLE_ROWS} rewritten)" in html
    )


def test_unchanged_result_says_so() -> None:
    result = rewriter.rewrite(RMS_TEXT, targets=["nothing"])
    html = result._repr_html_()
    assert "No change" in html and "@@" not in html


# ---------------------------------------------------------------- rewriter.export


def test_export_equals_rewrite_of_committed_sample(exported_result: rewriter.Result) -> None:
    committed = rewriter.rewrite(RMS_TEXT)
    assert call_facts(exported_result) == call_facts(committed)
    assert [c.symbol for c in exported_result.calls] == ["rms_norm"]
    exported = exported_result.exported
    assert isinstance(exported, jax.export.Exported)
    assert exported.disabled_safety_checks == (
        jax.export.DisabledSafetyCheck.custom_call("rms_norm"),
    )
    assert exported_result.original == exported.mlir_module()
    assert "rms_norm" in exported_result._repr_html_()


def test_export_finds_every_ffi_target_at_any_depth() -> None:
    shape = jax.ShapeDtypeStruct((10, 10), jnp.float32)

    def f(x):
        a = jax.ffi.ffi_call('a<b&c"d', shape)(x, s="x<y>")
        b = jax.lax.cond(x[0, 0] > 0, rms_norm, lambda y: y, a)
        c = jax.lax.fori_loop(0, 3, lambda i, y: jax.ffi.ffi_call("in.loop$1", shape)(y), b)
        return jax.vmap(rms_norm)(c[None])[0]

    result = rewriter.export(f, X, platforms=["cpu"])
    targets = {c.target for c in result.calls}
    assert targets == {'a<b&c"d', "rms_norm", "in.loop$1"}
    assert {c.status for c in result.calls} == {"rewritten"}
    checks = set(result.exported.disabled_safety_checks)
    assert checks == {jax.export.DisabledSafetyCheck.custom_call(t) for t in targets}


def test_export_options(exported_result: rewriter.Result) -> None:
    skipped = rewriter.export(rms_norm, X, platforms=["cpu"], skip=["rms_*"])
    assert [c.status for c in skipped.calls] == ["left alone"] and not skipped.changed
    # jit options go to jax.jit; a jitted function is used as it is.
    static = rewriter.export(rms_norm, X, 1e-3, platforms=["cpu"], static_argnums=1)
    assert static.calls[0].attributes[0].value != exported_result.calls[0].attributes[0].value
    jitted = rewriter.export(jax.jit(rms_norm), X, platforms=["cpu"])
    assert call_facts(jitted) == call_facts(exported_result)
    plain = rewriter.export(jnp.sin, X, platforms=["cpu"])
    assert plain.calls == [] and not plain.changed


def test_export_raises_jax_errors_unchanged() -> None:
    def bad(x):
        raise ValueError(
            "Cannot serialize code with custom calls whose targets have no "
            "compatibility guarantees: but not from jax"
        )

    with pytest.raises(ValueError, match="but not from jax"):
        rewriter.export(bad, X)


def test_refused_targets_parses_pretty_and_generic_forms() -> None:
    message = (
        "Cannot serialize code with custom calls whose targets have no compatibility "
        "guarantees. See https://docs.jax.dev/. Examples are:\n"
        '%0 = stablehlo.custom_call @rms_norm(%arg0) {backend_config = "x"} : '
        '(tensor<f32>) -> tensor<f32> at loc("f")\n'
        '%1:2 = stablehlo.custom_call @"a\\22b\\\\c"(%0) : (tensor<f32>) -> (tensor<f32>, '
        "tensor<f32>) at loc(unknown)\n"
        "stablehlo.custom_call @no.results$(%0) : (tensor<f32>) -> () at loc(unknown)\n"
        '%2 = "stablehlo.custom_call"(%0) <{api_version = 4 : i32, backend_config = '
        '"call_target_name = \\22fake\\22", call_target_name = "generic"}> : (tensor<f32>) '
        "-> tensor<f32> at loc(unknown).\n"
    )
    assert refused_targets(message) == ["rms_norm", 'a"b\\c', "no.results$", "generic"]
    assert refused_targets("some other error: stablehlo.custom_call @x(") == []


# ---------------------------------------------------------------- binary inputs


@pytest.mark.parametrize("name", BYTECODE_SAMPLES)
def test_bytecode_input_rewrites_like_the_text(name: str) -> None:
    text = (SAMPLES / name / f"{name}.mlir").read_text(encoding="utf-8")
    data = to_bytecode(text)
    assert data[:4] == b"ML\xefR" and input_kind(data) == "bytecode"
    from_text = rewriter.rewrite(text)
    from_bytecode = rewriter.rewrite(data)
    assert call_facts(from_bytecode) == call_facts(from_text)
    assert rewriter.analyze(data).errors == []


def test_bytecode_of_the_seed_example_round_trips_exactly() -> None:
    result = rewriter.rewrite(to_bytecode(RMS_TEXT))
    assert result.original == RMS_TEXT
    assert result.text == RMS_NORM_REWRITTEN.read_text(encoding="utf-8")


def test_exported_and_its_serialization_rewrite_like_the_text(
    exported_result: rewriter.Result,
) -> None:
    exported = exported_result.exported
    serialized = exported.serialize()
    assert isinstance(serialized, bytearray) and input_kind(bytes(serialized)) == "exported"
    expected = exported_result.text
    for value in (exported, serialized, bytes(serialized), memoryview(bytes(serialized))):
        result = rewriter.rewrite(value)
        assert result.text == expected
        assert call_facts(result) == call_facts(exported_result)
    # the portable artifact inside (StableHLO bytecode of VHLO ops) reads as bytecode too
    artifact = bytes(exported.mlir_module_serialized)
    assert input_kind(artifact) == "bytecode"
    assert rewriter.rewrite(artifact).text == expected
    assert call_facts(rewriter.rewrite(exported.mlir_module())) == call_facts(exported_result)


def test_bad_binary_inputs_raise_input_errors(exported_result: rewriter.Result) -> None:
    serialized = bytes(exported_result.exported.serialize())
    bytecode = to_bytecode(RMS_TEXT)
    cases = {
        "cannot read MLIR bytecode": [bytecode[: len(bytecode) // 2], b"ML\xefR" + b"\0" * 20],
        "cannot read a serialized jax.export.Exported": [serialized[:300]],
    }
    for prefix, inputs in cases.items():
        for data in inputs:
            with pytest.raises(rewriter.InputError) as caught:
                rewriter.analyze(data, filename="bad.bin")
            assert isinstance(caught.value, rewriter.RewriteError)
            assert str(caught.value).startswith(f"bad.bin: error: {prefix}")
            assert "\n" not in str(caught.value)
    with pytest.raises(TypeError, match="not int"):
        rewriter.rewrite(3)


def test_binary_input_without_jax_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    data = to_bytecode(RMS_TEXT)
    monkeypatch.setitem(sys.modules, "jax", None)  # import jax -> ImportError
    with pytest.raises(rewriter.InputError, match=r"needs jax and jaxlib \(pip install"):
        rewriter.rewrite(data, filename="model.bc")


def test_text_inputs_never_import_jax() -> None:
    code = (
        "import sys, rewriter\n"
        "from rewriter.cli import main\n"
        f"text = open({str(RMS_NORM)!r}).read()\n"
        "result = rewriter.rewrite(text)\n"
        "rewriter.rewrite(text.encode())\n"
        "result._repr_html_(); result.calls[0]._repr_html_()\n"
        f"assert main([{str(RMS_NORM)!r}, '--list']) == 0\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib'))\n"
        "assert not loaded, loaded\n"
    )
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


# ---------------------------------------------------------------- the command line


@pytest.mark.slow
def test_cli_on_a_bytecode_file(tmp_path: Path) -> None:
    path = tmp_path / "model.bc"
    path.write_bytes(to_bytecode(RMS_TEXT))
    run = run_cli(path)
    assert run.returncode == 0, run.stderr
    assert run.stdout == RMS_NORM_REWRITTEN.read_bytes()
    output = tmp_path / "out.mlir"
    assert run_cli(path, "-o", output).returncode == 0
    assert output.read_bytes() == RMS_NORM_REWRITTEN.read_bytes()


@pytest.mark.slow
def test_cli_on_a_serialized_exported_file(
    tmp_path: Path, exported_result: rewriter.Result
) -> None:
    path = tmp_path / "exported.bin"
    path.write_bytes(bytes(exported_result.exported.serialize()))
    run = run_cli(path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.decode() == exported_result.text
    listing = run_cli("--list", "--format", "json", path)
    assert listing.returncode == 0, listing.stderr
    calls = json.loads(listing.stdout)["files"][0]["calls"]
    assert [(c["target"], c["status"], c["symbol"]) for c in calls] == [
        ("rms_norm", "rewritten", "rms_norm")
    ]
    assert calls[0]["attributes"][0]["c_type"] == "float"
    header = tmp_path / "kernels.h"
    assert run_cli("--emit-header", header, path).returncode == 0
    assert "void _mlir_ciface_rms_norm(" in header.read_text()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["bytecode", "exported"])
def test_cli_corrupt_binary_file_is_a_clean_diagnostic(
    tmp_path: Path, kind: str, exported_result: rewriter.Result
) -> None:
    if kind == "bytecode":
        data = to_bytecode(RMS_TEXT)
        message = "cannot read MLIR bytecode"
    else:
        data = bytes(exported_result.exported.serialize())
        message = "cannot read a serialized jax.export.Exported"
    path = tmp_path / f"bad.{kind}"
    path.write_bytes(data[: len(data) // 2])
    output = tmp_path / "out.mlir"
    run = run_cli(path, "-o", output)
    assert run.returncode == 1
    assert run.stdout == b""
    stderr = run.stderr.decode()
    assert stderr.startswith(f"{path}: error: {message}"), stderr
    assert stderr.count("\n") == 1 and "Traceback" not in stderr
    assert not output.exists()


def test_cli_in_place_refuses_binary_files(tmp_path: Path) -> None:
    path = tmp_path / "model.bc"
    data = to_bytecode(RMS_TEXT)
    path.write_bytes(data)
    run = run_cli("--in-place", path)
    assert run.returncode == 1
    assert run.stderr.decode().startswith(f"{path}: error: --in-place would replace MLIR bytecode")
    assert path.read_bytes() == data


# ---------------------------------------------------------------- the notebook


def test_notebook_is_committed_without_outputs() -> None:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
    assert "/work/" not in NOTEBOOK.read_text() and "/home/" not in NOTEBOOK.read_text()


@pytest.mark.slow
def test_notebook_runs_and_shows_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    # The kernel imports this checkout's rewriter (PYTHONPATH, and the notebook's own cell
    # for samples/), from samples/ as Jupyter would start it.
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    monkeypatch.setenv("PYTHONPATH", path)
    client = NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(SAMPLES)}},
    )
    client.execute()
    outputs = [
        output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
    ]
    assert not [o for o in outputs if o.output_type == "error"]
    html = [o.data["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert len(html) == 1
    table = html[0]
    assert "<table" in table and "rms_norm" in table and "rewritten as @rms_norm" in table
    rows = parse_html(table).rows
    assert rows[1][1:] == [
        "@rms_norm",
        "tensor<10x10xf32>",
        "tensor<10x10xf32>",
        "eps: f32 \u2192 float",
        "rewritten as @rms_norm",
    ]
    results = [o.data["text/plain"] for o in outputs if o.output_type == "execute_result"]
    assert results[-1] == "True"  # Exported, serialize() bytes and the export agree
    printed = "".join(o.text for o in outputs if o.output_type == "stream")
    assert "func.call @rms_norm(%arg0, %eps)" in printed
    assert "void _mlir_ciface_rms_norm(rw_memref_f32_2d *result, " in printed
    assert "float eps);" in printed


def test_serialized_exported_without_flatbuffers_names_the_extra(
    exported_result: rewriter.Result, tmp_path: Path
) -> None:
    path = tmp_path / "exported.bin"
    path.write_bytes(bytes(exported_result.exported.serialize()))
    hidden = "import sys; sys.modules['flatbuffers'] = None; "  # as if it were not installed
    api = subprocess.run(
        [
            sys.executable,
            "-c",
            hidden + "import rewriter, sys\n"
            "try:\n"
            f"    rewriter.rewrite(open({str(path)!r}, 'rb').read())\n"
            "except rewriter.InputError as error:\n"
            "    print(error)",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert api.returncode == 0, api.stderr
    expected = (
        "reading a serialized jax.export.Exported needs the flatbuffers package: "
        "pip install 'stablehlo-ffi-rewriter[jax]'"
    )
    assert api.stdout == f"<serialized jax.export>: error: {expected}\n"
    cli = subprocess.run(
        [
            sys.executable,
            "-c",
            hidden + "from rewriter.cli import main; raise SystemExit(main())",
            str(path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert cli.returncode == 1
    assert cli.stderr == f"{path}: error: {expected}\n"


def _declarations(style: str) -> dict[str, str]:
    pairs = (part.split(":", 1) for part in style.split(";") if ":" in part)
    return {name.strip().lower(): value.strip() for name, value in pairs}


@pytest.mark.parametrize("pygments", [True, False], ids=["pygments", "plain"])
def test_every_background_comes_with_its_text_colour(
    pygments: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A notebook's dark theme draws light text: an element that sets a light background
    must set its text colour too, or its text is light on light."""
    if not pygments:
        monkeypatch.setitem(sys.modules, "pygments", None)  # as if not installed
    broken = RMS_TEXT.replace("mhlo.backend_config = {eps", "mhlo.backend_config = {e = [1], eps")
    result = rewriter.analyze(broken)  # an error, so the diagnostics' block is drawn too
    html = result._repr_html_() + rewriter.rewrite(RMS_TEXT)._repr_html_()
    styles = re.findall(r'style="([^"]*)"', html)
    painted = [s for s in styles if {"background", "background-color"} & set(_declarations(s))]
    assert len(painted) >= 2  # the diff, the diagnostics
    for style in painted:
        assert "color" in _declarations(style), style
    assert ('class="highlight"' in html) == pygments  # both renderings are checked


@pytest.mark.parametrize("pygments", [True, False], ids=["pygments", "plain"])
def test_long_lines_wrap_instead_of_hiding_behind_a_scrollbar(
    pygments: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An extern's rewriter.xla_ffi description is a line of hundreds of characters: the
    diff and the diagnostics wrap it (anywhere, since it has few spaces), in the notebook
    and in exported HTML, where a scrollbar would hide it."""
    if not pygments:
        monkeypatch.setitem(sys.modules, "pygments", None)
    broken = RMS_TEXT.replace("mhlo.backend_config = {eps", "mhlo.backend_config = {e = [1], eps")
    html = rewriter.analyze(broken)._repr_html_() + rewriter.rewrite(RMS_TEXT)._repr_html_()
    assert "rewriter.xla_ffi = {" in html  # the long line is in the diff
    blocks = [_declarations(style) for style in re.findall(r'<pre style="([^"]*)"', html)]
    assert len(blocks) >= 2  # the diff, the diagnostics
    for style in blocks:
        assert style.get("white-space") == "pre-wrap", style
        assert style.get("overflow-wrap") == "anywhere", style
        assert "overflow-x" not in style and "overflow" not in style
    assert ('class="highlight"' in html) == pygments


def test_text_is_located_under_the_default_name_as_exports_are_under_theirs() -> None:
    """Calls given as text were at ``<string>:4:5`` while ``export`` says ``<jax.export of
    F>:4:5``: each says what the input is."""
    html = rewriter.rewrite(RMS_TEXT)._repr_html_()
    assert "&lt;mlir text&gt;:4:" in html
    assert "&lt;string&gt;" not in html
