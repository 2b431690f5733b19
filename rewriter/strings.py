"""MLIR string literals: decoding escapes exactly, as MLIR's lexer does."""

from __future__ import annotations

import re

_ESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{2})|(.))", re.DOTALL)
_SIMPLE = {"n": b"\n", "t": b"\t", '"': b'"', "\\": b"\\"}


def decode_string(literal: str) -> bytes:
    """The bytes of a quoted MLIR string: ``\\XX`` hex pairs, ``\\n \\t \\" \\\\``, raw UTF-8."""
    body = literal[1:-1]
    out = bytearray()
    position = 0
    for match in _ESCAPE.finditer(body):
        out += body[position : match.start()].encode("utf-8")
        if match.group(1) is not None:
            out.append(int(match.group(1), 16))
        else:
            out += _SIMPLE.get(match.group(2), match.group(2).encode("utf-8"))
        position = match.end()
    out += body[position:].encode("utf-8")
    return bytes(out)
