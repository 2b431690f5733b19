"""The Python API taken at its word: how ``targets``/``skip`` read a string, what
``validate`` takes, and what an error says about going on."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import rewriter

ROOT = Path(__file__).resolve().parent.parent
TWO_TARGETS = (ROOT / "samples" / "two_targets" / "two_targets.mlir").read_text()
TWO_TARGETS_REWRITTEN = (
    ROOT / "samples" / "two_targets" / "two_targets.rewritten.mlir"
).read_text()


def statuses(result: rewriter.Result) -> dict[str, str]:
    return {report.target: report.status for report in result.calls}


# ---------------------------------------------------------------- targets= and skip= as strings


def test_a_string_skip_is_one_pattern_not_its_characters():
    # "zzz*" matches neither target: both are rewritten (read as characters, "z" and "*"
    # would have skipped everything).
    result = rewriter.rewrite(TWO_TARGETS, skip="zzz*")
    assert result.text == TWO_TARGETS_REWRITTEN
    assert statuses(result) == {"scale": "rewritten", "offset": "rewritten"}
    result = rewriter.rewrite(TWO_TARGETS, skip="sc*")
    assert statuses(result) == {"scale": "left alone", "offset": "rewritten"}
    assert result.text == rewriter.rewrite(TWO_TARGETS, skip=["sc*"]).text


def test_a_string_targets_is_one_pattern_not_its_characters():
    result = rewriter.rewrite(TWO_TARGETS, targets="offset")
    assert statuses(result) == {"scale": "left alone", "offset": "rewritten"}
    assert result.text == rewriter.rewrite(TWO_TARGETS, targets=("offset",)).text
    # "*" alone would match both targets
    assert statuses(rewriter.rewrite(TWO_TARGETS, targets="zz*")) == {
        "scale": "left alone",
        "offset": "left alone",
    }


def test_emit_header_reads_a_string_skip_as_one_pattern():
    header = rewriter.emit_header(TWO_TARGETS, skip="sc*")
    assert "_mlir_ciface_offset(" in header and "_mlir_ciface_scale(" not in header


def test_patterns_that_are_not_strings_are_a_type_error():
    with pytest.raises(TypeError, match=r"skip takes glob patterns .* not bytes b'scale'"):
        rewriter.rewrite(TWO_TARGETS, skip=[b"scale"])
    with pytest.raises(TypeError, match=r"targets takes glob patterns .* not int 1"):
        rewriter.analyze(TWO_TARGETS, targets=[1])


def test_the_readme_says_how_a_string_pattern_is_read():
    readme = (ROOT / "README.md").read_text()
    assert "`targets` and `skip` take one glob pattern as a string" in readme


# ---------------------------------------------------------------- analyze, the rewrite that reports


def test_analyze_rewrites_the_other_calls_and_rewrite_raises_the_same_errors():
    """A tuple result makes @scale an error (rule 7). ``analyze`` is no dry run: its text is
    the sample's rewrite without what belongs to @scale (its declaration, its call), and
    ``rewrite`` raises exactly ``analyze``'s errors, then the note on how to skip @scale."""
    scale_call = next(line for line in TWO_TARGETS.splitlines() if "@scale(" in line)
    broken_call = scale_call.replace("-> tensor<6xf32>", "-> tuple<tensor<6xf32>>")
    broken = TWO_TARGETS.replace(scale_call, broken_call)
    lines = TWO_TARGETS_REWRITTEN.splitlines(keepends=True)
    expected = "".join(
        line
        for line in lines
        if not line.lstrip().startswith(("func.func private @scale(", "%factor ="))
    )
    rewritten_scale = next(line for line in lines if "func.call @scale(" in line)
    expected = expected.replace(rewritten_scale, broken_call + "\n")
    analyzed = rewriter.analyze(broken)
    assert analyzed.text == expected
    assert statuses(analyzed) == {"scale": "error", "offset": "rewritten"}
    assert [d.line for d in analyzed.errors] == [5] and "tuple" in analyzed.errors[0].message
    with pytest.raises(rewriter.RewriteError) as caught:
        rewriter.rewrite(broken)
    assert caught.value.diagnostics[:-1] == analyzed.errors
    assert caught.value.diagnostics[-1].severity == "note"
    assert "skip=['scale']" in caught.value.diagnostics[-1].message


# ---------------------------------------------------------------- validate takes what rewrite takes


def test_validate_takes_bytes_like_rewrite():
    data = TWO_TARGETS.encode()
    for value in (data, bytearray(data), memoryview(data)):
        rewriter.validate(value)  # no TypeError, no RewriteError
    broken = TWO_TARGETS.replace("func.func public @main(", "func.func public @main((", 1)
    with pytest.raises(rewriter.RewriteError) as caught:
        rewriter.validate(broken.encode(), filename="model.mlir")
    with pytest.raises(rewriter.RewriteError) as from_text:
        rewriter.validate(broken, filename="model.mlir")
    assert caught.value.diagnostics == from_text.value.diagnostics
    assert caught.value.diagnostics[0].filename == "model.mlir"


