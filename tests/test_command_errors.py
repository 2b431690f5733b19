"""Every command line (``python -m rewriter``, ``rewriter.compile``, ``rewriter.iree``) given
bad arguments or bad files: a message that says what is wrong, the documented status (1 for
a bad file, 2 for a usage error), nothing written, and never a Python traceback."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "rms_norm" / "rms_norm.mlir"
REWRITTEN = ROOT / "samples" / "rms_norm" / "rms_norm.rewritten.mlir"
BAD_OP = "module {\n  func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n" + (
    "    %0 = stablehlo.bogus %a : tensor<2xf32>\n    return %0 : tensor<2xf32>\n  }\n}\n"
)
PRIVATE_ONLY = "module {\n  func.func private @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n" + (
    "    return %a : tensor<2xf32>\n  }\n}\n"
)
SCALAR_ENTRY = "module {\n  func.func @main(%a: f32) -> f32 {\n    return %a : f32\n  }\n}\n"

COMMANDS = {
    "rewriter": [sys.executable, "-m", "rewriter"],
    "compile": [sys.executable, "-m", "rewriter.compile"],
    "iree": [sys.executable, "-m", "rewriter.iree"],
}


@dataclass
class Case:
    """A command line with ``{dir}`` (the test's folder), ``{in}`` (a copy of the input
    named by ``source``, or ``text`` written there) and ``{out}`` in its arguments."""

    command: str
    name: str
    arguments: list[str]
    status: int
    message: str  # a regular expression the stderr must match (after the paths are put in)
    text: str | bytes | None = None  # the input; None: a copy of ``source``
    source: Path = REWRITTEN
    marks: list = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.command}-{self.name}"


# MLIR's own parse error, at its line and column, with the source line and the caret
PARSE_ERROR = (
    r"in\.mlir:3:10: error: custom op 'stablehlo.bogus' is unknown\n"
    r"    %0 = stablehlo\.bogus .*\n         \^"
)
NO_SUCH_FILE = r"none\.mlir: error: cannot read: No such file"
NOT_UTF8 = r"in\.mlir: error: cannot read: not UTF-8 text"
IREE = [pytest.mark.iree]
TOOLS = [pytest.mark.toolchain, pytest.mark.iree]

CASES = [
    # the rewriter itself
    Case("rewriter", "missing", ["{dir}/none.mlir"], 1, NO_SUCH_FILE),
    Case("rewriter", "folder", ["{dir}"], 1, r": error: cannot read: Is a directory"),
    Case("rewriter", "not_utf8", ["{in}"], 1, r"in\.mlir:1:\d+: error: invalid UTF-8", b"\xff\xfe"),
    Case(
        "rewriter",
        "out_missing_folder",
        ["{in}", "-o", "{dir}/no/out.mlir"],
        1,
        r"out\.mlir: error: cannot write: the folder .*/no does not exist",
        source=SAMPLE,
    ),
    Case(
        "rewriter",
        "out_is_folder",
        ["{in}", "-o", "{dir}"],
        1,
        r": error: cannot write: it is a folder",
        source=SAMPLE,
    ),
    Case("rewriter", "out_is_input", ["{in}", "-o", "{in}"], 2, r"-o .* is the input file"),
    Case("rewriter", "unknown_option", ["--frobnicate", "{in}"], 2, r"unrecognized arguments"),
    Case(
        "rewriter",
        "json_without_list",
        ["--format", "json", "{in}"],
        2,
        r"--format json goes with --list",
    ),
    Case("rewriter", "bad_abi", ["--abi", "cuda", "{in}"], 2, r"invalid choice: 'cuda'"),
    # rewriter.compile
    Case("compile", "missing", ["{dir}/none.mlir", "-o", "{out}"], 1, NO_SUCH_FILE),
    Case("compile", "folder", ["{dir}", "-o", "{out}"], 1, r": error: cannot read: Is a directory"),
    Case("compile", "not_utf8", ["{in}", "-o", "{out}"], 1, NOT_UTF8, b"\xff\xfe"),
    Case("compile", "no_output", ["{in}"], 2, r"the following arguments are required: -o"),
    Case(
        "compile",
        "out_is_input",
        ["{in}", "-o", "{in}"],
        2,
        r"-o .*in\.mlir is the input file .*in\.mlir; nothing was written",
    ),
    Case(
        "compile",
        "out_is_link",
        ["{in}", "-o", "{dir}/libk.so", "--link", "{dir}/libk.so"],
        2,
        r"-o .*libk\.so is the --link library",
    ),
    Case(
        "compile",
        "out_missing_folder",
        ["{in}", "-o", "{dir}/no/lib.so"],
        1,
        r"lib\.so: error: cannot write: the folder .*/no does not exist",
    ),
    Case(
        "compile",
        "out_is_folder",
        ["{in}", "-o", "{dir}"],
        1,
        r": error: cannot write: it is a folder",
    ),
    Case(
        "compile",
        "link_missing_path",
        ["{in}", "-o", "{out}", "--link", "./none/libk.so"],
        1,
        r"in\.mlir: error: --link \./none/libk\.so: no such file",
    ),
    Case(
        "compile",
        "link_empty",
        ["{in}", "-o", "{out}", "--link="],
        1,
        r"--link '' names no library",
    ),
    Case(
        "compile",
        "keep_temps_is_a_file",
        ["{in}", "-o", "{out}", "--keep-temps", "{in}"],
        1,
        r"cannot keep the stages in .*in\.mlir: File exists",
        marks=TOOLS,
    ),
    Case("compile", "parse_error", ["{in}", "-o", "{out}"], 1, PARSE_ERROR, BAD_OP, marks=TOOLS),
    Case(
        "compile",
        "empty",
        ["{in}", "-o", "{out}"],
        1,
        r"in\.mlir:1:1: error: no public function: the library would have no entry points",
        "",
        marks=TOOLS,
    ),
    Case(
        "compile",
        "private_only",
        ["{in}", "-o", "{out}"],
        1,
        r"in\.mlir:1:1: error: no public function",
        PRIVATE_ONLY,
        marks=TOOLS,
    ),
    Case(
        "compile",
        "scalar_entry",
        ["{in}", "-o", "{out}"],
        1,
        r"in\.mlir: error: entry points take and return ranked tensors, not f32",
        SCALAR_ENTRY,
        marks=TOOLS,
    ),
    Case(
        "compile",
        "blas_missing",
        ["{in}", "-o", "{out}", "--blas", "{dir}/none.so"],
        1,
        r"in\.mlir: error: BLAS library .*none\.so does not exist",
        marks=TOOLS,
    ),
    # rewriter.iree
    Case("iree", "missing", ["{dir}/none.mlir", "-o", "{out}"], 1, NO_SUCH_FILE),
    Case("iree", "folder", ["{dir}", "-o", "{out}"], 1, r": error: cannot read: Is a directory"),
    Case("iree", "not_utf8", ["{in}", "-o", "{out}"], 1, NOT_UTF8, b"\xff\xfe"),
    Case("iree", "no_output", ["{in}"], 2, r"the following arguments are required: -o"),
    Case("iree", "out_is_input", ["{in}", "-o", "{in}"], 2, r"-o .*in\.mlir is the input file"),
    Case(
        "iree",
        "out_missing_folder",
        ["{in}", "-o", "{dir}/no/m.vmfb"],
        1,
        r"m\.vmfb: error: cannot write: the folder .*/no does not exist",
    ),
    Case("iree", "parse_error", ["{in}", "-o", "{out}"], 1, PARSE_ERROR, BAD_OP, marks=IREE),
    Case(
        "iree",
        "empty",
        ["{in}", "-o", "{out}"],
        1,
        r"in\.mlir:1:1: error: no public function: the module would have no entry points",
        "",
        marks=IREE,
    ),
]


@pytest.mark.parametrize(
    "case", [pytest.param(case, id=case.id, marks=case.marks) for case in CASES]
)
def test_a_bad_argument_or_file_is_a_message_never_a_traceback(tmp_path: Path, case: Case):
    given = tmp_path / "in.mlir"
    if case.text is None:
        given.write_bytes(case.source.read_bytes())
    elif isinstance(case.text, bytes):
        given.write_bytes(case.text)
    else:
        given.write_text(case.text)
    before = sorted(os.listdir(tmp_path))
    places = {"{dir}": str(tmp_path), "{in}": str(given), "{out}": str(tmp_path / "out")}
    arguments = [_placed(argument, places) for argument in case.arguments]
    run = subprocess.run(
        [*COMMANDS[case.command], *arguments], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == case.status, run.stderr
    assert "Traceback" not in run.stderr, run.stderr
    assert re.search(case.message, run.stderr), run.stderr
    assert sorted(os.listdir(tmp_path)) == before  # nothing written, nothing left


def _placed(argument: str, places: dict[str, str]) -> str:
    for key, value in places.items():
        argument = argument.replace(key, value)
    return argument


@pytest.mark.parametrize("command", ["compile", "iree"])
@pytest.mark.parametrize("link", ["symlink", "hard link"])
def test_an_output_that_is_the_input_through_a_link_is_refused(tmp_path: Path, command, link):
    given = tmp_path / "in.mlir"
    given.write_bytes(REWRITTEN.read_bytes())
    other = tmp_path / "other.mlir"
    (other.symlink_to if link == "symlink" else other.hardlink_to)(given)
    run = subprocess.run(
        [*COMMANDS[command], str(given), "-o", str(other)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2, run.stderr
    assert f"-o {other} is the input file {given}; nothing was written" in run.stderr
    assert given.read_bytes() == REWRITTEN.read_bytes()
