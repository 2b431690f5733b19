"""The reference validation: lark parses the whole module at once, nothing remembered.

``validation.first_error`` parses a line at a time and remembers outcomes by line shapes;
this is what it must equal, and what ``rewriter.validate(..., plain=True)`` and
``REWRITER_PLAIN=1`` run. The same checks beside the grammar, on the same tokens: integer
literals against their types as the tokens go by (reset at each line, as the line parse
does), then empty attribute names on the text (``empty_names``). Slow on large modules
(lark builds its parse of every token); that is its job.
"""

from __future__ import annotations

from lark.exceptions import UnexpectedCharacters, UnexpectedToken

from .diagnostics import Diagnostic
from .grammar import parser
from .source import Source
from .validation import START, IntegerLiterals, Unexpected, first_diagnostic


def first_error_plain(source: Source) -> Diagnostic | None:
    """``validation.first_error(source)``, by lark's parse of the whole text."""
    return first_diagnostic(source, lambda: _parse(source.text))


def _parse(text: str) -> None:
    """Parse ``text`` whole with lark's interactive parser, checking integer literals as
    its tokens go by; raise ``Unexpected`` where it stops, or for a literal out of range."""
    integers = IntegerLiterals()
    interactive = parser().parse_interactive(text, start=START)
    line: int | None = 0
    last = None
    try:
        for token in interactive.iter_parse():
            if token.line != line:
                line = token.line
                integers.new_line()
            integers.see(token)
            last = token
        interactive.feed_eof(last)
    except UnexpectedToken as error:
        if error.token.type == "$END":
            raise Unexpected(len(text), "unexpected end of input") from None
        raise Unexpected(error.token.start_pos or 0, f"unexpected {str(error.token)!r}") from None
    except UnexpectedCharacters as error:
        offset = error.pos_in_stream or 0
        raise Unexpected(offset, f"unexpected character {text[offset]!r}") from None
    if integers.first is not None:
        raise Unexpected(*integers.first)
