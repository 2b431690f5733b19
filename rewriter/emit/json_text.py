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
    return _encode(value, "\n", {})


def _encode(value: Any, newline: str, remembered: dict[tuple[Any, ...], str]) -> str:
    """``value`` written at the indentation ``newline`` holds (a line break and spaces)."""
    if isinstance(value, str):
        return encode_basestring_ascii(value)
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner = newline + _INDENT
        if all(type(item) is str for item in value.values()):
            key = (newline, *value.items())
            text = remembered.get(key)
            if text is None:
                text = remembered[key] = _encode_dict(value, inner, remembered)
            return text
        return _encode_dict(value, inner, remembered)
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        inner = newline + _INDENT
        if all(type(item) is str for item in value):
            key = (newline, *value)
            text = remembered.get(key)
            if text is None:
                items = ("," + inner).join(map(encode_basestring_ascii, value))
                text = remembered[key] = "[" + inner + items + newline + "]"
            return text
        items = ("," + inner).join(_encode(item, inner, remembered) for item in value)
        return "[" + inner + items + newline + "]"
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is int:
        return int.__repr__(value)
    return json.dumps(value)  # floats (and NaN, Infinity) as json writes them


def _encode_dict(value: dict[Any, Any], inner: str, remembered: dict[tuple[Any, ...], str]) -> str:
    members = (
        f"{encode_basestring_ascii(_key(key))}: {_encode(item, inner, remembered)}"
        for key, item in value.items()
    )
    return "{" + inner + ("," + inner).join(members) + inner[: -len(_INDENT)] + "}"


def _key(key: object) -> str:
    if not isinstance(key, str):
        raise TypeError(f"keys must be str, not {type(key).__name__}")
    return key
