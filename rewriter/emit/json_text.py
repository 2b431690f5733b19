"""``json.dumps(value, indent=2)``, byte for byte, at a few times its speed.

With an indent, the standard library encodes in pure Python, node by node: for the listing
of an export with tens of thousands of calls that costs more than the rewrite itself. This
writer indents containers itself and leaves strings and numbers to ``json``'s C encoders.
It appends pieces of text to one list, joined at the end (or a few at a time, to be
written: ``chunks``): a listing runs to megabytes, and building each container's text
from its members' would copy it again at every level.
What a listing repeats call after call it writes once: a list or dict met again (a shape's
types and attributes, shared by its calls) is looked up by identity, lists and dicts of
strings by value, and the keys of a dict (every call has the same ten) by their tuple.
``tests/test_json_text.py`` compares it with ``json.dumps`` on every value it takes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from json.encoder import encode_basestring_ascii
from typing import Any

from ..collector import collector_paused

_INDENT = "  "


def dumps(value: Any) -> str:
    """``json.dumps(value, indent=2)`` for dicts with string keys, lists, tuples, strings,
    integers, floats, booleans and None."""
    return "".join(_parts(value))


def chunks(value: Any) -> Iterator[str]:
    """The text of ``dumps(value)`` in consecutive pieces of at most ``CHUNK_PARTS`` of the
    writer's parts each (about 100 KB of a listing), to be written one after another.

    A listing runs to hundreds of megabytes (152 MB for 64k calls of twelve attributes):
    joined whole, and then encoded whole to be written, it took two more copies of that
    (peak memory of the CLI 632 MB, now 350 MB). Each piece here is made, written and
    dropped in turn. The pieces come once the whole value is written (the parts of a
    container met again are joined from where they sit)."""
    parts = _parts(value)
    for start in range(0, len(parts), CHUNK_PARTS):
        yield "".join(parts[start : start + CHUNK_PARTS])


CHUNK_PARTS = 1024


def _parts(value: Any) -> list[str]:
    """The pieces of ``dumps(value)``'s text, in order.

    The cyclic collector is paused meanwhile (``rewriter.collector``): the writer keeps a
    small tuple per list and dict it writes, a listing's thousands of them."""
    with collector_paused():
        writer = _Writer()
        writer.write(value, "\n")
        return writer.parts


class _Writer:
    """One document's writer: the pieces of its text so far, and what it has written of
    lists and dicts, and of dicts' keys, to write again by looking it up."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.remembered: dict[tuple[Any, ...], str] = {}  # lists and dicts of strings
        # A dict's keys at one indentation: the text before each value, and the close.
        self.layouts: dict[tuple[str, ...], list[str]] = {}
        # Each list and dict written, by identity and indentation (a shape's calls share
        # their types and attributes; nothing changes while a document is written), kept
        # so that its id stays its own: with its text, or with where its pieces are until
        # it is met again (joining the pieces of every container would copy the document
        # once per level).
        self.texts: dict[tuple[int, str], tuple[Any, str]] = {}
        self.spans: dict[tuple[int, str], tuple[Any, int, int]] = {}

    def write(self, value: Any, newline: str) -> None:
        """Append ``value`` written at the indentation ``newline`` holds (a break and
        spaces)."""
        kind = type(value)
        if kind is str:
            self.parts.append(encode_basestring_ascii(value))
        elif kind is int:
            self.parts.append(int.__repr__(value))
        elif value is None:
            self.parts.append("null")
        elif kind is dict or kind is list or kind is tuple:
            self._container(value, newline)
        elif value is True:
            self.parts.append("true")
        elif value is False:
            self.parts.append("false")
        elif isinstance(value, (dict, list, tuple)):
            self._container(value, newline)
        elif isinstance(value, str):
            self.parts.append(encode_basestring_ascii(value))
        elif isinstance(value, int):
            self.parts.append(int.__repr__(value))
        else:
            self.parts.append(json.dumps(value))  # floats (and NaN, Infinity) as json does

    def _container(self, value: dict[Any, Any] | list[Any] | tuple[Any, ...], newline: str) -> None:
        parts = self.parts
        if not value:
            parts.append("{}" if isinstance(value, dict) else "[]")
            return
        mark = (id(value), newline)
        known = self.texts.get(mark)
        if known is not None:
            parts.append(known[1])
            return
        span = self.spans.get(mark)
        if span is not None:  # met again: its pieces joined once
            joined = "".join(parts[span[1] : span[2]])
            self.texts[mark] = (value, joined)
            parts.append(joined)
            return
        start = len(parts)
        items = value.values() if isinstance(value, dict) else value
        if not all(type(item) is str for item in items):
            self._members(value, newline)
            self.spans[mark] = (value, start, len(parts))
            return
        key = (newline, *value.items()) if isinstance(value, dict) else (newline, *value)
        text = self.remembered.get(key)
        if text is None:
            self._members(value, newline)
            text = self.remembered[key] = "".join(parts[start:])
            del parts[start:]
        self.texts[mark] = (value, text)
        parts.append(text)

    def _members(self, value: dict[Any, Any] | list[Any] | tuple[Any, ...], newline: str) -> None:
        if isinstance(value, dict):
            self._dict(value, newline)
        else:
            self._list(value, newline)

    def _dict(self, value: dict[Any, Any], newline: str) -> None:
        keys = (newline, *value)
        layout = self.layouts.get(keys)
        if layout is None:
            layout = self.layouts[keys] = _layout(value, newline)
        append, write, inner = self.parts.append, self.write, newline + _INDENT
        for before, item in zip(layout, value.values(), strict=False):  # and then the close
            append(before)
            if type(item) is str:
                append(encode_basestring_ascii(item))
            else:
                write(item, inner)
        append(layout[-1])

    def _list(self, value: list[Any] | tuple[Any, ...], newline: str) -> None:
        inner = newline + _INDENT
        parts, write, separator = self.parts, self.write, "," + inner
        parts.append("[" + inner)
        for item in value:
            if type(item) is str:
                parts.append(encode_basestring_ascii(item))
            else:
                write(item, inner)
            parts.append(separator)
        parts[-1] = newline + "]"  # the last separator


def _layout(value: dict[Any, Any], newline: str) -> list[str]:
    """The text before each value of a dict with ``value``'s keys at this indentation,
    and after the last."""
    inner = newline + _INDENT
    names = [encode_basestring_ascii(_key(key)) + ": " for key in value]
    layout = ["," + inner + name for name in names]
    layout[0] = "{" + inner + names[0]
    layout.append(newline + "}")
    return layout


def _key(key: object) -> str:
    if not isinstance(key, str):
        raise TypeError(f"keys must be str, not {type(key).__name__}")
    return key
