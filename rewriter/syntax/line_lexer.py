"""lark's contextual lexing of a line, token for token, at a fraction of its cost.

lark's lexer for a parser state matches one alternation of the state's terminals, in
their priority order, at each position: the first terminal in that order that matches
gives the token. ``sre`` tries the alternatives one by one, so a comma, near the end of
the order, costs the failed tries of some forty terminals before it: the 56 lines the
validation of a 1000-call export lexes cost 49M of its 113M instructions (38k a token);
lexed as below, 29M.

A terminal matches at least one character (lark refuses zero-width terminals), so one
that cannot start with the character at the position does not match there. Leaving such
terminals out of the alternation leaves the first that matches where it was, so the
alternation of the terminals that can start with the character, in the same order and
under the same group names, gives the same token as lark's. ``first_characters`` tells
what a terminal's regular expression can start with, from ``re``'s own parse of it; where
it cannot tell (a class such as ``\\w``, a case-insensitive part, any other construct), the
terminal is kept for every character, which keeps the argument sound.

What lark does around the match is done as it does it (``BasicLexer.next_token``): an
ignored terminal is skipped, and a terminal's callback (``UnlessCallback``: a keyword that
a name's pattern also takes) may retype the token. Where no terminal matches, ``lex``
raises ``NoTerminal`` and leaves the error to lark's lexer, which says what is wrong as
it always has.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from importlib import import_module
from typing import Any

from lark import Token


def _re_internals() -> tuple[Any, Any]:
    """``re``'s parser of patterns and its opcodes (``sre_parse`` before Python 3.11)."""
    try:
        return import_module("re._parser"), import_module("re._constants")
    except ImportError:
        return import_module("sre_parse"), import_module("sre_constants")


_parser, _sre = _re_internals()

_WIDEST_RANGE = 256  # a range wider than this is taken as "any character"

Chars = frozenset[str] | None  # None: any character


class NoTerminal(Exception):
    """No terminal of the state takes the text at the position."""


def first_characters(regexp: str, flags: int = 0) -> Chars:
    """The characters a match of ``regexp`` can start with, or None when that is not told
    (then any). Lookarounds and anchors take none and are passed over."""
    if flags:
        return None
    try:
        parsed = _parser.parse(regexp, flags)
    except Exception:  # noqa: BLE001 - what re cannot parse here, take as any
        return None
    chars, nullable = _of_sequence(parsed)
    return None if chars is None or nullable else frozenset(chars)


def _of_sequence(items: Iterable[tuple[Any, Any]]) -> tuple[set[str] | None, bool]:
    """The first characters of a sequence of items, and whether it can match nothing."""
    chars: set[str] = set()
    for op, argument in items:
        first, nullable = _of_item(op, argument)
        if first is None:
            return None, False
        chars |= first
        if not nullable:
            return chars, False
    return chars, True


def _of_item(op: Any, argument: Any) -> tuple[set[str] | None, bool]:
    if op is _sre.LITERAL:
        return {chr(argument)}, False
    if op is _sre.IN:
        return _of_class(argument), False
    if op is _sre.SUBPATTERN:
        _, added, removed, pattern = argument
        return (None, False) if added or removed else _of_sequence(pattern)
    if op is _sre.BRANCH:
        chars: set[str] = set()
        any_nullable = False
        for branch in argument[1]:
            first, nullable = _of_sequence(branch)
            if first is None:
                return None, False
            chars |= first
            any_nullable = any_nullable or nullable
        return chars, any_nullable
    if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT) or op is getattr(_sre, "POSSESSIVE_REPEAT", 0):
        least, _, pattern = argument
        first, nullable = _of_sequence(pattern)
        return first, nullable or least == 0
    if op is getattr(_sre, "ATOMIC_GROUP", 0):
        return _of_sequence(argument)
    if op in (_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT):
        return set(), True  # takes no character
    return None, False  # any character, a back reference, ...: not told


