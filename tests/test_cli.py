"""The command line, run as a real subprocess: ``python -m rewriter ...`` from the repo root.

Expected diagnostic positions are computed here from the inputs the tests build, never copied
from what the tool prints.
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from rewriter import cli
from rewriter.emit import json_text

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
RMS_NORM = SAMPLES / "rms_norm" / "rms_norm.mlir"
RMS_NORM_REWRITTEN = SAMPLES / "rms_norm" / "rms_norm.rewritten.mlir"
NAME_CLASH = SAMPLES / "name_clash" / "name_clash.mlir"
CHOLESKY = SAMPLES / "cholesky_lapack" / "cholesky_lapack.mlir"
TWO_TARGETS = SAMPLES / "two_targets" / "two_targets.mlir"
TWO_TARGETS_REWRITTEN = SAMPLES / "two_targets" / "two_targets.rewritten.mlir"

RMS_TEXT = RMS_NORM.read_text(encoding="utf-8")
RMS_CALL = "stablehlo.custom_call @rms_norm(%arg0)"
RMS_SIGNATURE = ": (tensor<10x10xf32>) -> tensor<10x10xf32> loc(#loc14)"

DIAGNOSTIC = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): error: (?P<message>.+)$")
LIST_LINE = re.compile(
    r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): @(?P<target>[\w$.\-]+)"
    r"\((?P<operands>.*?)\) -> \((?P<results>.*?)\)(?: \{(?P<attributes>.*?)\})?: "
    r"(?P<decision>rewritten as @\S+(?: \(through @\S+\))?|left alone: .+|error: .+)$"
)


# ---------------------------------------------------------------- helpers


def run_cli(
    *args: object, stdin: bytes = b"", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``python -m rewriter ARGS`` in the repo root; stdin is empty unless given."""
    return subprocess.run(
        [sys.executable, "-m", "rewriter", *map(str, args)],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        timeout=120,
        env=env,
    )


def err(result: subprocess.CompletedProcess[bytes]) -> str:
    return result.stderr.decode("utf-8", "replace")


def out(result: subprocess.CompletedProcess[bytes]) -> str:
    return result.stdout.decode("utf-8", "replace")


def stderr_lines(result: subprocess.CompletedProcess[bytes]) -> list[str]:
    # split on "\n" only: str.splitlines would also split on control characters.
    return err(result).rstrip("\n").split("\n")


def copy_to(directory: Path, source: Path, name: str | None = None) -> Path:
    destination = directory / (name or source.name)
    destination.write_bytes(source.read_bytes())
    return destination


def line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column (in characters) of ``offset`` in ``text``."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def source_line(text: str, line: int) -> str:
    lines = text.split("\n")
    return lines[line - 1].rstrip("\r") if line <= len(lines) else ""


def snapshot(path: Path) -> tuple[bytes, int, int]:
    info = path.stat()
    return path.read_bytes(), info.st_mtime_ns, stat.S_IMODE(info.st_mode)


def age(path: Path) -> None:
    """Give ``path`` an old mtime so that any rewrite of it would show."""
    os.utime(path, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))


def assert_clean_failure(result: subprocess.CompletedProcess[bytes], status: int = 1) -> None:
    assert result.returncode == status, err(result)
    assert "Traceback" not in err(result), err(result)
    assert result.stdout == b""


def escaped(text: str) -> str:
    """``text`` as a diagnostic shows it: each character ``str.isprintable`` refuses as
    ``\\XX`` per UTF-8 byte (MLIR's string escape), so input cannot drive the terminal."""
    return "".join(
        char if char.isprintable() else "".join(f"\\{byte:02X}" for byte in char.encode())
        for char in text
    )


def assert_caret(shown: str, caret: str, line_text: str, column: int, full: bool = True) -> None:
    """``shown`` is (a window of) ``line_text``, escaped, and ``caret`` puts its ``^`` under
    the character at ``column`` (under the first character of its escape)."""
    assert caret.strip(" \t") == "^", f"not a caret line: {caret!r}"
    index = caret.index("^")
    # Tabs before the caret must match the shown line's, or the caret drifts on a terminal.
    tabs_shown = [i for i, char in enumerate(shown[:index]) if char == "\t"]
    tabs_caret = [i for i, char in enumerate(caret[:index]) if char == "\t"]
    assert tabs_shown == tabs_caret, (shown, caret)
    flat_line = line_text.replace("\t", " ")
    flat_shown = shown.replace("\t", " ")
    if flat_shown.startswith("...") and not escaped(flat_line).startswith("..."):
        flat_shown, index = flat_shown[3:], index - 3
    if flat_shown.endswith("...") and not escaped(flat_line).endswith("..."):
        flat_shown = flat_shown[:-3]
    elif full:
        assert escaped(flat_line).endswith(flat_shown), f"source line cut short: {shown!r}"
    before, after = escaped(flat_line[: column - 1]), escaped(flat_line[column - 1 :])
    assert before.endswith(flat_shown[:index]) and after.startswith(flat_shown[index:]), (
        f"caret not under column {column} of {line_text!r}:\n{shown}\n{caret}"
    )


