"""The fast structural pass over a whole file, without building a tree for every op.

Strings and comments are squeezed out first (``compact.py``: megabytes of constants shrink
to ``""``); then C-speed regular expressions over the compact text find what the rewrite
needs: custom call sites, the symbols and SSA names already in use, and the modules whose
bodies receive extern declarations. Every offset kept or reported is mapped back to the
original text. Only the custom call statements themselves go to the lark parser.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import repeat

from .compact import Compact, compact
from .diagnostics import Diagnostic
from .model import CallForm
from .source import Source
from .strings import decode_string
from .terminals import RESULT_GROUP, STRING, SYMBOL_NAME, VALUE_NAME

# Patterns start with a literal so that the regex engine can skip ahead quickly; what may
# precede the match is checked by ``_starts_word``, or by a look-behind of fixed width after
# the literal (the same characters). A custom call's match ends where its `@target` starts.
_CUSTOM_CALL = re.compile(
    r"stablehlo\.custom_call(?<![\w$.%@#!^\-]stablehlo\.custom_call)(?![\w$.])[ \t]*"
)
_GENERIC_CUSTOM_CALL = '"stablehlo.custom_call"'
_GENERIC_MODULE = '"builtin.module"'
_MODULE = re.compile(r"module(?![\w$.\-])")
# SYMBOL in the compact text, where its quoted form's string is squeezed to `""`; then
# SYMBOL's own pattern reads the quoted one in the original text.
_SYMBOL = re.compile(f'@(?:{SYMBOL_NAME}|"")')
_QUOTED_SYMBOL = re.compile(f"@{STRING}")
# SSA names that do not start with a digit: the only ones a name the rewrite makes can be
# (plan/naming.py, ValueNamer), and a few in an export, where %0 ... %N are hundreds of
# thousands.
_VALUE = re.compile(f"%((?![0-9]){VALUE_NAME})")
# What LS_RESULTS takes before a statement's op, and the blanks after it.
_STATEMENT_PREFIX = re.compile(
    rf"[ \t]*(?:{RESULT_GROUP}(?:[ \t]*,[ \t]*{RESULT_GROUP})*[ \t]*=[ \t]*)?"
)
_INVALID_CHAR = re.compile(r"[^\t\n\r\x20-\x7e]")
_BRACKETS = b"(){}[]"
_VALID_NOT_BRACKETS = bytes(b for b in [9, 10, 13, *range(0x20, 0x7F)] if b not in _BRACKETS)
_CHUNK = 1 << 22  # characters encoded at a time: C-speed byte passes in bounded memory
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


@dataclass(slots=True)
class CallSite:
    keyword: int  # offset of `stablehlo.custom_call` or of the generic form's string
    statement: int  # offset of the line start holding the statement
    form: CallForm


@dataclass
class Scan:
    """What the rewrite needs of a file. The compact text it was found in is not kept:
    nothing after the scan reads it, and it is as large as the input."""

    calls: list[CallSite] = field(default_factory=list)
    modules: list[ModuleBody] = field(default_factory=list)
    symbols: set[str] = field(default_factory=set)
    values: set[str] = field(default_factory=set)  # SSA names not starting with a digit
    top_level_insert: int = 0  # where declarations go when the file has no `module` op
    top_level_indent: str = ""
    diagnostics: list[Diagnostic] = field(default_factory=list)
    closes: dict[int, int] = field(default_factory=dict, repr=False)  # `{` -> `}`, compact

    def module_of(self, offset: int) -> int:
        """Index of the innermost module body holding ``offset``, or -1."""
        if len(self.modules) == 1:  # an export: one module
            body = self.modules[0]
            return 0 if body.open < offset < body.close else -1
        best = -1
        for index, body in enumerate(self.modules):
            if body.open < offset < body.close:
                if best == -1 or body.open > self.modules[best].open:
                    best = index
        return best


def scan(source: Source) -> Scan:
    """Find everything the rewrite needs, and the errors that make a file unusable."""
    text = source.text
    squeezed = compact(text, frozenset({_GENERIC_CUSTOM_CALL, _GENERIC_MODULE}))
    masked = squeezed.text
    result = Scan()
    if not text or text.isspace():
        result.diagnostics.append(Diagnostic.at(source, 0, "empty input: expected an MLIR module"))
        return result
    # The brackets and any invalid character, in order: one pass at C speed for both checks.
    skeleton = _without(masked, _VALID_NOT_BRACKETS) if masked.isascii() else None
    _check_characters(source, squeezed, result, skeleton)
    if not result.diagnostics:
        assert skeleton is not None  # no diagnostic: the text is ASCII
        _check_brackets(source, squeezed, result, skeleton)
        if not result.diagnostics:
            _check_top_level(source, masked, result, skeleton.translate(None, b"()[]"))
    if result.diagnostics:
        return result

    result.values = set(_VALUE.findall(masked))
    matches = [match.span() for match in _CUSTOM_CALL.finditer(masked)]
    keywords = squeezed.originals([start for start, _ in matches])
    line_start = text.rfind
    statements = [line_start("\n", 0, keyword) + 1 for keyword in keywords]
    result.calls = list(map(CallSite, keywords, statements, repeat(CallForm.PRETTY)))
    generic_modules = []
    pretty_calls = len(result.calls)
    for compact_offset, offset, token in squeezed.strings:
        if token == _GENERIC_CUSTOM_CALL:
            result.calls.append(CallSite(offset, source.line_start(offset), CallForm.GENERIC))
        elif token == _GENERIC_MODULE:
            generic_modules.append(compact_offset)
        else:  # generic form: `sym_name = "f"` defines the symbol @f
            result.symbols.add(decode_string(token).decode("utf-8", "replace"))
    if len(result.calls) > pretty_calls:  # the pretty ones ascend already (``finditer``)
        result.calls.sort(key=lambda call: call.keyword)
    targets = {target for _, target in matches}
    for match in _SYMBOL.finditer(masked):
        if match.start() in targets:
            continue
        if match.group() == '@""':
            quoted = _QUOTED_SYMBOL.match(text, squeezed.original(match.start()))
            if quoted:
                result.symbols.add(_decode_symbol(quoted.group()))
            continue
        result.symbols.add(match.group()[1:])
    # Each pretty call's prefix checked at C speed; the loop finds the calls out of place.
    prefixed = map(_STATEMENT_PREFIX.fullmatch, repeat(text), statements, keywords)
    checked = all(prefixed) and len(result.calls) == pretty_calls
    for call in [] if checked else result.calls:
        if not _STATEMENT_PREFIX.fullmatch(text, call.statement, call.keyword):
            result.diagnostics.append(
                Diagnostic.at(
                    source,
                    call.keyword,
                    "a custom call must start its own line (with only its results before it)",
                )
            )
    _find_modules(source, squeezed, result, generic_modules)
    return result


_WORD_CHARACTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$.%@#!^-"


def _starts_word(masked: str, offset: int) -> bool:
    """Whether an identifier may start at ``offset`` (it does not continue another token)."""
    return offset == 0 or masked[offset - 1] not in _WORD_CHARACTERS


def _decode_symbol(quoted: str) -> str:
    return decode_string(quoted[1:]).decode("utf-8", "replace")


_LONE_QUOTE = re.compile(r'"(?!")|(?<!")"')


def _check_characters(
    source: Source, squeezed: Compact, result: Scan, skeleton: bytes | None
) -> None:
    """``skeleton``: the ASCII text with its valid bytes but brackets deleted, or None for
    text that is not ASCII. Deleting the brackets too leaves nothing in a clean file; only
    a file with something else left is searched for where."""
    masked = squeezed.text
    clean = skeleton is not None and not skeleton.translate(None, _BRACKETS)
    bad = None if clean else _INVALID_CHAR.search(masked)
    if bad:
        char = bad.group()
        shown = "NUL byte" if char == "\0" else f"character {char!r} (U+{ord(char):04X})"
        message = f"unexpected {shown}: not valid MLIR syntax"
        if char == "\ufeff":
            message = (
                "unexpected byte order mark (U+FEFF): MLIR's parser rejects it; "
                "save the file as UTF-8 without one"
            )
        result.diagnostics.append(Diagnostic.at(source, squeezed.original(bad.start()), message))
        return
    # Every complete string is now `""`; any other quote opens a string that never ends.
    # The squeeze saw every quote (``Compact.lone_quotes``): with none left over, counting
    # them (two passes over the text) would find as many as the strings' `""` hold.
    if not squeezed.lone_quotes or masked.count('"') == 2 * masked.count('""'):
        return
    for quote in _LONE_QUOTE.finditer(masked.replace('""', "  ")):
        offset = squeezed.original(quote.start())
        message = "unterminated string: expected '\"' before the end of the line"
        result.diagnostics.append(Diagnostic.at(source, offset, message))
        return


def _check_brackets(source: Source, squeezed: Compact, result: Scan, skeleton: bytes) -> None:
    """``skeleton``: the text's brackets in order (its valid characters checked)."""
    masked = squeezed.text

    def at(offset: int, message: str) -> Diagnostic:
        return Diagnostic.at(source, squeezed.original(offset), message)

    if _pairs_vanish(skeleton):
        return
    stack: list[int] = []
    for match in _BRACKET.finditer(masked):
        char = match.group()
        if char in "({[":
            stack.append(match.start())
        elif not stack:
            result.diagnostics.append(at(match.start(), f"unbalanced {char!r}: nothing to close"))
            return
        elif masked[stack[-1]] != _CLOSING[char]:
            if _balanced_without(masked, match.start(), stack):
                expected = _partner(masked[stack[-1]])
                message = f"unbalanced {char!r}: it closes nothing (expected {expected!r})"
                result.diagnostics.append(at(match.start(), message))
                return
            # Otherwise the innermost open bracket is the mistake: it was never closed.
            opener = stack[-1]
            line, column = source.line_col(squeezed.original(match.start()))
            message = (
                f"{masked[opener]!r} is never closed: expected {_partner(masked[opener])!r} "
                f"before the {char!r} at {line}:{column}"
            )
            result.diagnostics.append(at(opener, message))
            return
        else:
            stack.pop()
    if stack:
        opener = stack[-1]
        message = f"{masked[opener]!r} is never closed: the input ends first (truncated file?)"
        result.diagnostics.append(at(opener, message))


