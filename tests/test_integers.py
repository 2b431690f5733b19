"""Integer literals out of range for their type: the rule agrees with jaxlib's MLIR parser
for every width and edge, and the rewrite and ``--validate`` report them at the literal."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir

import rewriter
from rewriter.syntax.integers import (
    digits_always_taken,
    negative_digits_always_taken,
    range_error,
)

ROOT = Path(__file__).resolve().parent.parent
RMS = (ROOT / "samples" / "rms_norm" / "rms_norm.mlir").read_text()

TYPES = [
    *(f"i{n}" for n in (1, 2, 7, 8, 16, 32, 64, 128)),
    *(f"si{n}" for n in (1, 8, 16, 32, 64)),
    *(f"ui{n}" for n in (1, 8, 16, 32, 64)),
]


def edges(type_: str) -> list[str]:
    """Literals at and around every bound of the type, decimal and hexadecimal."""
    width = int(type_.lstrip("sui"))
    numbers = {0, 1, 2, 1 << width, (1 << width) - 1, (1 << width) + 1}
    numbers |= {(1 << (width - 1)) + d for d in (-1, 0, 1)}
    literals = {str(n) for n in numbers} | {f"-{n}" for n in numbers}
    literals |= {hex(n) for n in numbers} | {"-0", "007"}
    return sorted(literals)


def jaxlib_accepts(literal: str, type_: str, context) -> bool:
    try:
        ir.Module.parse(f"module attributes {{x.a = {literal} : {type_}}} {{}}", context=context)
    except Exception as error:  # MLIRError: the diagnostic is checked below
        assert "integer" in str(error), error
        return False
    return True


def test_the_rule_takes_exactly_what_jaxlib_takes():
    context = mlir.make_ir_context()
    checked = 0
    for type_ in TYPES:
        for literal in edges(type_):
            assert (range_error(literal, type_) is None) == jaxlib_accepts(
                literal, type_, context
            ), (literal, type_, range_error(literal, type_))
            checked += 1
    assert checked > 300
    assert range_error("300", "f32") is None and range_error("1.5", "i8") is None


def with_config(entry: str) -> str:
    """The rms_norm sample with ``entry`` added to its backend_config."""
    return RMS.replace("mhlo.backend_config = {eps", f"mhlo.backend_config = {{{entry}, eps", 1)


def position(text: str, offset: int) -> tuple[int, int]:
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


@pytest.mark.parametrize(
    ("entry", "literal", "message"),
    [
        ("a = 300 : i8", "300", "integer constant 300 out of range for i8 (-128 to 255)"),
        (
            "a = -1 : ui8",
            "-1",
            "negative integer literal -1 not valid for unsigned integer type ui8",
        ),
        ("a = 2 : i1", "2", "integer constant 2 out of range for i1 (-1 to 1)"),
        ("a = -32769 : i16", "-32769", "out of range for i16 (-32768 to 65535)"),
        ("a = 4294967296 : i32", "4294967296", "out of range for i32"),
        ("a = 18446744073709551616 : i64", "18446744073709551616", "out of range for i64"),
        ("a = 18446744073709551616 : ui64", "18446744073709551616", "out of range for ui64"),
        ("a = 128 : si8", "128", "integer constant 128 out of range for si8 (-128 to 127)"),
        ("a = 18446744073709551616", "18446744073709551616", "out of range for i64"),
        ("a = array<i8: 1, 256>", "256", "integer constant 256 out of range for i8"),
    ],
)
def test_out_of_range_attribute_is_an_error_at_its_literal(entry, literal, message):
    text = with_config(entry)
    where = position(text, text.index(entry) + entry.index(literal))
    with pytest.raises(rewriter.RewriteError) as rewritten:
        rewriter.rewrite(text, filename="m.mlir")
    error = rewritten.value.diagnostics[0]
    assert (error.line, error.column) == where
    assert message in error.message
    with pytest.raises(rewriter.RewriteError) as validated:
        rewriter.validate(text, filename="m.mlir")
    error = validated.value.diagnostics[0]
    assert (error.line, error.column) == where
    assert message in error.message


@pytest.mark.parametrize(
    "entry",
    [
        "a = 255 : i8",
        "a = -128 : i8",
        "a = 255 : ui8",
        "a = 0xFF : i8",
        "a = -1 : i1",
        "a = 18446744073709551615 : ui64",
        "a = array<ui8: 0, 255>",
        "a = 9223372036854775808",
    ],
)
def test_what_jaxlib_takes_is_rewritten_and_validates(entry):
    text = with_config(entry)
    rewriter.validate(text)
    result = rewriter.rewrite(text)
    from mlir_tools import jaxlib_verify

    jaxlib_verify(result.text)


def test_validate_on_the_command_line_reports_the_literal(tmp_path: Path):
    path = tmp_path / "m.mlir"
    text = with_config("a = 300 : i8")
    path.write_text(text)
    line, column = position(text, text.index("300 : i8"))
    run = subprocess.run(
        [sys.executable, "-m", "rewriter", "--validate", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.startswith(
        f"{path}:{line}:{column}: error: integer constant 300 out of range for i8 (-128 to 255)"
    )


@pytest.mark.parametrize(
    "type_", ["i1", "i2", "i4", "i8", "si8", "ui8", "i10", "si16", "i32", "ui64"]
)
def test_digits_always_taken_is_a_bound_the_rule_agrees_with(type_):
    """The quick yes of call shapes: every literal of at most that many digits is taken,
    and one more digit is not always taken (so the bound is the tightest)."""
    digits = digits_always_taken(type_)
    if digits:
        assert range_error("9" * digits, type_) is None
        assert range_error("0" * digits, type_) is None
    assert range_error("9" * (digits + 1), type_) is not None


@pytest.mark.parametrize(
    "type_", ["i1", "i2", "i4", "i8", "si8", "ui8", "i10", "si16", "i32", "si64", "ui64"]
)
def test_negative_digits_always_taken_is_a_bound_the_rule_agrees_with(type_):
    """The quick yes for negative literals: every one of at most that many digits after the
    minus sign, the first not 0, is taken; one more digit is not always taken; an unsigned
    type takes none."""
    digits = negative_digits_always_taken(type_)
    if digits:
        assert range_error("-" + "9" * digits, type_) is None
        assert range_error("-1" + "0" * (digits - 1), type_) is None
        assert range_error("-1", type_) is None
    assert range_error("-" + "9" * (digits + 1), type_) is not None
    if type_.startswith("u"):
        assert digits == 0 and range_error("-1", type_) is not None