def assert_diagnostic(
    result: subprocess.CompletedProcess[bytes],
    path: Path,
    text: str,
    positions: set[tuple[int, int]],
    full_line: bool = True,
) -> None:
    """A clean exit 1 whose stderr starts with ``path:LINE:COL: error: ...``, source, caret."""
    assert_clean_failure(result)
    lines = stderr_lines(result)
    head = DIAGNOSTIC.match(lines[0])
    assert head, f"not a diagnostic: {lines[0]!r}"
    assert head["file"] == str(path)
    position = int(head["line"]), int(head["col"])
    assert position in positions, (
        f"reported at {position}, expected one of {sorted(positions)}:\n{err(result)}"
    )
    assert len(lines) >= 3, f"no source line and caret after the diagnostic:\n{err(result)}"
    assert_caret(lines[1], lines[2], source_line(text, position[0]), position[1], full_line)


# ---------------------------------------------------------------- bad inputs


@dataclass
class BadInput:
    name: str
    data: bytes
    offsets: list[int] = field(default_factory=list)  # acceptable places, in characters
    full_line: bool = True  # the diagnostic must show the whole source line

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", "replace")

    def positions(self) -> set[tuple[int, int]]:
        return {line_col(self.text, offset) for offset in self.offsets}


def _truncated_at_line() -> BadInput:
    # Keep the module up to and including the custom call: `return` and both `}` are lost.
    call_line_end = RMS_TEXT.index("\n", RMS_TEXT.index(RMS_CALL)) + 1
    text = RMS_TEXT[:call_line_end]
    func_open = text.rindex("{", 0, text.rindex("\n", 0, text.index(RMS_CALL)))
    return BadInput("truncated_after_call", text.encode(), [func_open, len(text)])


def _truncated_mid_line() -> BadInput:
    text = RMS_TEXT[: RMS_TEXT.index("eps = 9.99") + len("eps = 9.")]
    return BadInput("truncated_mid_call", text.encode(), [text.rindex("{"), len(text)])


def _extra_brace_at_end() -> BadInput:
    return BadInput("extra_brace_at_end", (RMS_TEXT + "}\n").encode(), [len(RMS_TEXT)])


def _extra_brace_in_operands() -> BadInput:
    text = RMS_TEXT.replace("@rms_norm(%arg0)", "@rms_norm(%arg0})")
    brace = text.index("%arg0})") + len("%arg0")
    return BadInput("extra_brace_in_operands", text.encode(), [brace])


def _missing_paren() -> BadInput:
    text = RMS_TEXT.replace("@rms_norm(%arg0)", "@rms_norm(%arg0")
    opener = text.index("@rms_norm(%arg0") + len("@rms_norm")
    gap = opener + len("(%arg0")
    # the unclosed `(`, where the `)` is missing, or the next token `{`
    return BadInput("missing_paren", text.encode(), [opener, gap, gap + 1])


def _invalid_utf8() -> BadInput:
    lines = RMS_TEXT.encode().split(b"\n")
    middle = len(lines[2]) // 2
    lines[2] = lines[2][:middle] + b"\xff" + lines[2][middle:]
    data = b"\n".join(lines)
    offset = len(data[: data.index(b"\xff")].decode("utf-8"))
    return BadInput("invalid_utf8_line_3", data, [offset], full_line=False)


def _unterminated_string() -> BadInput:
    text = RMS_TEXT.replace('#loc1 = loc("x")', '#loc1 = loc("x)')
    quote = text.index('"x)')
    return BadInput("unterminated_string", text.encode(), [quote, text.index("\n", quote)])


def _call_without_result_type() -> BadInput:
    text = RMS_TEXT.replace(RMS_SIGNATURE, ": (tensor<10x10xf32>) -> loc(#loc14)")
    arrow = text.index(") -> loc(#loc14)") + len(") ->")
    # right after `->`, or the `loc` that stands where the result type should be
    return BadInput("call_without_result_type", text.encode(), [arrow, arrow + 1])


def _call_cut_after_arrow() -> BadInput:
    text = RMS_TEXT.replace(RMS_SIGNATURE, ": (tensor<10x10xf32>) ->")
    line_end = text.index("\n", text.index(RMS_CALL))
    # the end of the cut line, or the next token (`return`) that is not a type
    return BadInput("call_cut_after_arrow", text.encode(), [line_end, text.index("return")])


BAD_INPUTS = [
    _truncated_at_line(),
    _truncated_mid_line(),
    _extra_brace_at_end(),
    _extra_brace_in_operands(),
    _missing_paren(),
    BadInput("nul_garbage", b"module {\n  \x00\x01garbage\n}\n", [len("module {\n  ")]),
    BadInput("empty", b"", [0]),
    BadInput("whitespace_only", b" \n\t\n  \n", [0, len(" \n\t\n  \n")]),
    _invalid_utf8(),
    _unterminated_string(),
    _call_without_result_type(),
    _call_cut_after_arrow(),
]


@pytest.mark.parametrize("case", BAD_INPUTS, ids=lambda case: case.name)
def test_bad_input_gives_positioned_diagnostic(tmp_path: Path, case: BadInput) -> None:
    path = tmp_path / "bad.mlir"
    path.write_bytes(case.data)
    result = run_cli(path)
    assert_diagnostic(result, path, case.text, case.positions(), case.full_line)
    assert path.read_bytes() == case.data


@pytest.mark.parametrize("case", BAD_INPUTS, ids=lambda case: case.name)
def test_bad_input_creates_no_output_file(tmp_path: Path, case: BadInput) -> None:
    path = tmp_path / "bad.mlir"
    path.write_bytes(case.data)
    result = run_cli(path, "-o", tmp_path / "out.mlir")
    assert_clean_failure(result)
    assert DIAGNOSTIC.match(stderr_lines(result)[0])
    assert sorted(os.listdir(tmp_path)) == ["bad.mlir"]