_TOP_LEVEL_LINE = re.compile(
    r"^[ \t]*(?=[^ \t\r\n])(?![#!%\"{}]|(?:builtin\.)?module(?![\w$.])|[A-Za-z_][\w$]*\.[\w$.]+)",
    re.MULTILINE,
)


def _check_top_level(source: Source, masked: str, result: Scan, braces: bytes) -> None:
    """Every top-level line must start an op, an alias definition or file metadata.

    Bracketed content is skipped, so this costs one pass over the brackets; it catches
    text that is not MLIR at all, which the bracket checks cannot. ``braces``: the text's
    braces in order (they nest).
    """
    pieces: list[str] = []
    position = 0
    last_close = masked.rfind("}")
    tried_last = False
    while True:
        open_ = masked.find("{", position)
        if open_ == -1:
            break
        close = -1
        if not tried_last and masked.find("{", open_ + 1, masked.find("}", open_)) != -1:
            # The first group that holds a group: in an export, the module body, which
            # holds everything and ends at the file's last `}`. Tried once, for linear time.
            tried_last = True
            before = masked.count("{", 0, open_) + masked.count("}", 0, open_)
            if _pairs_vanish(braces[before + 1 : -1]):  # those between it and the last
                close = result.closes[open_] = last_close
        if close == -1:
            close = _match_close(masked, open_, result.closes)
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


