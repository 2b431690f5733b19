"""The hand-written scanners' terminals are the grammar's (``rewriter/syntax/terminals.py``).

Each terminal a scanner takes is read from the grammar file at import; here each is checked
against the terminal lark builds from the same file, and each narrower or reshaped form a
scanner writes by hand is checked against the terminal it stands for, over every string of
a small alphabet that holds the characters the patterns tell apart.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Iterator

import pytest

from rewriter.syntax import (
    blanks,
    compact,
    dimensions,
    empty_names,
    holes,
    scan,
    terminals,
    validation,
)
from rewriter.syntax.grammar import grammar_text, parser

# Importing the scanners above has them ask for every terminal they use.
SCANNERS = (blanks, compact, dimensions, empty_names, holes, scan, validation)
TAKEN = sorted(terminals.TAKEN)


def _strings(alphabet: str, longest: int) -> Iterator[str]:
    """Every string of ``alphabet`` of at most ``longest`` characters."""
    for length in range(longest + 1):
        for characters in itertools.product(alphabet, repeat=length):
            yield "".join(characters)


def _grammar(name: str) -> re.Pattern[str]:
    """Lark's own pattern of terminal ``name``, as its lexer compiles it."""
    pattern = parser().get_terminal(name).pattern
    return re.compile(pattern.to_regexp())


def _fullmatches(pattern: str | re.Pattern[str], text: str) -> bool:
    return re.fullmatch(pattern, text) is not None


def _letters(*names: str, extra: str = "") -> str:
    """The letters, digits and ``.+-`` the terminals' regexps write, and ``extra``: an
    alphabet that follows an edit of the grammar (``|inf`` brings ``i``, ``n``, ``f``)."""
    written = "".join(terminals.terminal(name) for name in names) + extra
    return "".join(sorted({c for c in written if c.isalnum() or c in ".+-"}))


def test_scanners_take_terminals() -> None:
    """The test below covers what the scanners use (a reader that read nothing would pass)."""
    expected = {"STRING", "COMMENT", "FLOAT", "INT", "DIMS", "VALUE_ID", "HASH_ID", "SYMBOL"}
    assert expected | {"_RESULT_GROUP"} <= set(TAKEN)


@pytest.mark.parametrize("name", [name for name in TAKEN if not name.startswith("_")])
def test_taken_terminal_is_larks(name: str) -> None:
    """The regexp read is the literal lark read, with no flags, and means what lark's does."""
    pattern = parser().get_terminal(name).pattern
    ours = terminals.terminal(name)
    assert pattern.raw == f"/{ours}/"
    assert not pattern.flags
    compiled, theirs = re.compile(ours), re.compile(pattern.to_regexp())
    characters = random.Random(name).choices('"\\\n/ %#@a0_$.-x?*+eE', k=20_000)
    for start in range(0, len(characters), 8):
        text = "".join(characters[start : start + 8])
        for at in range(len(text)):
            mine, lark = compiled.match(text, at), theirs.match(text, at)
            assert (mine and mine.group()) == (lark and lark.group()), text


def test_result_group_is_in_ls_results() -> None:
    """``_RESULT_GROUP`` has no terminal of its own in lark (an ``_`` terminal is inlined):
    it is LS_RESULTS's, twice (the first result and the others)."""
    ls_results = parser().get_terminal("LS_RESULTS").pattern.to_regexp()
    assert ls_results.count(terminals.terminal("_RESULT_GROUP")) == 2


def test_reader_reads_every_one_regexp_terminal() -> None:
    """Each terminal lark read from one ``/regexp/`` the reader reads as lark did."""
    read = terminals._definitions(grammar_text())
    for terminal in parser().terminals:
        raw = terminal.pattern.raw
        if raw and raw.startswith("/") and raw.endswith("/"):
            assert f"/{read[terminal.name]}/" == raw


def test_reader_follows_an_edit() -> None:
    """An edited terminal reaches the reader: nothing about FLOAT is written down here."""
    float_line = next(line for line in grammar_text().splitlines() if line.startswith("FLOAT:"))
    edited = grammar_text().replace(float_line, r"FLOAT: /[0-9]+\.[0-9]+|inf/")
    assert terminals._definitions(edited)["FLOAT"] == r"[0-9]+\.[0-9]+|inf"


def test_missing_terminal_is_loud() -> None:
    with pytest.raises(terminals.GrammarChanged):
        terminals.terminal("NO_SUCH_TERMINAL")
    with pytest.raises(terminals.GrammarChanged):
        terminals.after("INT", "%")


# The name forms: the name after a sigil, which with the sigil is the terminal.
NAME_ALPHABET = '%#@a0_$.-"x:'


@pytest.mark.parametrize(
    ("sigil", "name", "terminal"),
    [
        ("%", terminals.VALUE_NAME, "VALUE_ID"),
        ("#", terminals.ALIAS_NAME, "HASH_ID"),
        ("@", terminals.SYMBOL_NAME, "SYMBOL"),  # SYMBOL's unquoted form
    ],
)
def test_name_after_sigil(sigil: str, name: str, terminal: str) -> None:
    grammar = _grammar(terminal)
    for text in _strings(NAME_ALPHABET, 4):
        quoted = text[1:2] == '"'
        assert _fullmatches(f"{re.escape(sigil)}{name}", text) == (
            _fullmatches(grammar, text) and not quoted
        ), text