@pytest.mark.parametrize("case", BAD_INPUTS, ids=lambda case: case.name)
def test_bad_input_leaves_existing_output_untouched(tmp_path: Path, case: BadInput) -> None:
    path = tmp_path / "bad.mlir"
    path.write_bytes(case.data)
    output = tmp_path / "out.mlir"
    output.write_bytes(b"previous output\n")
    age(output)
    before = snapshot(output)
    result = run_cli(path, "-o", output)
    assert_clean_failure(result)
    assert snapshot(output) == before
    assert sorted(os.listdir(tmp_path)) == ["bad.mlir", "out.mlir"]


def test_bad_input_on_stdin_gives_diagnostic() -> None:
    case = _extra_brace_in_operands()
    result = run_cli(stdin=case.data)
    assert_clean_failure(result)
    lines = stderr_lines(result)
    head = DIAGNOSTIC.match(lines[0])
    assert head and head["file"] == "<stdin>", err(result)
    assert (int(head["line"]), int(head["col"])) in case.positions()


# ---------------------------------------------------------------- default mode, stdin, -o


def test_file_argument_prints_rewritten_module() -> None:
    result = run_cli(RMS_NORM.relative_to(ROOT))
    assert result.returncode == 0, err(result)
    assert result.stdout == RMS_NORM_REWRITTEN.read_bytes()
    assert result.stderr == b""


def test_dash_reads_standard_input() -> None:
    result = run_cli("-", stdin=RMS_NORM.read_bytes())
    assert result.returncode == 0, err(result)
    assert result.stdout == RMS_NORM_REWRITTEN.read_bytes()


def test_no_file_reads_standard_input() -> None:
    result = run_cli(stdin=RMS_NORM.read_bytes())
    assert result.returncode == 0, err(result)
    assert result.stdout == RMS_NORM_REWRITTEN.read_bytes()


def test_output_option_writes_file_and_nothing_on_stdout(tmp_path: Path) -> None:
    source = copy_to(tmp_path, RMS_NORM)
    output = tmp_path / "out.mlir"
    result = run_cli(source, "-o", output)
    assert result.returncode == 0, err(result)
    assert result.stdout == b""
    assert output.read_bytes() == RMS_NORM_REWRITTEN.read_bytes()
    assert source.read_bytes() == RMS_NORM.read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["out.mlir", "rms_norm.mlir"]  # no temp files


def test_output_option_replaces_existing_file(tmp_path: Path) -> None:
    output = tmp_path / "out.mlir"
    output.write_bytes(b"old\n")
    result = run_cli(RMS_NORM, "-o", output)
    assert result.returncode == 0, err(result)
    assert output.read_bytes() == RMS_NORM_REWRITTEN.read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["out.mlir"]


# ---------------------------------------------------------------- --in-place


def test_in_place_rewrites_file_and_keeps_mode(tmp_path: Path) -> None:
    path = copy_to(tmp_path, RMS_NORM)
    path.chmod(0o640)
    result = run_cli("--in-place", path)
    assert result.returncode == 0, err(result)
    assert result.stdout == b""
    assert path.read_bytes() == RMS_NORM_REWRITTEN.read_bytes()
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_in_place_leaves_file_needing_no_change_untouched(tmp_path: Path) -> None:
    path = copy_to(tmp_path, RMS_NORM_REWRITTEN)
    age(path)
    before = snapshot(path)
    result = run_cli("--in-place", path)
    assert result.returncode == 0, err(result)
    assert snapshot(path) == before


def test_second_in_place_run_changes_nothing(tmp_path: Path) -> None:
    path = copy_to(tmp_path, RMS_NORM)
    assert run_cli("--in-place", path).returncode == 0
    age(path)
    before = snapshot(path)
    result = run_cli("--in-place", path)
    assert result.returncode == 0, err(result)
    assert snapshot(path) == before


def test_in_place_leaves_no_temporary_files(tmp_path: Path) -> None:
    first = copy_to(tmp_path, RMS_NORM)
    second = copy_to(tmp_path, TWO_TARGETS)
    result = run_cli("--in-place", first, second)
    assert result.returncode == 0, err(result)
    assert sorted(os.listdir(tmp_path)) == ["rms_norm.mlir", "two_targets.mlir"]
    assert second.read_bytes() == TWO_TARGETS_REWRITTEN.read_bytes()


def test_in_place_through_symlink_replaces_target_and_keeps_link(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "links").mkdir()
    target = copy_to(tmp_path / "real", RMS_NORM)
    link = tmp_path / "links" / "model.mlir"
    link.symlink_to(os.path.relpath(target, link.parent))
    link_text = os.readlink(link)
    result = run_cli("--in-place", link)
    assert result.returncode == 0, err(result)
    assert link.is_symlink()
    assert os.readlink(link) == link_text
    assert target.read_bytes() == RMS_NORM_REWRITTEN.read_bytes()
    assert sorted(os.listdir(tmp_path / "real")) == ["rms_norm.mlir"]
    assert sorted(os.listdir(tmp_path / "links")) == ["model.mlir"]


