"""Splitting type texts such as ``(tensor<2xf32>, tuple<i32, f32>) -> tensor<f32>`` at the
top level: commas and arrows inside ``<>``, ``()``, ``[]`` and ``{}`` do not count."""

from __future__ import annotations

from collections.abc import Iterator


def _top_level(text: str) -> Iterator[tuple[int, str]]:
    """(index, character) of every character of ``text`` that is outside all brackets;
    a closing bracket at depth 0 ends the scan (it closes something opened before)."""
    depth = 0
    for index, char in enumerate(text):
        if char in "(<[{":
            depth += 1
        elif char in ")]}" or (char == ">" and text[index - 1 : index] != "-"):
            if depth == 0:
                yield index, char
                return
            depth -= 1
        elif depth == 0:
            yield index, char


def top_level_arrow(text: str) -> int:
    """Index of the ``->`` of a function type."""
    for index, char in _top_level(text):
        if char == "-" and text.startswith("->", index):
            return index
    raise ValueError(f"no '->' in {text!r}")


def closing_bracket(text: str) -> int:
    """Index of the bracket that closes one opened just before ``text`` starts."""
    for index, char in _top_level(text):
        if char in ")]}>":
            return index
    raise ValueError(f"unbalanced {text!r}")


def split_types(text: str) -> list[str]:
    """``(A, B)`` or ``A, B`` -> ``["A", "B"]``; ``()`` -> ``[]``."""
    text = text.strip()
    if text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    parts, start = [], 0
    for index, char in _top_level(text):
        if char == ",":
            parts.append(text[start:index].strip())
            start = index + 1
    if text[start:].strip():
        parts.append(text[start:].strip())
    return parts