def test_squeeze_takes_strings_as_string() -> None:
    """compact._SQUEEZE: STRING with its quotes as groups, or COMMENT."""
    string, comment = _grammar("STRING"), _grammar("COMMENT")
    for text in _strings('"\\a\n/', 5):
        expected = _fullmatches(string, text) or _fullmatches(comment, text)
        assert _fullmatches(compact._SQUEEZE, text) == expected, text


def test_scan_value_names_are_value_ids_not_from_a_digit() -> None:
    """scan._VALUE: the SSA names a rewrite can make (none starts with a digit)."""
    grammar = _grammar("VALUE_ID")
    for text in _strings("%a0_$.-:", 5):
        expected = _fullmatches(grammar, text) and not text[1:2].isdigit()
        assert _fullmatches(scan._VALUE, text) == expected, text


def test_scan_symbols_are_symbols_in_compact_text() -> None:
    """scan._SYMBOL and _MODULE_HEADER's symbol: SYMBOL's, its string squeezed to ``""``."""
    grammar = _grammar("SYMBOL")
    for text in _strings('@a0_$.-"\\', 4):
        squeezed = text == '@""' or not text[1:2] == '"'
        expected = _fullmatches(grammar, text) and squeezed
        assert _fullmatches(scan._SYMBOL, text) == expected, text
        if text:
            header = scan._MODULE_HEADER.fullmatch(text)
            assert (header is not None) == expected, text


def test_statement_prefix_is_ls_results() -> None:
    """scan._STATEMENT_PREFIX takes, before an op, what LS_RESULTS takes (and blanks)."""
    grammar = _grammar("LS_RESULTS")
    for text in _strings("%a0:, ", 5):
        assert _fullmatches(scan._STATEMENT_PREFIX, text + "=") == _fullmatches(
            grammar, text + "="
        ), text


def test_splat_number_is_int_or_float() -> None:
    """blanks' point 4: the splat's number is of the INT or the FLOAT form."""
    int_, float_ = _grammar("INT"), _grammar("FLOAT")
    form = re.compile(blanks._SPLAT_NUMBER_FORM)
    for text in _strings(_letters("INT", "FLOAT", extra="01.e+-"), 5):
        expected = _fullmatches(int_, text) or _fullmatches(float_, text)
        assert _fullmatches(form, text) == expected, text


def test_narrower_numbers_and_dimensions() -> None:
    """Forms that take less than their terminal, never more: nine-digit integers (point 5
    of blanks) and blanks' runs of sizes (point 7)."""
    int_, dims = _grammar("INT"), _grammar("DIMS")
    for text in _strings("0-+.", 5):
        if _fullmatches(blanks.NINE_DIGITS, text):
            assert _fullmatches(int_, text), text
    assert _fullmatches(blanks.NINE_DIGITS, "123456789")
    assert not _fullmatches(blanks.NINE_DIGITS, "1234567890")
    for text in _strings("0x?*", 5):
        if _fullmatches(blanks._SIZES, text):
            assert _fullmatches(dims, text), text


def test_alias_names_from_a_letter() -> None:
    """blanks' point 3: alias definitions and uses, HASH_ID from a letter or ``_``."""
    grammar = _grammar("HASH_ID")
    alias = f"#{blanks._ALIAS_NAME_FROM_LETTER}"
    for text in _strings("#a0_$.-", 4):
        first = text[1:2]
        expected = _fullmatches(grammar, text) and (first.isalpha() or first == "_")
        assert _fullmatches(alias, text) == expected, text


def test_hole_booleans_are_bools() -> None:
    """blanks' ``bool``: the words BOOL takes; BOOL's look-ahead holds where the hole's does."""
    grammar = _grammar("BOOL")
    for text in _strings("truefals", 5):
        assert _fullmatches(blanks.HOLE_PATTERNS["bool"], text) == _fullmatches(grammar, text)


def test_holes_hold_no_context_character() -> None:
    """holes' soundness note: no hole holds its kinds' context characters (``%#@=``,
    blanks), nor a quote, backslash or line break."""
    for kind, pattern in blanks.HOLE_PATTERNS.items():
        for character in '%#@= \t"\\\n':
            for text in _strings("a0." + character, 3):
                if character in text:
                    assert not _fullmatches(pattern, text), (kind, text)


def test_a_hole_s_first_match_is_its_longest() -> None:
    """holes' atomic groups: each hole's pattern, where it matches, first takes the longest
    text it can take there, so a group that gives nothing back loses no statement."""
    for kind, pattern in blanks.HOLE_PATTERNS.items():
        compiled = re.compile(pattern)
        # numbers' characters and names': digits, signs, a dot, exponents, `_`, `$`, a letter
        alphabet = "0-+.eEa_$" if kind != "bool" else "truefals"
        for text in _strings(alphabet, 4):
            first = compiled.match(text)
            taken = [end for end in range(len(text) + 1) if compiled.fullmatch(text[:end])]
            assert (first.end() if first else None) == (max(taken) if taken else None), (
                kind,
                text,
            )