def test_in_place_rewrites_good_files_when_one_is_broken(tmp_path: Path) -> None:
    good = copy_to(tmp_path, RMS_NORM)
    other = copy_to(tmp_path, TWO_TARGETS)
    case = _extra_brace_in_operands()
    broken = tmp_path / "broken.mlir"
    broken.write_bytes(case.data)
    age(broken)
    before = snapshot(broken)
    result = run_cli("--in-place", good, broken, other)
    assert result.returncode == 1
    assert "Traceback" not in err(result)
    assert result.stdout == b""
    assert good.read_bytes() == RMS_NORM_REWRITTEN.read_bytes()
    assert other.read_bytes() == TWO_TARGETS_REWRITTEN.read_bytes()
    assert snapshot(broken) == before
    heads = [m for m in map(DIAGNOSTIC.match, stderr_lines(result)) if m]
    assert [(h["file"], int(h["line"]), int(h["col"])) for h in heads] == [
        (str(broken), *line_col(case.text, case.offsets[0]))
    ]
    assert sorted(os.listdir(tmp_path)) == ["broken.mlir", "rms_norm.mlir", "two_targets.mlir"]


# ---------------------------------------------------------------- --check


def test_check_lists_files_that_would_change_and_writes_nothing(tmp_path: Path) -> None:
    changing = copy_to(tmp_path, RMS_NORM)
    unchanged = copy_to(tmp_path, RMS_NORM_REWRITTEN)
    for path in (changing, unchanged):
        age(path)
    before = [snapshot(changing), snapshot(unchanged)]
    result = run_cli("--check", changing, unchanged)
    assert result.returncode == 1, err(result)
    # stdout lists every call that would change: file:line: @target: what would happen
    line = (
        RMS_NORM.read_text()
        .splitlines()
        .index(next(x for x in RMS_NORM.read_text().splitlines() if "stablehlo.custom_call" in x))
        + 1
    )
    assert out(result).splitlines() == [
        f"{changing}:{line}: @rms_norm: would be rewritten as @rms_norm"
    ]
    assert "Traceback" not in err(result)
    assert [snapshot(changing), snapshot(unchanged)] == before
    lines = stderr_lines(result)
    assert f"{changing}: would rewrite" in lines
    assert f"{unchanged}: would rewrite" not in lines
    summary = [line for line in lines if not line.endswith(": would rewrite")]
    assert any(re.search(r"\b1\b.*\b2\b", line) for line in summary), err(result)
    assert sorted(os.listdir(tmp_path)) == ["rms_norm.mlir", "rms_norm.rewritten.mlir"]


def test_check_exits_zero_when_nothing_would_change(tmp_path: Path) -> None:
    path = copy_to(tmp_path, RMS_NORM_REWRITTEN)
    age(path)
    before = snapshot(path)
    result = run_cli("--check", path)
    assert result.returncode == 0, err(result)
    assert "would rewrite" not in err(result)
    assert result.stdout == b""
    assert snapshot(path) == before


def test_check_single_changing_file_exits_one(tmp_path: Path) -> None:
    path = copy_to(tmp_path, RMS_NORM)
    result = run_cli("--check", path)
    assert result.returncode == 1
    assert stderr_lines(result) == [f"{path}: would rewrite"]
    assert path.read_bytes() == RMS_NORM.read_bytes()


# ---------------------------------------------------------------- --list


def _call_positions(path: Path, target: str) -> set[tuple[int, int]]:
    """The custom call's statement start or its op name: either is a fair place to report."""
    text = path.read_text(encoding="utf-8")
    keyword = text.index(f"stablehlo.custom_call @{target}(")
    statement = text.rfind("\n", 0, keyword) + 1
    statement += len(text[statement:keyword]) - len(text[statement:keyword].lstrip())
    return {line_col(text, keyword), line_col(text, statement)}


def test_list_name_clash_reports_renamed_extern_and_warns() -> None:
    name = str(NAME_CLASH.relative_to(ROOT))
    result = run_cli("--list", name)
    assert result.returncode == 0, err(result)
    lines = out(result).splitlines()
    assert len(lines) == 1, out(result)
    match = LIST_LINE.match(lines[0])
    assert match, lines[0]
    assert match["file"] == name
    assert (int(match["line"]), int(match["col"])) in _call_positions(NAME_CLASH, "rms_norm")
    assert match["target"] == "rms_norm"
    assert match["operands"] == "tensor<10x10xf32>"
    assert match["results"] == "tensor<10x10xf32>"
    assert match["attributes"] == "eps: f32"
    assert match["decision"] == "rewritten as @rms_norm_1"
    warnings = [line for line in stderr_lines(result) if ": warning: " in line]
    assert len(warnings) == 1, err(result)
    assert re.search(r"\brms_norm\b", warnings[0]) and "rms_norm_1" in warnings[0]
    assert warnings[0].startswith(f"{name}:")
    assert "Traceback" not in err(result)


def test_list_reports_errors(tmp_path: Path) -> None:
    source = tmp_path / "tuple.mlir"
    source.write_text((ROOT / "tests" / "data" / "tuple_call.mlir").read_text())
    result = run_cli("--list", str(source))
    assert result.returncode == 1, err(result)
    assert "Traceback" not in err(result)
    lines = out(result).splitlines()
    assert len(lines) == 1, out(result)
    match = LIST_LINE.match(lines[0])
    assert match, lines[0]
    assert (match["file"], match["line"], match["col"]) == (str(source), "3", "5")
    assert match["target"] == "pack"
    assert match["decision"].startswith("error: ") and "tuple" in match["decision"]


