"""Parse the custom call statements the scan found, each with the lark grammar on its own."""

from __future__ import annotations

import re

from . import model
from .diagnostics import Diagnostic
from .grammar import parser
from .scan import CallSite, Scan
from .source import Source
from .terminals import COMMENT, STRING
from .to_model import custom_call_from_tree

# Strings and comments are matched whole so that brackets inside them do not count.
_DEPTH_TOKEN = re.compile(f"{STRING}|{COMMENT}" + r"|->|[()\[\]{}<>\n]")
_MAX_CONTINUATION_LINES = 64


def statement_end(text: str, start: int, after: int) -> int:
    """Offset of the first newline after ``after`` outside brackets opened since ``start``."""
    depth = 0
    for match in _DEPTH_TOKEN.finditer(text, start):
        token = match.group()
        if token == "->" or token[0] in '"/':
            continue
        if token in "([{<":
            depth += 1
        elif token in ")]}>":
            depth -= 1
        elif depth <= 0 and match.start() > after:
            return match.start()
    return len(text)


def parse_call(source: Source, scan: Scan, site: CallSite) -> model.CustomCall:
    """The model of the call at ``site``; raises ``CallSyntaxError`` when it does not parse."""
    import lark

    end = site.keyword
    for _ in range(_MAX_CONTINUATION_LINES):
        end = statement_end(source.text, site.statement, end)
        piece = source.text[site.statement : end]
        try:
            tree = parser().parse(piece, start="custom_call_stmt")
        except lark.exceptions.UnexpectedInput as error:
            at_end = isinstance(error, lark.exceptions.UnexpectedEOF) or (
                isinstance(error, lark.exceptions.UnexpectedToken) and error.token.type == "$END"
            )
            if at_end and end < len(source.text):
                end += 1
                continue
            raise CallSyntaxError(_syntax_diagnostic(source, site, error)) from None
        try:
            call = custom_call_from_tree(tree, piece, site.statement)
        except RecursionError:
            raise CallSyntaxError(
                Diagnostic.at(source, site.keyword, "custom call nests too deeply to rewrite")
            ) from None
        call.module = scan.module_of(site.keyword)
        return call
    raise CallSyntaxError(Diagnostic.at(source, site.keyword, "custom call statement does not end"))


class CallSyntaxError(Exception):
    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.format())
        self.diagnostic = diagnostic


def _syntax_diagnostic(source: Source, site: CallSite, error) -> Diagnostic:
    import lark

    offset = site.statement + (getattr(error, "pos_in_stream", None) or 0)
    if isinstance(error, lark.exceptions.UnexpectedToken):
        token = error.token
        if token.type == "$END":
            what = "the end of the statement"
        else:
            offset = site.statement + token.start_pos
            what = repr(str(token))
        expected = sorted(_describe_terminal(name) for name in error.accepts or error.expected)
        hint = f"; expected {', '.join(expected[:6])}" if expected else ""
        message = f"unexpected {what} in custom call{hint}"
    elif isinstance(error, lark.exceptions.UnexpectedCharacters):
        message = f"unexpected character {source.text[offset]!r} in custom call"
    else:
        message = "malformed custom call"
    return Diagnostic.at(source, offset, message)


_TERMINAL_NAMES = {
    "LPAR": "'('",
    "RPAR": "')'",
    "LBRACE": "'{'",
    "RBRACE": "'}'",
    "LSQB": "'['",
    "RSQB": "']'",
    "LESSTHAN": "'<'",
    "MORETHAN": "'>'",
    "COLON": "':'",
    "COMMA": "','",
    "EQUAL": "'='",
    "__ANON_0": "'->'",
    "SYMBOL": "a symbol (@name)",
    "VALUE_USE": "a value (%name)",
    "STRING": "a string",
    "BARE_ID": "a name",
    "INT": "an integer",
    "FLOAT": "a float",
    "HEX": "a hexadecimal literal",
    "LOC": "'loc'",
    "SHAPED_KIND": "a tensor type",
    "DIMS": "dimensions",
}


def _describe_terminal(name: str) -> str:
    return _TERMINAL_NAMES.get(name, name.lower())
