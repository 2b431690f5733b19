"""``json.dumps(value, indent=2)``, byte for byte, at a few times its speed.

With an indent, the standard library encodes in pure Python, node by node: for the listing
of an export with tens of thousands of calls that costs more than the rewrite itself. This
writer indents containers itself and leaves strings and numbers to ``json``'s C encoders;
lists of strings and dicts of strings (a call's types and attributes, repeated call after
call) are written once each.
``tests/test_json_text.py`` compares it with ``json.dumps`` on every value it takes.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii
from typing import Any

_INDENT = "  "


def dumps(value: Any) -> str:
    """``json.dumps(value, indent=2)`` for dicts with string keys, lists, tuples, strings,
    integers, floats, booleans and None."""
    return _Writer().encode(value, "\n")


class _Writer:
    """One document's writer: what it has written of lists and dicts of strings, and of
    keys, it writes again by looking it up."""

    def __init__(self) -> None:
        self.remembered: dict[tuple[Any, ...], str] = {}
        self.keys: dict[str, str] = {}
        # The same object met again at the same indentation (a shape's calls share their
        # types and attributes; nothing changes while a document is written): kept with
        # its text, so that its id stays its own.
        self.seen: dict[tuple[int, str], tuple[Any, str]] = {}

    def encode(self, value: Any, newline: str) -> str:
        """``value`` written at the indentation ``newline`` holds (a break and spaces)."""
        kind = type(value)
        if kind is str:
            return encode_basestring_ascii(value)
        if kind is int:
            return int.__repr__(value)
        if value is None:
            return "null"
        if kind is dict or (kind is not bool and isinstance(value, dict)):
            return self._dict(value, newline)
        if kind is list or kind is tuple or isinstance(value, (list, tuple)):
            return self._list(value, newline)
        if value is True:
            return "true"
        if value is False:
            return "false"
        if isinstance(value, str):
            return encode_basestring_ascii(value)
        if isinstance(value, int):
            return int.__repr__(value)
        return json.dumps(value)  # floats (and NaN, Infinity) as json writes them

    def _dict(self, value: dict[Any, Any], newline: str) -> str:
        if not value:
            return "{}"
        seen = self.seen.get((id(value), newline))
        if seen is not None:
            return seen[1]
        if all(type(item) is str for item in value.values()):
            key = (newline, *value.items())
            text = self.remembered.get(key)
            if text is None:
                text = self.remembered[key] = self._members(value, newline)
            self.seen[id(value), newline] = (value, text)
            return text
        return self._members(value, newline)

    def _members(self, value: dict[Any, Any], newline: str) -> str:
        inner = newline + _INDENT
        keys, encode = self.keys, self.encode
        parts = []
        for key, item in value.items():
            name = keys.get(key)
            if name is None:
                name = keys[key] = encode_basestring_ascii(_key(key)) + ": "
            parts.append(name + encode(item, inner))
        return "{" + inner + ("," + inner).join(parts) + newline + "}"

    def _list(self, value: list[Any] | tuple[Any, ...], newline: str) -> str:
        if not value:
            return "[]"
        seen = self.seen.get((id(value), newline))
        if seen is not None:
            return seen[1]
        inner = newline + _INDENT
        if all(type(item) is str for item in value):
            key = (newline, *value)
            text = self.remembered.get(key)
            if text is None:
                items = ("," + inner).join(map(encode_basestring_ascii, value))
                text = self.remembered[key] = "[" + inner + items + newline + "]"
            self.seen[id(value), newline] = (value, text)
            return text
        items = ("," + inner).join([self.encode(item, inner) for item in value])
        return "[" + inner + items + newline + "]"


def _key(key: object) -> str:
    if not isinstance(key, str):
        raise TypeError(f"keys must be str, not {type(key).__name__}")
    return key