def _without(text: str, deleted: bytes) -> bytes:
    """``text`` (ASCII) as bytes, ``deleted`` deleted: at C speed, a few megabytes at a
    time."""
    return b"".join(chunk.translate(None, deleted) for chunk in _ascii_chunks(text))


def _pairs_vanish(skeleton: bytes) -> bool:
    """Whether the brackets ``skeleton`` holds (and nothing else) nest properly; strips
    innermost pairs at C speed."""
    if any(skeleton.count(o) != skeleton.count(c) for o, c in (b"()", b"[]", b"{}")):
        return False
    # Deleting an adjacent pair `()`, `[]` or `{}` keeps brackets nested exactly when they
    # were, so any order of deletions decides; bytes.replace deletes at memchr speed.
    for _ in range(64):  # deeper nesting is left to the (linear) stack pass
        if not skeleton:
            return True
        shorter = skeleton.replace(b"()", b"").replace(b"[]", b"").replace(b"{}", b"")
        if len(shorter) == len(skeleton):
            return False
        skeleton = shorter
    return False


def _ascii_chunks(text: str) -> Iterator[bytes]:
    """``text`` (ASCII) as bytes, a few megabytes at a time."""
    for start in range(0, len(text), _CHUNK):
        yield text[start : start + _CHUNK].encode("ascii")


def _match_close(masked: str, open_offset: int, closes: dict[int, int] | None = None) -> int:
    """The `}` closing the `{` at ``open_offset`` (brackets are known to nest properly, so
    braces alone decide). ``closes`` remembers answers: module bodies are asked for twice.

    The next `{` and the next `}` are each found with ``str.find`` (memchr speed; a
    regular expression looking for either checks every character) and kept until passed."""
    if closes is not None and open_offset in closes:
        return closes[open_offset]
    depth = 0
    close = len(masked)
    next_open = masked.find("{", open_offset)
    next_close = masked.find("}", open_offset)
    while next_close != -1:
        if next_open != -1 and next_open < next_close:
            depth += 1
            next_open = masked.find("{", next_open + 1)
            continue
        depth -= 1
        if depth == 0:
            close = next_close
            break
        next_close = masked.find("}", next_close + 1)
    if closes is not None:
        closes[open_offset] = close
    return close