def test_validate_reports_invalid_utf8_bytes_where_they_are():
    with pytest.raises(rewriter.RewriteError) as caught:
        rewriter.validate(b"module {\n  \xff\n}\n")
    assert (caught.value.line, caught.value.column) == (2, 3)
    assert "invalid UTF-8" in caught.value.message


# ---------------------------------------------------------------- an error says how to go on

UNSUPPORTED = TWO_TARGETS.replace(
    "stablehlo.custom_call @scale(%arg0) {mhlo.backend_config = {factor = 2.000000e+00 : f32}",
    "stablehlo.custom_call @scale(%arg0) {mhlo.backend_config = {factor = [1, 2]}",
)


def test_an_unsupported_call_says_how_to_skip_it_in_the_api():
    with pytest.raises(rewriter.RewriteError) as caught:
        rewriter.rewrite(UNSUPPORTED)
    error, note = caught.value.diagnostics
    assert error.severity == "error" and "'factor' is a list" in error.message
    assert note.severity == "note"
    assert (note.line, note.column) == (error.line, 5)  # the call's own line and column
    assert note.message == (
        "to rewrite the other calls and leave @scale as it is, pass skip=['scale']"
    )
    # and following it works
    result = rewriter.rewrite(UNSUPPORTED, skip=["scale"])
    assert statuses(result) == {"scale": "left alone", "offset": "rewritten"}


