"""Edits as data: a span of the original text and its replacement, applied in one pass.

An insertion is an empty span; a deletion has empty text. Everything outside the spans
is copied unchanged, which is what keeps a rewrite lossless.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import itemgetter
from typing import NamedTuple


class Edit(NamedTuple):
    """Replace ``start:end`` of the original text by ``text``. A named tuple: immutable and
    ordered like a frozen dataclass, and made in half its time (one per call)."""

    start: int
    end: int
    text: str

    @classmethod
    def insert(cls, offset: int, text: str) -> Edit:
        return cls(offset, offset, text)


_KEPT = 64  # distinct pieces between edits kept for reuse
_LONGEST_KEPT = 4096  # characters: a longer piece is not looked up (hashing it reads it all)


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits; insertions at one offset keep their given order.

    The join holds the output beside every piece it is made of: the edits' texts, and the
    original text between edits. In a call-dense export that text is the same between
    most calls (`` loc(#loc7)`` and the next line's indentation), so equal pieces are kept
    once (``kept``, up to ``_KEPT`` of them: a file whose pieces all differ gains nothing
    from more): a slice is made, looked up, and dropped when an equal one is kept already
    (about 3 MB of a 64,000-call export's peak). A piece of more than ``_LONGEST_KEPT``
    characters is not looked up: hashing it reads it all (6 of the 40 ms of a rewrite of
    25 MB of constants), and such pieces do not repeat. Which string object holds a piece
    does not change what the join writes."""
    # The sort is stable: insertions at one offset keep their order.
    ordered = sorted(edits, key=itemgetter(0, 1))
    pieces: list[str] = []
    kept: dict[str, str] = {}
    position = 0
    for start, end, replacement in ordered:  # unpacked: a named tuple's field is a lookup
        if start < position or end < start:
            raise ValueError(f"overlapping or inverted edit at offset {start}")
        between = text[position:start]
        if len(between) <= _LONGEST_KEPT:
            if len(kept) < _KEPT:
                between = kept.setdefault(between, between)
            else:
                between = kept.get(between, between)
        pieces.append(between)
        pieces.append(replacement)
        position = end
    pieces.append(text[position:])
    return "".join(pieces)
