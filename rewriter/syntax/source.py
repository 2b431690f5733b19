"""Input text with positions: offsets into the text, turned into line and column on demand."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field


@dataclass
class Source:
    """A decoded input file. Offsets everywhere in the package index into ``text``."""

    text: str
    filename: str = "<string>"
    _line_starts: list[int] | None = field(default=None, repr=False)

    def line_starts(self) -> list[int]:
        if self._line_starts is None:
            starts = [0]
            find = self.text.find
            position = find("\n")
            while position != -1:
                starts.append(position + 1)
                position = find("\n", position + 1)
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
