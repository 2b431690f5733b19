"""MLIR string literals: decoding escapes exactly, as MLIR's lexer does, and writing them."""

from __future__ import annotations

import re

_ESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{2})|(.))", re.DOTALL)
_SIMPLE = {"n": b"\n", "t": b"\t", '"': b'"', "\\": b"\\"}
# Printable ASCII but the quote and the backslash: written as it is (most names are).
_VERBATIM = re.compile(r"[ !#-\[\]-~]*")


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


def encode_string(value: str) -> str:
    """``value`` as a quoted MLIR string: printable ASCII verbatim, every other byte of its
    UTF-8 (quotes and backslashes included) as a ``\\XX`` escape; ``decode_string``
    reads it back exactly."""
    if _VERBATIM.fullmatch(value):
        return f'"{value}"'
    out = []
    for byte in value.encode("utf-8"):
        char = chr(byte)
        out.append(char if 0x20 <= byte < 0x7F and char not in '"\\' else f"\\{byte:02X}")
    return '"' + "".join(out) + '"'
