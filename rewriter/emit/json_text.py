"""``json.dumps(value, indent=2)``, byte for byte, at a few times its speed.

With an indent, the standard library encodes in pure Python, node by node: for the listing
of an export with tens of thousands of calls that costs more than the rewrite itself. This
writer indents containers itself and leaves strings and numbers to ``json``'s C encoders.
What a listing repeats call after call it writes once: a list or dict met again (a shape's
types and attributes, shared by its calls) is looked up by identity, lists and dicts of
strings by value, and the keys of a dict (every call has the same ten) by their tuple, as
one ``%`` template that the dict's values fill in.
``tests/test_json_text.py`` compares it with ``json.dumps`` on every value it takes.
"""

from __future__ import annotations

import gc
import json
from json.encoder import encode_basestring_ascii
from typing import Any

_INDENT = "  "


def dumps(value: Any) -> str:
    """``json.dumps(value, indent=2)`` for dicts with string keys, lists, tuples, strings,
    integers, floats, booleans and None.

    The cyclic collector is paused meanwhile: the writer keeps a small tuple per list and
    dict it writes, and with a listing's thousands alive (and a rewrite's objects beside
    them) the collector would walk them all again and again, finding no cycle."""
    running = gc.isenabled()
    gc.disable()
    try:
        return _Writer().encode(value, "\n")
    finally:
        if running:
            gc.enable()


class _Writer:
    """One document's writer: what it has written of lists and dicts, and of dicts' keys,
    it writes again by looking it up."""

    def __init__(self) -> None:
        self.remembered: dict[tuple[Any, ...], str] = {}
        # A dict's keys at one indentation: the text around its values.
        self.templates: dict[tuple[str, ...], str] = {}
        # Each list and dict written, by identity and indentation (a shape's calls share
        # their types and attributes; nothing changes while a document is written): kept
        # with its text, so that its id stays its own.
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
        else:
            text = self._members(value, newline)
        self.seen[id(value), newline] = (value, text)
        return text

    def _members(self, value: dict[Any, Any], newline: str) -> str:
        keys = (newline, *value)
        template = self.templates.get(keys)
        if template is None:
            template = self.templates[keys] = _template(value, newline)
        inner, encode = newline + _INDENT, self.encode
        return template % tuple(
            [
                encode_basestring_ascii(item) if type(item) is str else encode(item, inner)
                for item in value.values()
            ]
        )

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
                items = list(map(encode_basestring_ascii, value))
                text = self.remembered[key] = _bracketed(items, inner, newline)
        else:
            text = _bracketed([self.encode(item, inner) for item in value], inner, newline)
        self.seen[id(value), newline] = (value, text)
        return text


def _bracketed(items: list[str], inner: str, newline: str) -> str:
    """The text of a list of these items' texts, joined in one copy: a listing runs to
    megabytes, and chained ``+`` would copy it once per operand, each time into freshly
    mapped memory."""
    parts = ["," + inner] * (2 * len(items) + 1)
    parts[0] = "[" + inner
    parts[1::2] = items
    parts[-1] = newline + "]"
    return "".join(parts)


def _template(value: dict[Any, Any], newline: str) -> str:
    """The text of a dict with ``value``'s keys at this indentation, ``%s`` for each value."""
    inner = newline + _INDENT
    names = [encode_basestring_ascii(_key(key)).replace("%", "%%") + ": %s" for key in value]
    return "{" + inner + ("," + inner).join(names) + newline + "}"


def _key(key: object) -> str:
    if not isinstance(key, str):
        raise TypeError(f"keys must be str, not {type(key).__name__}")
    return key