def test_an_unsupported_call_says_how_to_skip_it_on_the_command_line(tmp_path: Path):
    path = tmp_path / "model.mlir"
    path.write_text(UNSUPPORTED)
    run = subprocess.run(
        [sys.executable, "-m", "rewriter", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1 and run.stdout == ""
    assert (
        f"{path}:{run.stderr.split(':')[1]}:5: note: to rewrite the other calls and leave "
        "@scale as it is, pass --skip scale\n"
    ) in run.stderr
    again = subprocess.run(
        [sys.executable, "-m", "rewriter", str(path), "--skip", "scale"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert again.returncode == 0, again.stderr
    assert "func.call @offset(" in again.stdout


def test_the_skip_hint_escapes_glob_characters():
    assert rewriter.plan.selection.exact_pattern("a*b?c[d]") == "a[*]b[?]c[[]d]"
    from fnmatch import fnmatchcase

    assert fnmatchcase("a*b?c[d]", rewriter.plan.selection.exact_pattern("a*b?c[d]"))
    assert not fnmatchcase("aXbYc[d]", rewriter.plan.selection.exact_pattern("a*b?c[d]"))


# ---------------------------------------------------------------- a bracket too many


RMS = (ROOT / "samples" / "rms_norm" / "rms_norm.mlir").read_text()


def position(text: str, offset: int) -> tuple[int, int]:
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def test_an_extra_brace_is_reported_where_it_is():
    text = RMS.replace("mhlo.backend_config = {eps", "mhlo.backend_config = {{eps", 1)
    extra = text.index("{{eps") + 1
    with pytest.raises(rewriter.RewriteError) as caught:
        rewriter.rewrite(text)
    error, note = caught.value.diagnostics
    assert (error.line, error.column) == position(text, extra)
    assert error.message == "unexpected '{'"
    # what the bracket matching saw stays, as a note at the module's brace
    module_brace = text.index("{\n", text.index("module @"))
    assert (note.severity, (note.line, note.column)) == ("note", position(text, module_brace))
    assert "is never closed" in note.message


def test_an_extra_closing_bracket_is_reported_where_it_is():
    text = RMS.replace("dense<[1, 0]> : tensor<2xindex>]", "dense<[1, 0]]> : tensor<2xindex>]", 1)
    extra = text.index("0]]>") + 2
    with pytest.raises(rewriter.RewriteError) as caught:
        rewriter.rewrite(text)
    assert (caught.value.line, caught.value.column) == position(text, extra)


def test_a_truncated_file_still_names_the_brace_left_open():
    text = RMS[: RMS.rindex("} loc(#loc)")]  # the module's closing brace is gone
    with pytest.raises(rewriter.RewriteError) as caught:
        rewriter.rewrite(text)
    [error] = caught.value.diagnostics
    module_brace = text.index("{\n", text.index("module @"))
    assert (error.line, error.column) == position(text, module_brace)
    assert error.message == "'{' is never closed: the input ends first (truncated file?)"


@pytest.mark.parametrize("running", [True, False])
def test_the_cyclic_collector_is_paused_while_rewriting_and_restored(
    monkeypatch: pytest.MonkeyPatch, running: bool
) -> None:
    """analyze pauses Python's cyclic collector while it scans and plans, and so does
    ``Result.text`` while it applies the edits (speed, and linear time, on call-dense
    exports); each leaves it as it found it, also when planning raises or the file is
    unusable."""
    import gc

    import rewriter.api as api

    seen: list[tuple[str, bool]] = []

    def recording(name):
        original = getattr(api, name)

        def record(*args, **kwargs):
            seen.append((name, gc.isenabled()))
            return original(*args, **kwargs)

        monkeypatch.setattr(api, name, record)

    for name in ("scan", "plan_rewrite", "apply_edits"):
        recording(name)
    was = gc.isenabled()
    (gc.enable if running else gc.disable)()
    try:
        result = rewriter.analyze(RMS)
        assert seen == [("scan", False), ("plan_rewrite", False)]
        assert gc.isenabled() == running
        assert result.text == rewriter.rewrite(RMS).text
        assert seen[2] == ("apply_edits", False)
        assert gc.isenabled() == running
        with pytest.raises(rewriter.RewriteError):
            rewriter.analyze("module {\n")
        assert gc.isenabled() == running

        def failing(*args, **kwargs):
            raise RuntimeError("planning failed")

        monkeypatch.setattr(api, "plan_rewrite", failing)
        with pytest.raises(RuntimeError):
            rewriter.analyze(RMS)
        assert gc.isenabled() == running
    finally:
        (gc.enable if was else gc.disable)()


def test_brackets_are_matched_on_ascii_text_only():
    """The bracket check reads the scan's masked text, which is ASCII: characters other
    than ASCII may stand only in strings and comments, which are blanked, and anywhere
    else they are reported before brackets are looked at."""
    from rewriter.syntax.compact import compact

    truncated = RMS[: RMS.rindex("} loc(#loc)")]
    in_strings = truncated.replace("module @", "// ü ( [\nmodule @", 1)
    in_strings = in_strings.replace('{jax.result_info = "result"}', '{jax.result_info = "é("}')
    assert '"é("' in in_strings and "// ü" in in_strings
    assert compact(in_strings, frozenset()).text.isascii()
    with pytest.raises(rewriter.RewriteError) as caught:
        rewriter.rewrite(in_strings)
    [error] = caught.value.diagnostics
    assert error.message == "'{' is never closed: the input ends first (truncated file?)"
    outside = truncated.replace("module @", "ü module @", 1)
    with pytest.raises(rewriter.RewriteError) as caught:
        rewriter.rewrite(outside)
    [error] = caught.value.diagnostics
    assert error.message == "unexpected character 'ü' (U+00FC): not valid MLIR syntax"


def test_a_results_text_is_its_edits_applied_or_the_text_it_was_given():
    """``Result.text`` is joined from the original and the edits when first read (once),
    unless a text was given, as for a Result built by hand; equality compares texts."""
    from rewriter.api import Result
    from rewriter.plan.edits import apply_edits

    result = rewriter.analyze(RMS)
    assert result.text == apply_edits(RMS, result.edits) != RMS
    assert result.text is result.text
    assert result.changed and result == rewriter.rewrite(RMS)
    given = Result("rewritten by hand", RMS)
    assert given.text == "rewritten by hand" and given.edits == [] and given.changed
    assert given != Result("rewritten otherwise", RMS)
    assert Result(None, RMS).text == RMS and not Result(None, RMS).changed
    result.text = "assigned"
    assert result.text == "assigned" and result != rewriter.rewrite(RMS)


# ---------------------------------------------------------------- the API's own words and names


def test_a_call_left_alone_by_the_api_is_explained_in_the_apis_words():
    text = (ROOT / "samples" / "rms_norm" / "rms_norm.mlir").read_text()
    assert rewriter.rewrite(text, skip="rms_norm").calls[0].reason == "matched by skip="
    assert rewriter.rewrite(text, targets="other").calls[0].reason == "not matched by targets="


def test_the_command_line_explains_it_in_its_words():
    run = subprocess.run(
        [sys.executable, "-m", "rewriter", "--list", "--skip", "rms_norm", "-"],
        cwd=ROOT,
        input=(ROOT / "samples" / "rms_norm" / "rms_norm.mlir").read_text(),
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.endswith(": left alone: matched by --skip\n")


@pytest.mark.parametrize(
    ("data", "name"),
    [
        ("module {\n}\n", "<mlir text>"),
        (b"module {\n}\n", "<mlir text>"),
        (b"ML\xefR garbage", "<mlir bytecode>"),
    ],
)
def test_an_input_without_a_filename_is_named_after_what_it_is(data, name):
    assert rewriter.api.input_name(data) == name
    assert rewriter.api.input_name(data, "given.mlir") == "given.mlir"


def test_text_diagnostics_and_reports_use_the_default_name():
    text = (ROOT / "samples" / "rms_norm" / "rms_norm.mlir").read_text()
    assert rewriter.rewrite(text).calls[0].filename == "<mlir text>"
    with pytest.raises(rewriter.RewriteError) as raised:
        rewriter.rewrite("module {\n  %0 = {{\n}\n")
    assert str(raised.value).startswith("<mlir text>:")


@pytest.mark.jax
def test_an_exported_is_named_as_export_names_it():
    import jax
    import jax.numpy as jnp

    result = rewriter.export(jnp.sin, jax.ShapeDtypeStruct((3,), jnp.float32))
    assert rewriter.api.input_name(result.exported) == "<jax.export of sin>"
    assert rewriter.api.input_name(bytes(result.exported.serialize())) == "<serialized jax.export>"
    assert rewriter.api.read_source(result.exported).filename == "<jax.export of sin>"
