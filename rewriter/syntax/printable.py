"""Input text made safe to print on a terminal: the one escaper of every text printer.

A target, a function or file name, a string attribute or a source line comes from the
input, and the input may hold any character: an ESC starts a terminal escape sequence, a
line break or a carriage return forges a line of output (``fake.mlir:1: @y: would be
rewritten``), a bidi override reorders what follows. Every character that Python's
``str.isprintable`` calls unprintable (controls C0 and C1 and DEL, line and paragraph
separators, format characters such as bidi overrides and zero-width joiners, surrogates,
private-use and unassigned code points, every space but the plain one) is shown as MLIR
writes such a byte in a string: a backslash and two hex digits per UTF-8 byte (``\\1B``,
``\\0A``, ``\\E2\\80\\AE``), so a target reads as it does in the file. A file name that
is not UTF-8 (its bytes arrive as surrogate escapes) shows its own bytes (``\\FF``).

The common case costs one C-speed ``isprintable`` over the text; JSON output needs none
of this (``json`` escapes every control and non-ASCII character itself).
"""

from __future__ import annotations

import re

_UNPRINTABLE = re.compile(r"[^ -~]")  # candidates: every character but printable ASCII


def printable(text: str) -> str:
    """``text`` with every unprintable character escaped as ``\\XX`` per UTF-8 byte."""
    if text.isprintable():
        return text
    return _UNPRINTABLE.sub(_escaped, text)


def printable_lines(text: str) -> str:
    """``printable`` of each line of ``text``, keeping its line breaks (``\\n``): for
    messages of several lines, such as a tool's diagnostics about the input."""
    if text.isprintable():
        return text
    return "\n".join(map(printable, text.split("\n")))


def _escaped(match: re.Match[str]) -> str:
    character = match.group()
    if character.isprintable():
        return character
    return "".join(f"\\{byte:02X}" for byte in _utf8(character))


def _utf8(character: str) -> bytes:
    try:
        return character.encode("utf-8", "surrogateescape")  # a file name's own byte
    except UnicodeEncodeError:
        return character.encode("utf-8", "surrogatepass")  # a lone surrogate