def test_list_reports_layout_wrapper() -> None:
    name = str(CHOLESKY.relative_to(ROOT))
    result = run_cli("--list", name)
    assert result.returncode == 0, err(result)
    (line,) = out(result).splitlines()
    match = LIST_LINE.match(line)
    assert match, line
    assert match["target"] == "lapack_spotrf_ffi"
    assert (
        match["decision"] == "rewritten as @lapack_spotrf_ffi (through @lapack_spotrf_ffi_layout)"
    )


def test_list_reports_calls_left_alone() -> None:
    name = str(TWO_TARGETS.relative_to(ROOT))
    result = run_cli("--list", "--skip", "offset", name)
    assert result.returncode == 0, err(result)
    matches = [LIST_LINE.match(line) for line in out(result).splitlines()]
    assert all(matches), out(result)
    decisions = {m["target"]: m["decision"] for m in matches}
    assert decisions["scale"] == "rewritten as @scale"
    assert re.fullmatch(r"left alone: \S.*", decisions["offset"]), decisions
    assert matches[0]["attributes"] == "factor: f32"


# ---------------------------------------------------------------- --target / --skip


def test_target_rewrites_only_matching_calls() -> None:
    result = run_cli("--target", "scale", TWO_TARGETS)
    assert result.returncode == 0, err(result)
    text = out(result)
    assert "stablehlo.custom_call @offset" in text
    assert "stablehlo.custom_call @scale" not in text
    assert "func.call @scale(" in text


def test_skip_leaves_matching_calls_alone() -> None:
    result = run_cli("--skip", "sc*", TWO_TARGETS)
    assert result.returncode == 0, err(result)
    text = out(result)
    assert "stablehlo.custom_call @scale" in text
    assert "stablehlo.custom_call @offset" not in text
    assert "func.call @offset(" in text


def test_target_without_match_outputs_input_unchanged() -> None:
    result = run_cli("--target", "nomatch", TWO_TARGETS)
    assert result.returncode == 0, err(result)
    assert result.stdout == TWO_TARGETS.read_bytes()


def test_target_is_repeatable() -> None:
    result = run_cli("--target", "scale", "--target", "off*", TWO_TARGETS)
    assert result.returncode == 0, err(result)
    assert result.stdout == TWO_TARGETS_REWRITTEN.read_bytes()


def test_skip_is_repeatable() -> None:
    result = run_cli("--skip", "scale", "--skip", "offset", TWO_TARGETS)
    assert result.returncode == 0, err(result)
    assert result.stdout == TWO_TARGETS.read_bytes()


# ---------------------------------------------------------------- files that cannot be used


def test_missing_input_file_gives_one_line_message(tmp_path: Path) -> None:
    missing = tmp_path / "missing.mlir"
    result = run_cli(missing)
    assert_clean_failure(result)
    lines = stderr_lines(result)
    assert len(lines) == 1, err(result)
    assert str(missing) in lines[0]


def test_output_into_missing_directory_fails_cleanly(tmp_path: Path) -> None:
    output = tmp_path / "no_such_dir" / "out.mlir"
    result = run_cli(RMS_NORM, "-o", output)
    assert_clean_failure(result)
    lines = stderr_lines(result)
    assert len(lines) == 1 and str(output) in lines[0], err(result)
    assert os.listdir(tmp_path) == []


def test_output_onto_directory_fails_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    result = run_cli(RMS_NORM, "-o", tmp_path / "out")
    assert_clean_failure(result)
    assert str(tmp_path / "out") in err(result)
    assert os.listdir(tmp_path) == ["out"]
    assert os.listdir(tmp_path / "out") == []


# ---------------------------------------------------------------- usage


@pytest.mark.parametrize(
    "arguments",
    [
        ["--in-place", "-"],
        ["{a}", "{b}"],
        ["--check", "--in-place", "{a}"],
    ],
    ids=["in_place_stdin", "several_files_without_mode", "check_with_in_place"],
)
def test_usage_errors_exit_2(tmp_path: Path, arguments: list[str]) -> None:
    a = copy_to(tmp_path, RMS_NORM, "a.mlir")
    b = copy_to(tmp_path, RMS_NORM, "b.mlir")
    result = run_cli(*(arg.format(a=a, b=b) for arg in arguments), stdin=RMS_NORM.read_bytes())
    assert_clean_failure(result, status=2)
    assert "usage:" in err(result)
    assert a.read_bytes() == b.read_bytes() == RMS_NORM.read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["a.mlir", "b.mlir"]


def test_version_prints_version() -> None:
    result = run_cli("--version")
    assert result.returncode == 0
    assert re.search(r"\d+\.\d+", out(result) + err(result))


def test_help_shows_examples() -> None:
    result = run_cli("--help")
    assert result.returncode == 0
    assert "examples:" in out(result)
    assert "python -m rewriter" in out(result)
    assert "--in-place" in out(result) and "--check" in out(result)


# ---------------------------------------------------------------- line endings, tabs, colour


def _jaxlib_verify(text: str) -> None:
    try:
        from tests.mlir_tools import jaxlib_verify
    except ImportError:
        sys.path.insert(0, str(ROOT / "tests"))
        from mlir_tools import jaxlib_verify
    jaxlib_verify(text)


