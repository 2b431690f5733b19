"""The fast structural pass over a whole file, without building a tree for every op.

Strings and comments are blanked out first (same length, so offsets stay valid); then
C-speed regular expressions find what the rewrite needs: custom call sites, the symbols
and SSA names already in use, and the modules whose bodies receive extern declarations.
Only the custom call statements themselves are handed to the lark parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .diagnostics import Diagnostic
from .source import Source
from .strings import decode_string

_STRING = r'"(?:[^"\\\n]|\\.)*"'
_STRING_OR_COMMENT = re.compile(_STRING + r"|//[^\n]*")
# Patterns start with a literal so that the regex engine can skip ahead quickly; what may
# precede the match is checked by ``_starts_word``.
_CUSTOM_CALL = re.compile(r"stablehlo\.custom_call(?![\w$.])")
_GENERIC_CUSTOM_CALL = '"stablehlo.custom_call"'
_GENERIC_MODULE = '"builtin.module"'
_MODULE = re.compile(r"module(?![\w$.\-])")
_SYMBOL = re.compile(r"@(?:[A-Za-z_$.\-][\w$.\-]*|\s)")
_QUOTED_SYMBOL = re.compile(r"@" + _STRING)
_VALUE = re.compile(r"%([A-Za-z0-9_$.\-]+)")
_STATEMENT_PREFIX = re.compile(
    r"[ \t]*(?:%[A-Za-z0-9_$.\-]+(?::[0-9]+)?(?:[ \t]*,[ \t]*%[A-Za-z0-9_$.\-]+(?::[0-9]+)?)*"
    r"[ \t]*=[ \t]*)?"
)
_INVALID_CHAR = re.compile(r"[^\t\n\r\x20-\x7e]")
_BRACKET = re.compile(r"[(){}\[\]]")
_CLOSING = {")": "(", "]": "[", "}": "{"}


@dataclass
class ModuleBody:
    """A module op: where its body starts and ends, and where declarations go."""

    keyword: int  # offset of the `module` keyword
    open: int  # offset of the body's `{`
    close: int  # offset of the body's `}`
    insert_at: int  # offset where new lines go (start of the first op's line)
    indent: str  # indentation of the first op of the body
    needs_newline: bool = False  # body starts on the `{` line: insertion must open a line


@dataclass
class CallSite:
    keyword: int  # offset of `stablehlo.custom_call` or of the generic form's string
    statement: int  # offset of the line start holding the statement
    form: str  # "pretty" or "generic"


@dataclass
class Scan:
    masked: str  # the text with strings and comments blanked out
    calls: list[CallSite] = field(default_factory=list)
    modules: list[ModuleBody] = field(default_factory=list)
    symbols: set[str] = field(default_factory=set)
    values: set[str] = field(default_factory=set)
    top_level_insert: int = 0  # where declarations go when the file has no `module` op
    top_level_indent: str = ""
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def module_of(self, offset: int) -> int:
        """Index of the innermost module body holding ``offset``, or -1."""
        best = -1
        for index, body in enumerate(self.modules):
            if body.open < offset < body.close:
                if best == -1 or body.open > self.modules[best].open:
                    best = index
        return best


def _mask(
    text: str, generic_calls: list[int], generic_modules: list[int], sym_names: list[str]
) -> str:
    """Blank strings and comments; note generic-form custom calls, modules and symbol names."""

    def blank(match: re.Match[str]) -> str:
        token = match.group()
        start = match.start()
        if token == _GENERIC_CUSTOM_CALL:
            generic_calls.append(start)
        elif token == _GENERIC_MODULE:
            generic_modules.append(start)
        elif text.endswith("sym_name = ", 0, start):
            sym_names.append(token)
        return '"' + " " * (len(token) - 2) + '"' if token[0] == '"' else " " * len(token)

    return _STRING_OR_COMMENT.sub(blank, text)


def scan(source: Source) -> Scan:
    """Find everything the rewrite needs, and the errors that make a file unusable."""
    text = source.text
    generic_calls: list[int] = []
    generic_modules: list[int] = []
    sym_names: list[str] = []  # generic form: `sym_name = "f"` defines the symbol @f
    masked = _mask(text, generic_calls, generic_modules, sym_names)
    result = Scan(masked)
    if not text.strip():
        result.diagnostics.append(Diagnostic.at(source, 0, "empty input: expected an MLIR module"))
        return result
    _check_characters(source, masked, result)
    _check_brackets(source, masked, result)
    if not result.diagnostics:
        _check_top_level(source, masked, result)
    if result.diagnostics:
        return result

    result.values = set(_VALUE.findall(masked))
    for match in _CUSTOM_CALL.finditer(masked):
        if not _starts_word(masked, match.start()):
            continue
        result.calls.append(CallSite(match.start(), source.line_start(match.start()), "pretty"))
    for offset in generic_calls:
        result.calls.append(CallSite(offset, source.line_start(offset), "generic"))
    result.calls.sort(key=lambda call: call.keyword)
    targets = {_target_offset(masked, call.keyword) for call in result.calls}
    result.symbols.update(decode_string(name).decode("utf-8", "replace") for name in sym_names)
    for match in _SYMBOL.finditer(masked):
        if match.start() in targets:
            continue
        if match.group().endswith(("@", " ", "\t", "\n")) or match.group() == "@":
            quoted = _QUOTED_SYMBOL.match(text, match.start())
            if quoted:
                result.symbols.add(_decode_symbol(quoted.group()))
            continue
        result.symbols.add(match.group()[1:])
    for call in result.calls:
        prefix = text[call.statement : call.keyword]
        if not _STATEMENT_PREFIX.fullmatch(prefix):
            result.diagnostics.append(
                Diagnostic.at(
                    source,
                    call.keyword,
                    "a custom call must start its own line (with only its results before it)",
                )
            )
    _find_modules(source, masked, result, generic_modules)
    return result


def _starts_word(masked: str, offset: int) -> bool:
    """Whether an identifier may start at ``offset`` (it does not continue another token)."""
    return (
        offset == 0
        or masked[offset - 1]
        not in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$.%@#!^-"
    )


def _target_offset(masked: str, keyword: int) -> int:
    """Offset of the `@target` that follows a pretty custom call keyword."""
    position = keyword + len("stablehlo.custom_call")
    while position < len(masked) and masked[position] in " \t":
        position += 1
    return position


def _decode_symbol(quoted: str) -> str:
    return decode_string(quoted[1:]).decode("utf-8", "replace")


def _check_characters(source: Source, masked: str, result: Scan) -> None:
    bad = _INVALID_CHAR.search(masked)
    if bad:
        char = bad.group()
        shown = "NUL byte" if char == "\0" else f"character {char!r} (U+{ord(char):04X})"
        result.diagnostics.append(
            Diagnostic.at(source, bad.start(), f"unexpected {shown}: not valid MLIR syntax")
        )
    quote = masked.find('"')
    while quote != -1:
        # Masked strings keep their quotes; an opening quote without its partner is unterminated.
        close = masked.find('"', quote + 1)
        if close == -1 or "\n" in masked[quote:close]:
            result.diagnostics.append(
                Diagnostic.at(
                    source, quote, "unterminated string: expected '\"' before the end of the line"
                )
            )
            return
        quote = masked.find('"', close + 1)


def _check_brackets(source: Source, masked: str, result: Scan) -> None:
    if all(masked.count(o) == masked.count(c) for c, o in _CLOSING.items()):
        if _brackets_nest(masked):
            return
    stack: list[int] = []
    for match in _BRACKET.finditer(masked):
        char = match.group()
        if char in "({[":
            stack.append(match.start())
        elif not stack:
            result.diagnostics.append(
                Diagnostic.at(source, match.start(), f"unbalanced {char!r}: nothing to close")
            )
            return
        elif masked[stack[-1]] != _CLOSING[char]:
            if _balanced_without(masked, match.start(), stack):
                expected = _partner(masked[stack[-1]])
                message = f"unbalanced {char!r}: it closes nothing (expected {expected!r})"
                result.diagnostics.append(Diagnostic.at(source, match.start(), message))
                return
            # Otherwise the innermost open bracket is the mistake: it was never closed.
            opener = stack[-1]
            line, column = source.line_col(match.start())
            message = (
                f"{masked[opener]!r} is never closed: expected {_partner(masked[opener])!r} "
                f"before the {char!r} at {line}:{column}"
            )
            result.diagnostics.append(Diagnostic.at(source, opener, message))
            return
        else:
            stack.pop()
    if stack:
        opener = stack[-1]
        result.diagnostics.append(
            Diagnostic.at(
                source,
                opener,
                f"{masked[opener]!r} is never closed: the input ends first (truncated file?)",
            )
        )


_TOP_LEVEL_LINE = re.compile(
    r"^[ \t]*(?=[^ \t\r\n])(?![#!%\"{}]|(?:builtin\.)?module(?![\w$.])|[A-Za-z_][\w$]*\.[\w$.]+)",
    re.MULTILINE,
)


def _check_top_level(source: Source, masked: str, result: Scan) -> None:
    """Every top-level line must start an op, an alias definition or file metadata.

    Bracketed content is skipped, so this costs one pass over the brackets; it catches
    text that is not MLIR at all, which the bracket checks cannot.
    """
    pieces: list[str] = []
    position = 0
    while True:
        open_ = masked.find("{", position)
        if open_ == -1:
            break
        close = _match_close(masked, open_)
        pieces.append(masked[position : open_ + 1])
        pieces.append("\n" * masked.count("\n", open_ + 1, close))
        position = close
    pieces.append(masked[position:])
    skeleton = "".join(pieces)
    bad = _TOP_LEVEL_LINE.search(skeleton)
    if bad:
        line = skeleton.count("\n", 0, bad.end()) + 1
        offset = source.line_starts()[line - 1] + (bad.end() - bad.start())
        result.diagnostics.append(
            Diagnostic.at(
                source,
                offset,
                'expected an operation (`module`, `dialect.op`, `"dialect.op"`), an alias '
                "definition (`#name = ...`, `!name = ...`) or `{-# ... #-}` at the top level",
            )
        )


def _balanced_without(masked: str, stray: int, stack: list[int]) -> bool:
    """Whether the rest of the text balances when the closing bracket at ``stray`` is dropped."""
    rest = list(stack)
    for match in _BRACKET.finditer(masked, stray + 1):
        char = match.group()
        if char in "({[":
            rest.append(match.start())
        elif not rest or masked[rest.pop()] != _CLOSING[char]:
            return False
    return not rest


def _partner(opener: str) -> str:
    return {v: k for k, v in _CLOSING.items()}[opener]


def _brackets_nest(masked: str) -> bool:
    """Whether brackets nest properly; strips innermost pairs with C-speed substitutions."""
    skeleton = re.sub(r"[^(){}\[\]]+", "", masked)
    previous = None
    while skeleton and skeleton != previous:
        previous = skeleton
        skeleton = re.sub(r"\(\)|\[\]|\{\}", "", skeleton)
    return not skeleton


def _match_close(masked: str, open_offset: int) -> int:
    depth = 0
    for match in _BRACKET.finditer(masked, open_offset):
        char = match.group()
        if char in "({[":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return match.start()
    return len(masked)


_MODULE_HEADER = re.compile(r"[ \t\r\n]*(?:@[A-Za-z_$.\-][\w$.\-]*|@\"[ ]*\")?[ \t\r\n]*")


_GENERIC_MODULE_OPERANDS = re.compile(r"[ \t]*\([ \t]*\)[ \t]*")
_GENERIC_REGION_START = re.compile(r"[ \t\r\n]*\([ \t\r\n]*\{")


def _generic_module_body(masked: str, keyword: int) -> int:
    """Offset of the body `{` of ``"builtin.module"() <{...}> ({``, or -1."""
    operands = _GENERIC_MODULE_OPERANDS.match(masked, keyword + len(_GENERIC_MODULE))
    if not operands:
        return -1
    position = operands.end()
    if masked.startswith("<", position):
        properties = masked.find("{", position)
        position = _match_close(masked, properties) + 1
        position = masked.find(">", position) + 1
    region = _GENERIC_REGION_START.match(masked, position)
    return region.end() - 1 if region else -1


def _find_modules(source: Source, masked: str, result: Scan, generic_modules: list[int]) -> None:
    text = source.text
    for keyword in generic_modules:
        statement = source.line_start(keyword)
        open_ = _generic_module_body(masked, keyword)
        if open_ == -1 or not _STATEMENT_PREFIX.fullmatch(text[statement:keyword]):
            continue
        close = _match_close(masked, open_)
        result.modules.append(_module_body(text, masked, keyword, open_, close))
    for match in _MODULE.finditer(masked):
        keyword = match.start()
        if masked.endswith("builtin.", 0, keyword):
            keyword -= len("builtin.")
        if not _starts_word(masked, keyword):
            continue
        statement = source.line_start(keyword)
        if not _STATEMENT_PREFIX.fullmatch(text[statement:keyword]):
            continue  # the word `module` used some other way
        position = _MODULE_HEADER.match(masked, match.end()).end()
        if masked.startswith("attributes", position):
            position = masked.find("{", position)
            position = _match_close(masked, position) + 1
            while position < len(masked) and masked[position] in " \t\r\n":
                position += 1
        if position >= len(masked) or masked[position] != "{":
            continue
        close = _match_close(masked, position)
        result.modules.append(_module_body(text, masked, keyword, position, close))
    if not result.modules:
        result.top_level_insert, result.top_level_indent = _first_top_level_op(masked)


def _module_body(text: str, masked: str, keyword: int, open_: int, close: int) -> ModuleBody:
    """Where declarations go: before the first op of the body (comments are not ops)."""
    first = open_ + 1
    while first < close and masked[first] in " \t\r\n":
        first += 1
    line_start = text.rfind("\n", 0, first) + 1
    if line_start <= open_:
        # Body content (or the closing brace) is on the `{` line itself.
        keyword_line = text.rfind("\n", 0, keyword) + 1
        indent = re.match(r"[ \t]*", text[keyword_line:]).group() + "  "
        return ModuleBody(keyword, open_, close, open_ + 1, indent, needs_newline=True)
    indent = text[line_start:first]
    if first == close:
        indent += "  "
    return ModuleBody(keyword, open_, close, line_start, indent)


def _first_top_level_op(masked: str) -> tuple[int, str]:
    for match in re.finditer(r"^([ \t]*)(\S)", masked, re.MULTILINE):
        if match.group(2) in "#!" or masked.startswith("{-#", match.start(2)):
            continue
        return match.start(), match.group(1)
    return len(masked), ""
