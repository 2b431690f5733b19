"""``printable``: what every text printer does to input text before a terminal sees it."""

from __future__ import annotations

import os

import pytest

from rewriter.syntax.diagnostics import Diagnostic
from rewriter.syntax.printable import printable, printable_lines

# Each class of character that can drive a terminal or forge a line, as MLIR escapes it.
ESCAPED = [
    ("\x1b", r"\1B"),  # ESC: starts colour and cursor sequences
    ("\r", r"\0D"),  # carriage return: overwrites the line shown
    ("\n", r"\0A"),  # line feed: forges a line of output
    ("\x07", r"\07"),  # BEL
    ("\x00", r"\00"),
    ("\t", r"\09"),
    ("\x7f", r"\7F"),  # DEL
    ("\x85", r"\C2\85"),  # NEL, a C1 control
    ("\x9b", r"\C2\9B"),  # CSI, the C1 form of ESC [
    ("\u2028", r"\E2\80\A8"),  # line separator
    ("\u2029", r"\E2\80\A9"),  # paragraph separator
    ("\u202e", r"\E2\80\AE"),  # right-to-left override
    ("\u2066", r"\E2\81\A6"),  # left-to-right isolate
    ("\u200b", r"\E2\80\8B"),  # zero-width space
    ("\ufeff", r"\EF\BB\BF"),  # byte order mark
    ("\u00a0", r"\C2\A0"),  # no-break space: looks like a space, is not one
    ("\udcff", r"\FF"),  # a file name's byte that is not UTF-8 (surrogate escape)
    ("\ud800", r"\ED\A0\80"),  # a lone surrogate
]


@pytest.mark.parametrize(("character", "shown"), ESCAPED, ids=[hex(ord(c)) for c, _ in ESCAPED])
def test_unprintable_characters_are_shown_as_mlir_escapes(character: str, shown: str) -> None:
    assert printable(f"a{character}b") == f"a{shown}b"


@pytest.mark.parametrize("text", ["rms_norm", "x y", "é 日本 Ω", '@"x\\1B"', "", "~!<>"])
def test_printable_text_is_returned_as_it_is(text: str) -> None:
    assert printable(text) is text


def test_printable_lines_keeps_line_breaks_and_escapes_the_rest() -> None:
    assert printable_lines("one\x1b[2J\ntwo\r\n") == "one\\1B[2J\ntwo\\0D\n"


def test_a_name_from_the_file_system_shows_its_own_bytes() -> None:
    name = os.fsdecode(b"model\xff\x1b.mlir")
    assert printable(name) == r"model\FF\1B.mlir"


def test_diagnostic_format_escapes_file_name_message_and_source_line() -> None:
    diagnostic = Diagnostic("a\nb.mlir", 1, 5, "bad \x1b[31m", '"\u202e" x')
    head, shown, caret = diagnostic.format().split("\n")
    assert head == r"a\0Ab.mlir:1:5: error: bad \1B[31m"
    assert shown == r'"\E2\80\AE" x'
    assert caret == " " * (shown.index("x")) + "^"


def test_a_long_line_is_cut_around_the_caret_and_escaped() -> None:
    line = "\x1b" * 200 + "X" + "y" * 200
    diagnostic = Diagnostic("f.mlir", 1, 201, "here", line)
    _, shown, caret = diagnostic.format().split("\n")
    assert shown.startswith("...\\1B") and shown.endswith("y...")
    assert shown[caret.index("^")] == "X"
