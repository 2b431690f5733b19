"""``TextEnum``: a closed set of words that still reads, compares and prints as its words.

The rewrite's statuses, kinds and forms are Enums, so that what is allowed is written down
once; each member is also the ``str`` it stands for, so code and users that compare with
plain strings (``report.status == "rewritten"``), format them (f-strings, ``--list``), use
them as dictionary keys or write them as JSON see the word and nothing else.
requires-python is 3.10, which has no ``enum.StrEnum``: this is the same idea.
The rewriter compares members with ``==``, not ``is``, so that a report or a fact built by
hand with a plain word (tests, older callers) reads the same.
"""

from __future__ import annotations

from enum import Enum


class TextEnum(str, Enum):
    """A member is its value: ``str()``, ``format()`` and f-strings give the word (Python
    3.12 would otherwise write ``Status.REWRITTEN`` in f-strings), ``==`` and ``hash`` are
    ``str``'s. ``repr`` stays the Enum's, so a debugger shows which set a word comes from."""

    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, format_spec: str) -> str:
        return str.__format__(str.__str__(self), format_spec)
