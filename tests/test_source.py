"""Line starts of a source (rewriter/syntax/source.py): found a chunk of text at a time, they
are where a search for each line break puts them, whatever the chunk size."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rewriter.syntax import source
from rewriter.syntax.source import LineCounter, Source


def starts_by_search(text: str) -> list[int]:
    starts = [0]
    position = text.find("\n")
    while position != -1:
        starts.append(position + 1)
        position = text.find("\n", position + 1)
    return starts


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab\n\r", max_size=60), st.sampled_from([1, 2, 3, 7, 1 << 20]))
def test_line_starts_are_where_line_breaks_end(text, chunk):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(source, "_CHUNK", chunk)
        assert Source(text).line_starts() == starts_by_search(text)


def test_line_and_column_count_from_one():
    text = "ab\n\ncd\r\nef"
    lines = Source(text)
    assert [lines.line_col(offset) for offset in (0, 1, 2, 3, 4, 6, 7, 8, 9)] == [
        (1, 1),
        (1, 2),
        (1, 3),
        (2, 1),
        (3, 1),
        (3, 3),
        (3, 4),
        (4, 1),
        (4, 2),
    ]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab\n\r", min_size=1, max_size=60), st.data())
def test_a_line_counter_gives_what_line_col_gives(text, data):
    """Offsets mostly ascending, sometimes not (looked up then), each with its line start."""
    lines = Source(text)
    counter = LineCounter(lines)
    offsets = data.draw(st.lists(st.integers(0, len(text) - 1), max_size=20))
    ascending = sorted(offsets) + offsets
    for offset in ascending:
        line_start = text.rfind("\n", 0, offset) + 1
        assert counter.line_col(offset, line_start) == lines.line_col(offset)
