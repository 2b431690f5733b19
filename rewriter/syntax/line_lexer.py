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
under the same group names, gives the same token as lark's. Whether a terminal can start
with a character is asked of the regular expression engine itself: the ``regex`` module's
partial match (``partial=True``) of the character alone tells whether some text that
starts with it is, or begins, a match. A terminal's look-behind sees the text before the
position, which that one character does not show; the grammar's terminals look behind at
a newline only (at a line's start: ``(?<=\n)``, which ``tests/test_line_lexer.py`` checks),
so the character is also tried after a newline, and a terminal is kept when either try
matches.

What lark does around the match is done as it does it (``BasicLexer.next_token``): an
ignored terminal is skipped, and a terminal's callback (``UnlessCallback``: a keyword that
a name's pattern also takes) may retype the token. Where no terminal matches, ``lex``
raises ``NoTerminal`` and leaves the error to lark's lexer, which says what is wrong as
it always has.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import regex
from lark import Token


@functools.cache
def _pattern(regexp: str, flags: int) -> Any:
    return regex.compile(regexp, flags)


def can_start_with(regexp: str, flags: int, char: str) -> bool:
    """Whether a match of ``regexp`` can start with ``char``, at a line's start or not."""
    pattern = _pattern(regexp, flags)
    if pattern.match(char, partial=True) is not None:
        return True
    return pattern.match("\n" + char, 1, partial=True) is not None


class NoTerminal(Exception):
    """No terminal of the state takes the text at the position."""


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
        self.terminals = [(t.name, t.pattern.to_regexp()) for t in scanner.terminals]
        self.by_first: dict[str, Matcher] = {}

    def matcher(self, char: str) -> Matcher:
        """The alternation of the terminals that can start with ``char``, in order."""
        found = self.by_first.get(char)
        if found is None:
            taken = [(n, r) for n, r in self.terminals if can_start_with(r, self.flags, char)]
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