def assert_untouched_lines_keep_crlf(data: bytes, output: bytes) -> None:
    """Every line but the custom call's keeps its CRLF; the result is rewritten and parses."""
    for line in data.split(b"\r\n"):
        if line and RMS_CALL.encode() not in line:
            assert line + b"\r\n" in output, line
    assert b"\r" not in output.replace(b"\r\n", b""), "stray carriage return"
    assert b"stablehlo.custom_call" not in output
    assert b"func.call @rms_norm(" in output
    _jaxlib_verify(output.decode("utf-8"))


@pytest.mark.jax
def test_crlf_line_endings_survive(tmp_path: Path) -> None:
    data = RMS_NORM.read_bytes().replace(b"\n", b"\r\n")
    path = tmp_path / "crlf.mlir"
    path.write_bytes(data)
    result = run_cli(path)
    assert result.returncode == 0, err(result)
    assert_untouched_lines_keep_crlf(data, result.stdout)


@pytest.mark.jax
def test_crlf_file_rewritten_in_place_keeps_crlf(tmp_path: Path) -> None:
    data = RMS_NORM.read_bytes().replace(b"\n", b"\r\n")
    path = tmp_path / "crlf.mlir"
    path.write_bytes(data)
    result = run_cli("--in-place", path)
    assert result.returncode == 0, err(result)
    assert_untouched_lines_keep_crlf(data, path.read_bytes())