_MODULE_HEADER = re.compile(rf'[ \t\r\n]*(?:@{SYMBOL_NAME}|@"")?[ \t\r\n]*')  # as _SYMBOL


_GENERIC_MODULE_OPERANDS = re.compile(r"[ \t]*\([ \t]*\)[ \t]*")
_GENERIC_REGION_START = re.compile(r"[ \t\r\n]*\([ \t\r\n]*\{")


def _generic_module_body(masked: str, keyword: int) -> int:
    """Offset of the body `{` of ``"builtin.module"() <{...}> ({``, or -1."""
    operands = _GENERIC_MODULE_OPERANDS.match(masked, keyword + len('""'))  # squeezed name
    if not operands:
        return -1
    position = operands.end()
    if masked.startswith("<", position):
        properties = masked.find("{", position)
        position = _match_close(masked, properties) + 1
        position = masked.find(">", position) + 1
    region = _GENERIC_REGION_START.match(masked, position)
    return region.end() - 1 if region else -1


def _module_keywords(masked: str) -> Iterator[re.Match[str]]:
    """``_MODULE.finditer(masked)``, each occurrence of the word found by ``str.find``
    (skipping ahead at C speed; the regex engine checks every character, about 1.3M
    instructions for a 260 KB export) and matched where it is. The matches are the same:
    ``module`` does not overlap itself (no proper prefix of it is a suffix), so
    ``finditer``'s matches, all of that text, start at occurrences of it, and it matches
    at each occurrence that its look-ahead allows."""
    position = masked.find("module")
    while position != -1:
        match = _MODULE.match(masked, position)
        if match:
            yield match
        position = masked.find("module", position + len("module"))


def _find_modules(
    source: Source, squeezed: Compact, result: Scan, generic_modules: list[int]
) -> None:
    """Module bodies, found in the compact text, recorded with original offsets."""
    masked = squeezed.text
    found: list[tuple[int, int, int]] = []  # compact (keyword, open, close)
    for keyword in generic_modules:
        open_ = _generic_module_body(masked, keyword)
        statement = masked.rfind("\n", 0, keyword) + 1
        if open_ != -1 and _STATEMENT_PREFIX.fullmatch(masked[statement:keyword]):
            found.append((keyword, open_, _match_close(masked, open_, result.closes)))
    for match in _module_keywords(masked):
        keyword = match.start()
        if masked.endswith("builtin.", 0, keyword):
            keyword -= len("builtin.")
        if not _starts_word(masked, keyword):
            continue
        statement = masked.rfind("\n", 0, keyword) + 1
        if not _STATEMENT_PREFIX.fullmatch(masked[statement:keyword]):
            continue  # the word `module` used some other way
        header = _MODULE_HEADER.match(masked, match.end())
        assert header is not None  # the pattern matches the empty string
        position = header.end()
        if masked.startswith("attributes", position):
            position = masked.find("{", position)
            position = _match_close(masked, position) + 1
            while position < len(masked) and masked[position] in " \t\r\n":
                position += 1
        if position >= len(masked) or masked[position] != "{":
            continue
        found.append((keyword, position, _match_close(masked, position, result.closes)))
    for keyword, open_, close in found:
        result.modules.append(_module_body(masked, squeezed, keyword, open_, close))
    if not result.modules:
        offset, indent = _first_top_level_op(masked)
        result.top_level_insert = squeezed.original(offset)
        result.top_level_indent = indent


def _module_body(
    masked: str, squeezed: Compact, keyword: int, open_: int, close: int
) -> ModuleBody:
    """Where declarations go: before the first op of the body (comments are not ops)."""
    original = squeezed.original
    first = open_ + 1
    while first < close and masked[first] in " \t\r\n":
        first += 1
    line_start = masked.rfind("\n", 0, first) + 1
    if line_start <= open_:
        # Body content (or the closing brace) is on the `{` line itself.
        keyword_line = masked.rfind("\n", 0, keyword) + 1
        leading = re.match(r"[ \t]*", masked[keyword_line:])
        assert leading is not None  # the pattern matches the empty string
        indent = leading.group() + "  "
        return ModuleBody(
            original(keyword),
            original(open_),
            original(close),
            original(open_) + 1,
            indent,
            needs_newline=True,
        )
    indent = masked[line_start:first]
    if first == close:
        indent += "  "
    return ModuleBody(
        original(keyword), original(open_), original(close), original(line_start), indent
    )


def _first_top_level_op(masked: str) -> tuple[int, str]:
    for match in re.finditer(r"^([ \t]*)(\S)", masked, re.MULTILINE):
        if match.group(2) in "#!" or masked.startswith("{-#", match.start(2)):
            continue
        return match.start(), match.group(1)
    return len(masked), ""
