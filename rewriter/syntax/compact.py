"""The text with strings and comments squeezed out, and the way back to original offsets.

Exports carry megabytes of string payloads (``dense<"0x...">`` weights, serialized
kernels) that structure scans never need to look into. Each string literal becomes ``""``
and each comment disappears, so the scans run over a text whose size follows the number
of ops, not the bytes of constants. Lines stay lines (neither strings nor comments hold a
newline), and ``original`` maps any offset of the compact text back.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from itertools import accumulate

from .terminals import COMMENT, GrammarChanged, terminal


@dataclass
class Compact:
    text: str
    # For every squeezed token: where it starts in the compact and the original text,
    # its length there, and its length here (2 for a string, 0 for a comment).
    _compact_starts: list[int] = field(default_factory=list)
    _original_starts: list[int] = field(default_factory=list)
    _original_lengths: list[int] = field(default_factory=list)
    _compact_lengths: list[int] = field(default_factory=list)
    strings: list[tuple[int, int, str]] = field(default_factory=list)  # noted literals
    # Whether a quote opens no string (none closes it on its line): the only quotes of
    # the text but the squeezed strings' (comments are taken out).
    lone_quotes: bool = False

    def original(self, offset: int) -> int:
        """The offset in the original text of ``offset`` in the compact text."""
        index = bisect.bisect_right(self._compact_starts, offset) - 1
        if index < 0:
            return offset
        start = self._compact_starts[index]
        inside = offset - start
        length = self._compact_lengths[index]
        if inside < length:  # within a squeezed string: its quotes map to its quotes
            if inside == 0:
                return self._original_starts[index]
            return self._original_starts[index] + self._original_lengths[index] - (length - inside)
        end = self._original_starts[index] + self._original_lengths[index]
        return end + (inside - length)

    def originals(self, offsets: list[int]) -> list[int]:
        """``original`` of each of ``offsets``, which ascend: one walk along the squeezed
        tokens for all of them (a scan maps an offset per custom call)."""
        starts = self._compact_starts
        mapped: list[int] = []
        index = -1  # the last squeezed token at or before the offset
        shift = 0  # what the tokens up to it took out
        for offset in offsets:
            while index + 1 < len(starts) and starts[index + 1] <= offset:
                index += 1
                shift = self._original_starts[index] + self._original_lengths[index]
                shift -= starts[index] + self._compact_lengths[index]
            if index >= 0 and offset - starts[index] < self._compact_lengths[index]:
                mapped.append(self.original(offset))  # inside a squeezed string
            else:
                mapped.append(offset + shift)
        return mapped


# Group 1 and 2 are a string's quotes: substituting r"\1\2" squeezes a string to `""` and
# a comment (no groups) to nothing, at C speed: STRING's quotes, made groups.
_STRING = terminal("STRING")
if not (_STRING.startswith('"') and _STRING.endswith('"')):
    raise GrammarChanged(f"the grammar's STRING no longer starts and ends with a quote: {_STRING}")
_SQUEEZE = re.compile('(")' + _STRING[1:-1] + f'(")|{COMMENT}')
_SYM_NAME = 'sym_name = "'
# How far past the next quote one search for "//" may look (_spans_by_find).
_COMMENT_WINDOW = 1 << 16


def _spans_by_find(text: str, lone: list[int] | None = None) -> list[tuple[int, int]]:
    """Spans of string literals and comments, as ``_SQUEEZE`` would match them (the tests
    check both agree); ``str.find`` skips a megabyte payload at memchr speed, where a
    regular expression checks each character. The next quote and the next ``//`` are
    each searched for once and kept until passed, and each stretch of text is searched
    once, so the scan stays linear. A ``//`` is looked for up to the next quote, or a
    window past it, not to the end: a two-character needle is found at a tenth of
    memchr's speed, and a search through a 25 MB constant's hex took longer than the rest
    of its rewrite. The end of a line is searched for once for all its strings (a function
    of 16,000 arguments has 16,000 on one line). Every quote outside strings and comments
    opens no string: each is added to ``lone``."""
    spans: list[tuple[int, int]] = []
    end = len(text)
    position = 0
    quote = comment = -2  # not searched yet
    clear = 0  # with comment -1, no "//" starts between the last search's start and here
    newline = -1  # the end of the line of the last string searched (kept: a line of many)
    while True:
        if quote != -1 and quote < position:
            quote = text.find('"', position)
        if comment < position and not (comment == -1 and quote != -1 and quote < clear):
            start = max(position, clear - 1)  # a "//" may straddle the last stop
            stop = end if quote == -1 else max(quote, start + _COMMENT_WINDOW)
            comment = text.find("//", start, stop)
            clear = stop if comment == -1 else comment
        if comment >= position and (quote == -1 or comment < quote):
            line_end = text.find("\n", comment)
            line_end = end if line_end == -1 else line_end
            spans.append((comment, line_end))
            position = line_end
            continue
        if quote == -1:
            return spans
        search = quote + 1
        if newline < search:  # a string never spans lines
            newline = text.find("\n", search)
            newline = end if newline == -1 else newline
        line_end = newline
        while True:
            close = text.find('"', search, line_end)
            if close == -1:
                position = quote + 1  # unterminated: not a string, as for the regex
                if lone is not None:
                    lone.append(quote)
                break
            backslashes = 0
            while text[close - 1 - backslashes] == "\\":
                backslashes += 1
            if backslashes % 2:  # an escaped quote: the string goes on
                search = close + 1
                continue
            spans.append((quote, close + 1))
            position = close + 1
            break


def compact(text: str, noted: frozenset[str] = frozenset()) -> Compact:
    """Squeeze strings and comments; string literals in ``noted`` are remembered as
    (compact offset, original offset, literal), and so are strings right after
    ``sym_name = `` (generic-form symbol definitions)."""
    lone: list[int] = []
    spans = _spans_by_find(text, lone)
    starts = [start for start, _ in spans]
    lengths = [end - start for start, end in spans]
    kept = [2 if text[start] == '"' else 0 for start in starts]
    pieces = []
    position = 0
    for (start, end), keep in zip(spans, kept, strict=True):
        pieces.append(text[position:start])
        pieces.append('""' if keep else "")
        position = end
    pieces.append(text[position:])
    result = Compact("".join(pieces))
    result.lone_quotes = bool(lone)
    removed = list(accumulate((n - k for n, k in zip(lengths, kept, strict=True)), initial=0))
    result._original_starts = starts
    result._original_lengths = lengths
    result._compact_lengths = kept
    result._compact_starts = [start - gone for start, gone in zip(starts, removed, strict=False)]

    # Remember the noted literals and `sym_name = "..."` strings: a check per string span,
    # not a search through the whole text (which may be mostly weights).
    noted_lengths = {len(literal) for literal in noted}
    for index, (start, length) in enumerate(zip(starts, lengths, strict=True)):
        if not kept[index]:
            continue
        if length in noted_lengths and text[start : start + length] in noted:
            result.strings.append(
                (result._compact_starts[index], start, text[start : start + length])
            )
        elif text.endswith(_SYM_NAME[:-1], 0, start):
            result.strings.append(
                (result._compact_starts[index], start, text[start : start + length])
            )
    result.strings.sort()
    return result
