"""The compact text: the fast string/comment finder agrees with the grammar's regex, and
every offset maps back to the same character of the original."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from jax_corpus import corpus

from rewriter.syntax import compact as compact_module
from rewriter.syntax.compact import _SQUEEZE, _spans_by_find, compact

pytestmark = pytest.mark.jax

ROOT = Path(__file__).resolve().parent.parent


def regex_spans(text: str) -> list[tuple[int, int]]:
    return [match.span() for match in _SQUEEZE.finditer(text)]


def texts() -> list[str]:
    found = [path.read_text() for path in sorted(ROOT.glob("samples/*/*.mlir"))]
    found += [path.read_text() for path in sorted(ROOT.glob("tests/filecheck/*.mlir"))]
    found += [text for _, text in corpus()]
    rng = random.Random(7)
    alphabet = 'ab"\\\n/ '  # quotes, escapes, newlines and comment slashes, densely mixed
    found += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(3000)]
    return found


def test_find_based_spans_agree_with_the_regex():
    for text in texts():
        assert _spans_by_find(text) == regex_spans(text), repr(text[:200])


@pytest.mark.parametrize("window", [1, 2, 3, 5])
def test_spans_agree_with_the_regex_whatever_the_comment_window(window, monkeypatch):
    """A search for ``//`` stops a window past the next quote: windows of a few characters
    put its stops everywhere in the random texts, a ``//`` straddling one included."""
    monkeypatch.setattr(compact_module, "_COMMENT_WINDOW", window)
    for text in texts():
        assert _spans_by_find(text) == regex_spans(text), repr(text[:200])


def test_lone_quotes_are_the_quotes_the_strings_do_not_hold():
    """The scan trusts ``lone_quotes`` instead of counting the compact text's quotes
    (``scan._check_characters``): both must say the same."""
    for text in texts():
        masked = compact(text).text
        counted = masked.count('"') != 2 * masked.count('""')
        assert compact(text).lone_quotes == counted, repr(text[:200])


def test_every_compact_offset_maps_back_to_the_same_character():
    for text in texts()[:200]:
        squeezed = compact(text)
        assert all(
            squeezed.text[i] == text[squeezed.original(i)] for i in range(len(squeezed.text))
        )


def test_offsets_map_back_in_one_walk_as_one_by_one():
    """``originals`` (ascending offsets, one walk) agrees with ``original`` per offset:
    before, inside (quotes included) and after every squeezed token."""
    for text in texts()[:400]:
        squeezed = compact(text)
        offsets = list(range(len(squeezed.text) + 1))
        assert squeezed.originals(offsets) == [squeezed.original(i) for i in offsets]
        assert squeezed.originals(offsets[::7]) == [squeezed.original(i) for i in offsets[::7]]
