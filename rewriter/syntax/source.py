"""Input text with positions: offsets into the text, turned into line and column on demand."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from itertools import accumulate, count
from operator import add

_CHUNK = 1 << 20  # characters split at a time


@dataclass
class Source:
    """A decoded input file. Offsets everywhere in the package index into ``text``."""

    text: str
    filename: str = "<string>"
    _line_starts: list[int] | None = field(default=None, repr=False)

    def line_starts(self) -> list[int]:
        """The offset of each line's first character. A megabyte of text at a time is split
        at its line breaks, and the starts are sums of the lines' lengths: C-speed steps
        (a search per line costs a Python step per line), in bounded memory."""
        if self._line_starts is None:
            starts = [0]
            text = self.text
            for first in range(0, len(text), _CHUNK):
                lines = text[first : first + _CHUNK].split("\n")
                del lines[-1]  # not ended in this chunk
                # line k + 1 starts after lines 0..k and their k + 1 line breaks
                starts.extend(map(add, accumulate(map(len, lines)), count(first + 1)))
            self._line_starts = starts
        return self._line_starts

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column (in characters) of ``offset``."""
        starts = self.line_starts()
        line = bisect.bisect_right(starts, offset) - 1
        return line + 1, offset - starts[line] + 1

    def line_text(self, line: int) -> str:
        """The text of 1-based ``line``, without its line break."""
        starts = self.line_starts()
        begin = starts[line - 1]
        end = starts[line] - 1 if line < len(starts) else len(self.text)
        return self.text[begin:end].rstrip("\r")

    def line_start(self, offset: int) -> int:
        """Offset of the first character of the line holding ``offset``."""
        return self.text.rfind("\n", 0, offset) + 1


class LineCounter:
    """Line and column of offsets asked for in ascending order, as ``Source.line_col``
    gives them: the lines between one offset's line start and the next are counted at C
    speed (``str.count``), with no table of every line start (the planner asks for each
    call's, in file order). An offset before the last one asked is looked up instead."""

    def __init__(self, source: Source):
        self.source = source
        self.line_start = 0  # the start of the line last asked for, and its number
        self.line = 1

    def line_col(self, offset: int, line_start: int) -> tuple[int, int]:
        """1-based line and column of ``offset``, whose line starts at ``line_start``."""
        if line_start < self.line_start:
            return self.source.line_col(offset)
        self.line += self.source.text.count("\n", self.line_start, line_start)
        self.line_start = line_start
        return self.line, offset - line_start + 1
