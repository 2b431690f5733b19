"""Empty attribute names (``{"" = 1 : i32}``): the grammar's STRING takes them, MLIR does not.

MLIR's parser rejects an empty name in an attribute dictionary ("expected valid attribute
name"). The grammar cannot: ``--validate`` remembers a line by its shape with every string
blanked to ``""`` (``validation.LineShapes``), so a grammar that told ``""`` from other
strings would tell no line apart. The check reads the text instead, once: a ``""`` that is
a whole string token (strings and comments never span lines, so its line tells) and stands
where a dictionary's name does, after ``{`` or ``,`` and before ``=``, ``,`` or ``}``.
"""

from __future__ import annotations

import re

from .terminals import COMMENT, STRING

_TOKEN = re.compile(f"{COMMENT}|{STRING}")
_BEFORE_NAME = re.compile(r"[{,][ \t]*$")
_AFTER_NAME = re.compile(r"[ \t]*[=,}]")


def first_empty_attribute_name(text: str) -> int | None:
    """The offset of the first empty attribute name of ``text``, or None."""
    position = text.find('""')
    while position >= 0:
        line_start = text.rfind("\n", 0, position) + 1
        line_end = text.find("\n", position)
        line_end = len(text) if line_end < 0 else line_end
        for token in _TOKEN.finditer(text, line_start, line_end):
            if token.start() > position:
                break
            if token.start() == position and token.group() == '""':
                before = text[line_start:position]
                if _BEFORE_NAME.search(before) and _AFTER_NAME.match(text, token.end()):
                    return position
        position = text.find('""', line_end)
    return None