@pytest.mark.jax
def test_tab_indentation_survives(tmp_path: Path) -> None:
    lines = RMS_NORM.read_text(encoding="utf-8").split("\n")
    tabbed = [
        "\t" * ((len(line) - len(line.lstrip(" "))) // 2) + line.lstrip(" ") for line in lines
    ]
    path = tmp_path / "tabs.mlir"
    path.write_text("\n".join(tabbed), encoding="utf-8")
    result = run_cli(path)
    assert result.returncode == 0, err(result)
    output = out(result)
    for line in tabbed:
        if line.startswith("\t") and RMS_CALL not in line:
            assert line + "\n" in output, line
    assert "func.call @rms_norm(" in output
    _jaxlib_verify(output)


def test_diagnostic_for_tab_indented_line_aligns_caret(tmp_path: Path) -> None:
    text = "module {\n\tfunc.func @f() {\n\t\t%0 = \x00\n\t}\n}\n"
    path = tmp_path / "tabs.mlir"
    path.write_text(text, encoding="utf-8")
    result = run_cli(path)
    assert_diagnostic(result, path, text, {line_col(text, text.index("\x00"))})


@pytest.mark.slow
def test_no_colour_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env["TERM"] = "xterm-256color"
    bad = tmp_path / "bad.mlir"
    bad.write_bytes(_missing_paren().data)
    for arguments in (["--list", NAME_CLASH], [NAME_CLASH], [bad], ["--check", RMS_NORM]):
        result = run_cli(*arguments, env=env)
        assert result.stderr, arguments
        assert b"\x1b" not in result.stderr, (arguments, err(result))


def test_validate_points_into_the_users_file(tmp_path):
    """--validate checks the input first: a broken op is reported at its own line, not at
    the line it would have in the rewritten output (which has one more line above it)."""
    text = (SAMPLES / "rms_norm" / "rms_norm.mlir").read_text()
    lines = text.split("\n")
    assert lines[4].endswith("return %0 : tensor<10x10xf32> loc(#loc13)")
    lines[4] = lines[4].replace("loc(#loc13)", "loc(#loc13 foo)")  # only the grammar sees it
    broken = tmp_path / "bad.mlir"
    broken.write_text("\n".join(lines))
    done = subprocess.run(
        [sys.executable, "-m", "rewriter", "--validate", str(broken)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    first = done.stderr.splitlines()[0]
    column = lines[4].index("foo") + 1
    assert first == f"{broken}:5:{column}: error: unexpected 'foo'"


# ---------------------------------------------------------------- outputs that are inputs


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--emit-header", "{f}", "{f}"], "--emit-header {f} is the input file {f}"),
        (["-o", "{f}", "{f}"], "-o {f} is the input file {f}"),
        (["--emit-ffi-adapters", "{link}", "{f}"], "--emit-ffi-adapters {link} is the input"),
        (["--emit-header", "{sym}", "{f}"], "--emit-header {sym} is the input file {f}"),
        (
            ["--emit-header", "{d}/k.h", "--emit-ffi-adapters", "{d}/sub/../k.h", "{f}"],
            "--emit-ffi-adapters {d}/sub/../k.h is also the file of --emit-header {d}/k.h",
        ),
        (
            ["--emit-header", "{d}/k.h", "-o", "{d}/./k.h", "{f}"],
            "--emit-header {d}/k.h is also the file of -o {d}/./k.h",
        ),
    ],
    ids=["header_is_input", "output_is_input", "hard_link", "symlink", "two_new", "o_and_header"],
)
def test_output_that_is_an_input_or_another_output_is_refused(
    tmp_path: Path, arguments: list[str], message: str
) -> None:
    source = copy_to(tmp_path, RMS_NORM, "f.mlir")
    os.link(source, tmp_path / "link.mlir")
    os.symlink(source, tmp_path / "sym.mlir")
    (tmp_path / "sub").mkdir()
    names = {
        "f": source,
        "link": tmp_path / "link.mlir",
        "sym": tmp_path / "sym.mlir",
        "d": tmp_path,
    }
    result = run_cli(*(a.format(**names) for a in arguments))
    assert_clean_failure(result, status=2)
    assert message.format(**names) in err(result)
    assert "nothing was written" in err(result)
    assert source.read_bytes() == RMS_NORM.read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["f.mlir", "link.mlir", "sub", "sym.mlir"]
    assert os.listdir(tmp_path / "sub") == []


def test_check_with_emit_header_names_the_conflict(tmp_path: Path) -> None:
    source = copy_to(tmp_path, RMS_NORM)
    result = run_cli("--check", "--emit-header", tmp_path / "h.h", source)
    assert_clean_failure(result, status=2)
    assert "--emit-header writes a file, --check writes none: use one of them" in err(result)
    assert "takes one input file" not in err(result)
    assert sorted(os.listdir(tmp_path)) == ["rms_norm.mlir"]


def test_list_json_includes_unreadable_files_and_the_summary_counts_them(tmp_path: Path) -> None:
    missing = tmp_path / "missing.mlir"
    result = run_cli("--list", "--format", "json", RMS_NORM, missing)
    assert result.returncode == 1
    document = json.loads(out(result))
    files = {entry["file"]: entry for entry in document["files"]}
    assert set(files) == {str(RMS_NORM), str(missing)}
    assert files[str(missing)]["calls"] == []
    [error] = files[str(missing)]["errors"]
    assert error["severity"] == "error"
    assert error["message"] == "cannot read: No such file or directory"
    assert err(result).splitlines()[-1] == (
        "1 custom call in 2 files: 1 rewritten; 1 file could not be read"
    )


class RecordingStdout(io.TextIOWrapper):
    """A standard output that keeps the length of every write to its bytes."""

    def __init__(self) -> None:
        self.bytes = RecordingBytes()
        super().__init__(self.bytes, encoding="utf-8", write_through=True)

    @property
    def writes(self) -> list[int]:
        return self.bytes.writes

    def getvalue(self) -> str:
        self.flush()
        return self.bytes.getvalue().decode("utf-8")


class RecordingBytes(io.BytesIO):
    def __init__(self) -> None:
        super().__init__()
        self.writes: list[int] = []

    def write(self, data) -> int:  # type: ignore[override]
        self.writes.append(len(data))
        return super().write(data)


def test_list_json_is_written_in_pieces_never_as_one_document(monkeypatch) -> None:
    """A listing of 64k calls is 152 MB: written as one string it cost two more copies of
    that (the text and its encoding). The pieces printed are what a run in a new process
    prints. This listing is small: a piece holds 64 parts of it here."""
    export = ROOT / "tests" / "data" / "call_dense" / "long_attributes_48.mlir"
    stdout = RecordingStdout()
    monkeypatch.setattr(sys, "stdout", stdout)
    monkeypatch.setattr(json_text, "CHUNK_PARTS", 64)
    assert cli.main([str(export), "--list", "--format", "json"]) == 0
    monkeypatch.undo()
    text = stdout.getvalue()
    assert text == out(run_cli(export, "--list", "--format", "json"))
    assert len(json.loads(text)["files"][0]["calls"]) == 48
    assert max(stdout.writes) < len(text) / 4


def test_a_text_listing_does_not_build_the_json_listing(monkeypatch, capsys) -> None:
    """``--list`` built every call's JSON entry too, and kept it to the end unused: a
    sixth of its time on a 64k-call export (0.24 s of 1.31 s on layouts_64000)."""

    def no_json(*args: object) -> None:
        raise AssertionError("a text listing built a JSON entry")

    monkeypatch.setattr(cli, "_json_file", no_json)
    export = ROOT / "tests" / "data" / "call_dense" / "layouts_48.mlir"
    assert cli.main([str(export), "--list"]) == 0
    assert capsys.readouterr().out == out(run_cli(export, "--list"))


@pytest.mark.parametrize(
    "options",
    [
        ["--list"],
        ["--list", "--format", "json"],
        ["--emit-header", "{dir}/k.h"],
        ["--emit-ffi-adapters", "{dir}/k.c"],
    ],
    ids=["list", "json", "header", "adapters"],
)
def test_modes_that_write_no_module_never_join_the_rewritten_text(
    monkeypatch, capsys, tmp_path: Path, options: list[str]
) -> None:
    """The rewritten text is as large as the module and its edits together (80 MB for
    long_attributes_64000): a listing and the emitters read the calls alone, so they never
    make it. What they print and write is what a run in a new process makes."""
    import rewriter.api as api

    def no_join(*args: object) -> None:
        raise AssertionError("the rewritten text was joined")

    export = ROOT / "tests" / "data" / "call_dense" / "layouts_48.mlir"
    arguments = [option.format(dir=tmp_path / "here") for option in options]
    (tmp_path / "here").mkdir()
    monkeypatch.setattr(api, "apply_edits", no_join)
    assert cli.main([str(export), *arguments]) == 0
    monkeypatch.undo()
    printed = capsys.readouterr().out
    (tmp_path / "anew").mkdir()
    fresh = run_cli(export, *(option.format(dir=tmp_path / "anew") for option in options))
    assert printed == out(fresh)
    for name in {"--emit-header": ["k.h"], "--emit-ffi-adapters": ["k.c"]}.get(options[0], []):
        written = (tmp_path / "here" / name).read_text()
        assert "layouts" in written and written == (tmp_path / "anew" / name).read_text()


@pytest.mark.parametrize("running", [True, False])
def test_a_json_listing_is_built_with_the_cyclic_collector_paused(monkeypatch, capsys, running):
    """Each call's entry is a dict, made with the rewrite's objects alive: with the
    collector running, its full passes walked them all again and again (a 64k-call
    listing's entries took 6.8x the time of 16k calls'). It runs again after, if it ran."""
    import gc

    seen: list[bool] = []
    json_file = cli._json_file

    def recording(*args: object) -> dict:
        seen.append(gc.isenabled())
        return json_file(*args)

    monkeypatch.setattr(cli, "_json_file", recording)
    was = gc.isenabled()
    (gc.enable if running else gc.disable)()
    try:
        assert cli.main([str(RMS_NORM), "--list", "--format", "json"]) == 0
        assert gc.isenabled() == running
    finally:
        (gc.enable if was else gc.disable)()
    assert seen == [False]
    assert json.loads(capsys.readouterr().out)["files"][0]["calls"][0]["target"] == "rms_norm"


def installed_script() -> Path:
    """The console script pip made for this environment (pyproject's [project.scripts])."""
    script = Path(sys.executable).with_name("stablehlo-rewrite")
    assert script.exists(), f"{script}: install the package (pip install -e .)"
    return script


def test_script_names_itself_in_version_and_usage_errors(tmp_path: Path) -> None:
    script = installed_script()
    version = subprocess.run([script, "--version"], capture_output=True, text=True, cwd=ROOT)
    assert version.returncode == 0
    assert version.stdout.startswith("stablehlo-rewrite "), version.stdout
    usage = subprocess.run(
        [script, "--in-place", "-"], capture_output=True, text=True, cwd=ROOT, input=""
    )
    assert usage.returncode == 2
    assert usage.stderr.startswith("usage: stablehlo-rewrite "), usage.stderr
    assert "stablehlo-rewrite: error: --in-place needs files" in usage.stderr
    assert "python -m rewriter" not in usage.stderr
    module = run_cli("--version")
    assert out(module).startswith("python -m rewriter "), out(module)


# ---------------------------------------------------------------- input text printed escaped

# A target whose name holds a colour escape, a line break that forges a --check line, a bidi
# override, a carriage return and a bell (written with MLIR's escapes, as jax would print them).
FORGING_TARGET = r"x\1B[31mRED\1B[0m\0Afake.mlir:1: @y: would be rewritten as @z\E2\80\AE\0D\07"
FORGING_SHOWN = FORGING_TARGET  # shown as the file spells it: the escapes are MLIR's own
UNPRINTABLE = ("\x1b", "\r", "\x07", "\u202e", "\x85", "\u2028")


def forging_module(tmp_path: Path) -> Path:
    return write(tmp_path, "forge.mlir", RMS_TEXT.replace("@rms_norm(", f'@"{FORGING_TARGET}"('))


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def assert_nothing_unprintable(text: str) -> None:
    for character in UNPRINTABLE:
        assert character not in text, (character, text)


def test_check_prints_a_forging_target_escaped_on_one_line(tmp_path: Path) -> None:
    path = forging_module(tmp_path)
    result = run_cli("--check", path)
    assert result.returncode == 1, err(result)
    assert_nothing_unprintable(out(result) + err(result))
    line = RMS_TEXT[: RMS_TEXT.index(RMS_CALL)].count("\n") + 1
    [shown] = out(result).rstrip("\n").split("\n")  # one call: one line, nothing forged
    assert shown.startswith(f"{path}:{line}: @{FORGING_SHOWN}: would be rewritten as @x_")


def test_list_and_warnings_print_a_forging_target_escaped(tmp_path: Path) -> None:
    path = forging_module(tmp_path)
    result = run_cli("--list", path)
    assert result.returncode == 0, err(result)
    assert_nothing_unprintable(out(result) + err(result))
    [listed] = out(result).rstrip("\n").split("\n")
    assert f": @{FORGING_SHOWN}(tensor<10x10xf32>) -> (tensor<10x10xf32>)" in listed
    warnings = [line for line in stderr_lines(result) if ": warning: " in line]
    assert len(warnings) == 1 and f"'{FORGING_SHOWN}' becomes extern @x_" in warnings[0]


def test_a_diagnostic_escapes_its_source_line_and_keeps_the_caret_on_its_column(
    tmp_path: Path,
) -> None:
    """Raw control characters before the error's column become escapes of several
    characters each; the caret moves with them, under the character the error names."""
    config = 'mhlo.backend_config = {note = "\x1b[2J\u202e\x07\x85\u2028", eps = #foo<1>}'
    text = RMS_TEXT.replace("mhlo.backend_config = {eps = 9.99999974E-6 : f32}", config)
    path = write(tmp_path, "raw.mlir", text)
    result = run_cli(path)
    assert_nothing_unprintable(err(result))
    assert_diagnostic(result, path, text, {line_col(text, text.index("#foo<1>"))}, False)


def test_a_file_name_with_control_characters_is_printed_escaped(tmp_path: Path) -> None:
    path = tmp_path / "evil\x1b[2J\nname.mlir"
    result = run_cli(path)
    assert_clean_failure(result)
    assert (
        err(result)
        == f"{tmp_path}/evil\\1B[2J\\0Aname.mlir: error: cannot read: No such file or directory\n"
    )
