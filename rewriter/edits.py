"""Edits as data: a span of the original text and its replacement, applied in one pass.

An insertion is an empty span; a deletion has empty text. Everything outside the spans
is copied unchanged, which is what keeps a rewrite lossless.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, order=True, slots=True)
class Edit:
    start: int
    end: int
    text: str

    @classmethod
    def insert(cls, offset: int, text: str) -> Edit:
        return cls(offset, offset, text)


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits; insertions at one offset keep their given order."""
    ordered = sorted(enumerate(edits), key=lambda item: (item[1].start, item[1].end, item[0]))
    pieces: list[str] = []
    position = 0
    for _, edit in ordered:
        if edit.start < position or edit.end < edit.start:
            raise ValueError(f"overlapping or inverted edit at offset {edit.start}")
        pieces.append(text[position : edit.start])
        pieces.append(edit.text)
        position = edit.end
    pieces.append(text[position:])
    return "".join(pieces)