def _of_class(members: Iterable[tuple[Any, Any]]) -> set[str] | None:
    """The characters of a class ``[...]`` of literals and ranges; None for any other."""
    chars: set[str] = set()
    for kind, value in members:
        if kind is _sre.LITERAL:
            chars.add(chr(value))
        elif kind is _sre.RANGE and value[1] - value[0] <= _WIDEST_RANGE:
            chars.update(map(chr, range(value[0], value[1] + 1)))
        else:  # a negated class, a category such as \w, a wide range
            return None
    return chars


Matcher = Callable[[str, int, int], "re.Match[str] | None"]


def _no_terminal(text: str, position: int, end: int) -> None:
    """The alternation of no terminal: matches nothing."""
    return None


class _StateLexer:
    """The terminals of one of lark's basic lexers, an alternation per first character."""

    def __init__(self, lexer: Any):
        scanner = lexer.scanner  # built on first use, with the callbacks
        self.callbacks: dict[str, Callable[[Token], Token]] = lexer.callback
        self.ignored: frozenset[str] = lexer.ignore_types
        self.skipped = self.ignored - set(self.callbacks)  # never made a token
        flags = lexer.g_regex_flags
        self.flags = flags
        regexps = [(t.name, t.pattern.to_regexp()) for t in scanner.terminals]
        self.terminals = [(n, r, first_characters(r, flags)) for n, r in regexps]
        self.by_first: dict[str, Matcher] = {}

    def matcher(self, char: str) -> Matcher:
        """The alternation of the terminals that can start with ``char``, in order."""
        found = self.by_first.get(char)
        if found is None:
            taken = [(n, r) for n, r, first in self.terminals if first is None or char in first]
            found = self.by_first[char] = _alternation(tuple(taken), self.flags)
        return found


@functools.cache
def _alternation(terminals: tuple[tuple[str, str], ...], flags: int) -> Matcher:
    """The compiled alternation of ``terminals`` (one per set of them, shared by states)."""
    if not terminals:
        return _no_terminal
    return re.compile("|".join(f"(?P<{name}>{regexp})" for name, regexp in terminals), flags).match


class LineLexer:
    """lark's ``ContextualLexer`` over one line, fed to a parser as it goes."""

    def __init__(self, contextual: Any):
        self.lexers = contextual.lexers  # parser state -> lark's basic lexer
        self.by_state: dict[int, _StateLexer] = {}
        self.by_lexer: dict[Any, _StateLexer] = {}

    def lex(
        self,
        text: str,
        start: int,
        end: int,
        stack: list[int],
        see: Callable[[Token], None],
        feed: Callable[[Token], None],
    ) -> None:
        """Lex ``text[start:end]`` as lark's contextual lexer does, the terminals chosen by
        the state on top of ``stack``, and give each token to ``see`` and then to ``feed``,
        which parses it (moving ``stack``)."""
        by_state = self.by_state
        position = start
        while position < end:
            state = stack[-1]
            lexer = by_state.get(state)
            if lexer is None:
                lexer = self._lexer_of(state)
            match = lexer.by_first.get(text[position])
            if match is None:
                match = lexer.matcher(text[position])
            found = match(text, position, end)
            if found is None:
                raise NoTerminal(position)
            kind = found.lastgroup
            assert kind is not None  # every alternative is a named group
            if kind in lexer.skipped:  # ignored, with no callback
                position = found.end()
                continue
            token = Token(kind, found.group(), position)
            position = found.end()
            callback = lexer.callbacks.get(kind)
            if callback is not None:
                token = callback(token)
            if kind not in lexer.ignored:
                see(token)
                feed(token)

    def _lexer_of(self, state: int) -> _StateLexer:
        lark_lexer = self.lexers[state]
        lexer = self.by_lexer.get(lark_lexer)
        if lexer is None:  # states with the same terminals share lark's lexer
            lexer = self.by_lexer[lark_lexer] = _StateLexer(lark_lexer)
        self.by_state[state] = lexer
        return lexer
