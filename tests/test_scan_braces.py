"""Brackets in the scan: ``_match_close`` (the `}` that closes a `{`, found with
``str.find`` steps) is the one a stack of braces gives, on any text whose braces nest (as the
scan has checked by then); ``_pairs_vanish`` says what a stack of brackets says."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rewriter.syntax.scan as scan_module
from rewriter.syntax.scan import Scan, _check_top_level, _match_close, _pairs_vanish
from rewriter.syntax.source import Source


def _closes_by_stack(text: str) -> dict[int, int]:
    opened: list[int] = []
    closes = {}
    for offset, char in enumerate(text):
        if char == "{":
            opened.append(offset)
        elif char == "}":
            closes[opened.pop()] = offset
    return closes


@st.composite
def nested_braces(draw, depth: int = 0) -> str:
    """Text with properly nested braces, other characters and newlines between them."""
    parts = []
    for _ in range(draw(st.integers(0, 4 if depth < 4 else 0))):
        parts.append(draw(st.text(alphabet="a =,\n[]()", max_size=5)))
        parts.append("{" + draw(nested_braces(depth + 1)) + "}")
    parts.append(draw(st.text(alphabet="a =,\n", max_size=5)))
    return "".join(parts)


@settings(max_examples=300, deadline=None)
@given(nested_braces())
def test_the_close_of_every_brace_is_the_one_a_stack_gives(text):
    expected = _closes_by_stack(text)
    remembered: dict[int, int] = {}
    for open_offset, close in expected.items():
        assert _match_close(text, open_offset) == close
        assert _match_close(text, open_offset, remembered) == close
        assert remembered[open_offset] == close


@settings(max_examples=300, deadline=None)
@given(nested_braces(), st.integers(0, 3))
def test_top_level_groups_close_where_a_stack_says(text, groups):
    """The top-level check finds each top-level group's close, the first group that holds
    another by the file's last `}` when that is its close (an export's module body). The
    text is repeated, so that the last `}` is sometimes another group's."""
    text = text * groups + "{" + text + "}" + text * (groups // 2)
    result = Scan()
    braces = bytes(char for char in text.encode() if char in b"{}")
    _check_top_level(Source(text), text, result, braces)
    expected = _closes_by_stack(text)
    assert result.closes, "every text here has a top-level group"
    for open_offset, close in result.closes.items():
        assert close == expected[open_offset]


def _nest_by_stack(text: str) -> bool:
    partner = {")": "(", "]": "[", "}": "{"}
    opened: list[str] = []
    for char in text:
        if char in "([{":
            opened.append(char)
        elif char in partner:
            if not opened or opened.pop() != partner[char]:
                return False
    return not opened


@settings(max_examples=500, deadline=None)
@given(st.one_of(nested_braces(), st.text(alphabet="()[]{}a \n", max_size=40)))
def test_brackets_nest_as_a_stack_says(text):
    """``_pairs_vanish`` deletes adjacent pairs until none is left (or none goes); a
    stack of brackets is the reference. Nested text has only braces: other brackets are
    put around parts of it too."""
    assert _pairs_vanish(_brackets(text)) == _nest_by_stack(text)
    wrapped = "(" + text + ")[" + text + "]"
    assert _pairs_vanish(_brackets(wrapped)) == _nest_by_stack(wrapped)


def _brackets(text: str) -> bytes:
    """The skeleton the scan hands ``_pairs_vanish``: the brackets alone, in order."""
    return bytes(char for char in text.encode() if char in b"()[]{}")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "module",
        "module @m {\n}\n",
        "modulemodule module.x module-y module$ module_ module\nmodule{} %module = x",
        '"builtin.module"() ({\n}) : () -> ()\nmodule attributes {} {\n  module @inner {}\n}',
        "submodule module2 amodule module",
    ],
)
def test_module_keywords_are_the_module_pattern_s_matches(text):
    """``_module_keywords`` finds the word with ``str.find``; its matches are the regular
    expression's own, with every overlap and look-ahead case."""
    expected = [match.span() for match in scan_module._MODULE.finditer(text)]
    assert [match.span() for match in scan_module._module_keywords(text)] == expected


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["module", "modul", "e", " ", ".", "-", "$", "_", "\n", "x"])))
def test_module_keywords_agree_with_the_pattern_on_any_text(pieces):
    text = "".join(pieces)
    expected = [match.span() for match in scan_module._MODULE.finditer(text)]
    assert [match.span() for match in scan_module._module_keywords(text)] == expected
