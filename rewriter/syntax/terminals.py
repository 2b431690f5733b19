"""The grammar's terminals as regex text, for the hand-written patterns that must agree with it.

The scanners and blankers (``compact``, ``scan``, ``blanks``, ``validation``,
``dimensions``) find strings, numbers and names with Python regexes
whose soundness arguments say "the grammar's FLOAT", "what VALUE_ID takes", and so on.
They take that text from here, and this module takes it from the grammar file itself, so
an edit of a terminal reaches them: no hand-made copy can drift from the grammar.

Why a reader of its own and not ``parser().get_terminal(name)``: building the parser,
even from lark's cache, takes some 80 ms, and these patterns are compiled at import by
modules that do not always parse (``--help``, a file with no custom call). Reading the
grammar's text and picking out the one-line definitions ``NAME(.priority): /regexp/``
takes well under a millisecond. The regexp is the grammar's text as written; lark reads a
``/.../`` literal by turning the escapes ``\\n``, ``\\t``, ... into the characters and
``\\"`` into ``"``, which Python's ``re`` reads alike, so the text means what lark's
pattern means. ``tests/test_grammar_terminals.py`` checks every terminal read here against
lark's own, and the narrower forms some callers use against the terminal they narrow.
"""

from __future__ import annotations

import re

from .grammar import grammar_text

# A terminal defined by one regexp literal without flags, on one line of its own.
_DEFINITION = re.compile(
    r"^(?P<name>_?[A-Z][A-Z0-9_]*)(?:\.-?[0-9]+)?[ \t]*:[ \t]*"
    r"/(?P<regexp>(?:[^/\\\n]|\\.)+)/[ \t]*$",
    re.MULTILINE,
)


class GrammarChanged(LookupError):
    """The grammar no longer defines a terminal in the form a pattern here is built from."""


def _definitions(text: str) -> dict[str, str]:
    """Every one-regexp terminal of ``text``, by name (the last definition wins, as in lark)."""
    return {match["name"]: match["regexp"] for match in _DEFINITION.finditer(text)}


_REGEXPS = _definitions(grammar_text())
TAKEN: set[str] = set()  # the terminals asked for: the test checks each against lark's


def terminal(name: str) -> str:
    """The regexp of the grammar's terminal ``name``, as the grammar writes it."""
    try:
        regexp = _REGEXPS[name]
    except KeyError:
        raise GrammarChanged(f"the grammar defines no terminal {name} as one /regexp/") from None
    TAKEN.add(name)
    return regexp


def after(name: str, prefix: str) -> str:
    """The regexp of terminal ``name`` past its literal first character(s) ``prefix``:
    the body of a name that follows a sigil (``%``, ``#``)."""
    regexp = terminal(name)
    escaped = re.escape(prefix)
    for written in (prefix, escaped):
        if regexp.startswith(written):
            return regexp[len(written) :]
    raise GrammarChanged(f"the grammar's {name} no longer starts with {prefix!r}: {regexp}")


def _grouped(regexp: str) -> str:
    """``regexp`` as one group, so that a terminal whose regexp gains a top-level ``|`` still
    reads as one piece where a caller writes text around it (``%{VALUE_NAME}``); a group
    that captures nothing costs the regex engine nothing."""
    return f"(?:{regexp})"


def _bare_symbol_name() -> str:
    """SYMBOL's bare-name form: SYMBOL is ``@`` then a bare name or a STRING."""
    body, string = after("SYMBOL", "@"), terminal("STRING")
    head, tail = "(?:", f"|{string})"
    if not (body.startswith(head) and body.endswith(tail)):
        raise GrammarChanged(f"the grammar's SYMBOL is no longer @(?:NAME|STRING): @{body}")
    return body[len(head) : -len(tail)]


STRING = _grouped(terminal("STRING"))  # a quoted string, escapes and all, on one line
COMMENT = _grouped(terminal("COMMENT"))  # `//` to the line's end
FLOAT = _grouped(terminal("FLOAT"))
INT = _grouped(terminal("INT"))
DIMS = _grouped(terminal("DIMS"))  # a run of dimensions `4x?x`, after `tensor<` and its kin
VALUE_NAME = _grouped(after("VALUE_ID", "%"))  # the name after `%`
RESULT_GROUP = _grouped(terminal("_RESULT_GROUP"))  # `%name` or `%name:N`, before a `=`
ALIAS_NAME = _grouped(after("HASH_ID", "#"))  # the name after `#` (an alias)
SYMBOL_NAME = _grouped(_bare_symbol_name())  # the name after `@`, when not quoted
