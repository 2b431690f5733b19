"""The full validating parse: every line of a module through the grammar, each line shape once.

A whole-module lark parse costs about 10 us per token (900k tokens in a 51k-op export),
but an export repeats a few hundred line shapes that differ only in their SSA names. So
the module goes through lark's LALR table and contextual lexer one line at a time, and
the outcome of a line (the parser's state stack after it) is remembered by the state
stack before it and the line's shape; a line seen before in the same state is not lexed
again. No tree is built: a validation needs the states only.

Why a remembered outcome is the outcome the line itself would have:

1. No token spans a line break (no terminal matches a newline but the whitespace token
   that is just one), so lexing each line as a slice of the text, its newline included,
   gives the tokens of lexing the whole text. The slice is a window on the whole text,
   so look-behind (line-start terminals) sees the real text before it, and it ends after
   the newline, beyond which no look-ahead reaches.
2. The contextual lexer picks its terminals by the parser's state, and the parser reads
   only token types. So what a line does is fixed by the state stack before it and the
   token types it lexes to.
3. to 7. A line's *shape* is its text with its names, location aliases, symbols, splat
   numbers, constant values and strings blanked, and a coarser key its dimensions too
   (``blanks.blanked_line``, ``blanks.blanked_dimensions``): ``blanks`` argues, point by
   point, that a line's shape lexes to the token types the line does.

``LineShapes`` remembers a line's shape (``blanked_line``) by the line with its names
blanked (``%_``), which decides it. ``blanked_line`` blanks strings before names, but a
name's body holds no quote, backslash, ``/`` or line break, so blanking the names first
leaves every string and comment where it was (the names in a string go with it either
way); ``%_`` is blanked to itself; and in a line that is no alias definition, every step
after the strings' reads the text with its names blanked. So the steps read the same text
either way. Two kinds of line are not remembered so: an alias definition (a line that
starts with ``#``, as its key does), whose ``array<`` test reads the text before its names
are blanked and which an export holds once each; and a custom call line, shaped by its
statement as above (a name may hold ``custom_call``, so that test reads the line itself,
not its key). The other lines of an export differ mostly in their names: most are shaped
once.

A line new from its stack may have been lexed from another stack with the same top
states. An LR parser's step reads the state on top of its stack: the action, and the
contextual lexer's terminals, by the top state; a reduction pops states and reads the
state it exposes. So a line's parse from stack S that lowered the stack to ``h`` states
at the least read S's states from the ``h``-th up alone, and from any stack whose top
states are those it pushes the same states on the same base. Each line lexed is
remembered so too (by its key and S's top state: the depth it reached, the states it
read, the states it pushed), and a line new from its stack is looked up there before it
is lexed: the rewrite's lines in a function after the externs it declares, whose stacks
differ from the input's at the bottom alone, are not lexed again.

A validation may start from what another one remembered (``Remembered``): an outcome is
fixed by the stack before the line and its shape, in any text (a line's line-start
terminals see a line break or the text's start before it, whatever the text). It starts
from a copy, and only of a text that validated: there every line lexed passed the range
check below, while a validation that fails on an integer remembers later lines unchecked.
The validation of a rewrite starts from its input's (``rewrite_validation``).

Only successful outcomes are remembered: a line that fails was parsed for real and
reports its own place. Lines go in file order, so the first error is the one a
whole-module parse reports, at the same offset and with the same message
(tests/test_validation.py compares the two on mutated exports).

Integer literals out of range for their type (``300 : i8``) parse, but MLIR rejects them:
they are checked on the tokens of each line lexed, and the first is reported when the text
parses. A line's shape keeps its numbers, but for a custom call's typed integer attributes,
which it blanks only when they are in range (a line with one out of range is its own
key), and a constant's integer that every type it may have takes (``blanks``, point 5); so a
remembered line is one already checked.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from lark import Token
from lark.exceptions import UnexpectedCharacters, UnexpectedToken
from lark.lexer import Lexer, LexerState, LineCounter
from lark.parsers.lalr_analysis import Shift
from lark.utils import TextSlice

from .blanks import VALUE_NAMES, blanked_dimensions, blanked_line
from .diagnostics import Diagnostic
from .empty_names import first_empty_attribute_name
from .grammar import parser
from .holes import FoundShapes, ShapeFinder
from .integers import integer_type_width, range_error
from .line_lexer import LineLexer, NoTerminal
from .source import Source

START = "module_file"
# Longer lines (a blob of weights) are unique: parsed at once, never hashed or remembered.
LONG_LINE = 10_000
_REMEMBERED_LINES = 1 << 14  # lines' shapes a validation keeps by their keys, at most
Stack = tuple[int, ...]
# Line shape -> (the stack after the line, the outcomes remembered from that stack).
_Outcomes = dict[str, "tuple[Stack, _Outcomes]"]
# A line's parse from the top of a stack: how far below its start the stack went, the
# states it read from there up, and the states it pushed on what it left.
_FromTop = tuple[int, Stack, Stack]


@dataclass
class Remembered:
    """What a validation remembered: the outcomes by the stack before a line and its
    shape, and the parses of the lines it lexed by their key and the state on top."""

    outcomes: dict[Stack, _Outcomes] = field(default_factory=dict)
    from_top: dict[tuple[str, int], list[_FromTop]] = field(default_factory=dict)

    def copy(self) -> Remembered:
        """A copy, whose outcomes lead into the copy, and which a validation adds to
        without changing this one."""
        outcomes = {stack: known.copy() for stack, known in self.outcomes.items()}
        for known in outcomes.values():
            for shape, (after, _) in known.items():
                known[shape] = (after, outcomes[after])
        from_top = {key: parses.copy() for key, parses in self.from_top.items()}
        return Remembered(outcomes, from_top)


class Unexpected(Exception):
    """Where the parse stopped and why, before it becomes a Diagnostic."""

    def __init__(self, offset: int, message: str):
        super().__init__(message)
        self.offset = offset
        self.message = message


def _position(token: Token) -> int:
    """A token's offset: lark types it as optional, but every token lexed or fed here has one."""
    assert token.start_pos is not None
    return token.start_pos


@dataclass(frozen=True)
class _Tables:
    """What lark built from the grammar: the LALR table and the contextual lexer, and the
    contextual lexer as ``LineLexer`` runs it (its alternations made once per process)."""

    actions: dict[int, dict[str, tuple]]
    start_state: int
    end_state: int
    lexer: Lexer
    line_lexer: LineLexer


@functools.cache
def _tables() -> _Tables:
    interactive = parser().parse_interactive(start=START)
    conf = interactive.parser_state.parse_conf
    lexer = interactive.lexer_thread.lexer
    return _Tables(conf.states, conf.start_state, conf.end_state, lexer, LineLexer(lexer))


class IntegerLiterals:
    """Integer literals checked against their type as the tokens of a line go by:
    ``300 : i8`` (as an attribute or in any op's tokens), an untyped ``{n = 5}`` (i64) and
    the elements of ``array<i8: 1, 300>``. The first literal MLIR would reject is kept
    (``rewriter/syntax/integers.py``)."""

    def __init__(self) -> None:
        self.first: tuple[int, str] | None = None
        self.new_line()

    def new_line(self) -> None:
        self.before: tuple[Token | None, Token | None] = (None, None)
        self.array_type: str | None = None  # after `array<T:` until `>`
        self.array_head: str | None = None  # after `array<T`

    def see(self, token: Token) -> None:
        older, last = self.before
        self.before = (last, token)
        if self.first is not None:
            return
        kind = token.type
        if kind in ("INT", "HEX"):
            if self.array_type:
                self._check(token, self.array_type)
            return
        if kind in ("COMMA", "RBRACE") and last is not None and older is not None:
            if last.type in ("INT", "HEX") and older.type == "EQUAL":  # `{n = 5}`: an i64
                self._check(last, "i64")
        if kind == "MORETHAN":
            self.array_type = self.array_head = None
        elif kind == "COLON":
            self.array_type, self.array_head = self.array_head, None
        elif kind in ("SCALAR_TYPE", "BARE_ID") and integer_type_width(token.value):
            if last is not None and last.type == "COLON" and older is not None:
                if older.type in ("INT", "HEX"):
                    self._check(older, token.value)
            elif last is not None and last.type == "LESSTHAN" and older is not None:
                if older.type == "ARRAY":
                    self.array_head = token.value

    def _check(self, literal: Token, type_: str) -> None:
        problem = range_error(literal.value, type_)
        if problem:
            self.first = (literal.start_pos or 0, problem)  # lexed tokens have a place


class _Parser:
    """The LALR automaton on the state stack alone: one per validation."""

    def __init__(self, tables: _Tables):
        self.tables = tables
        self.stack: list[int] = []
        self.lowest = 0  # the least height of the stack in the last run
        self.integers = IntegerLiterals()

    @property
    def position(self) -> int:
        """The current state: the contextual lexer asks for it to choose its terminals."""
        return self.stack[-1]

    def run(self, text: str, start: int, end: int, stack: Stack) -> Stack:
        """The stack after lexing and parsing ``text[start:end]`` from ``stack``: by
        ``_run_fast``, and when that meets a character the state's terminals do not take,
        again by lark's lexer, which says what is wrong as it always has."""
        first = self.integers.first
        try:
            return self._run_fast(text, start, end, stack)
        except NoTerminal:
            self.integers.first = first
            return self._run_lark(text, start, end, stack)

    def _begin_line(self, stack: Stack) -> None:
        self.stack = list(stack)
        self.lowest = len(stack)
        self.integers.new_line()

    def _run_fast(self, text: str, start: int, end: int, stack: Stack) -> Stack:
        """``run`` by ``LineLexer``, which lexes as lark's contextual lexer does."""
        self._begin_line(stack)
        self.tables.line_lexer.lex(text, start, end, self.stack, self.integers.see, self.feed)
        return tuple(self.stack)

    def _run_lark(self, text: str, start: int, end: int, stack: Stack) -> Stack:
        """``run`` by lark's own lexer."""
        counter = LineCounter("\n")  # lark's line numbers go unused: Source has the real ones
        counter.char_pos = counter.line_start_pos = start
        window = LexerState(TextSlice(text, start, end), counter)
        self._begin_line(stack)
        try:
            for token in self.tables.lexer.lex(window, self):
                self.integers.see(token)
                self.feed(token)
        except UnexpectedToken as error:  # the contextual lexer found a token out of place
            raise Unexpected(_position(error.token), f"unexpected {str(error.token)!r}") from None
        except UnexpectedCharacters as error:
            offset = error.pos_in_stream
            assert offset is not None  # the lexer always says where it stopped
            raise Unexpected(offset, f"unexpected character {text[offset]!r}") from None
        return tuple(self.stack)

    def finish(self, stack: Stack, end: int) -> None:
        """Accept the end of the input after ``stack``, or raise."""
        self.stack = list(stack)
        self.feed(Token("$END", "", end))

    def feed(self, token: Token) -> None:
        """Reduce as the table says, then shift ``token`` (or, for ``$END``, accept)."""
        stack, actions = self.stack, self.tables.actions
        while True:
            try:
                action, target = actions[stack[-1]][token.type]
            except KeyError:
                if token.type == "$END":
                    raise Unexpected(_position(token), "unexpected end of input") from None
                raise Unexpected(_position(token), f"unexpected {str(token)!r}") from None
            if action is Shift:
                stack.append(target)
                return
            del stack[len(stack) - len(target.expansion) :]
            if len(stack) < self.lowest:
                self.lowest = len(stack)
            stack.append(actions[stack[-1]][target.origin.name][1])
            if token.type == "$END" and stack[-1] == self.tables.end_state:
                return


class LineShapes:
    """The shapes of one validation's lines (``blanks``, points 3 to 6).

    A custom call line has its statement's shape (``blanks.shape_of``, found by a
    ShapeFinder, of the line before its line break) and its line break: which is the
    shape of the whole line, since a line break ends every match of ``shape_of`` as the
    end of the text does (no pattern takes one, and every look-ahead that reaches it fails
    on it, as on the end). The statement is what the rewrite finds the shape of, so a
    validation can keep it for the rewrite (``holes.FoundShapes``). Another line has its
    names, location aliases, symbols, splat numbers, constant value and strings blanked
    (``blanked_line``), remembered by the line with its names blanked, which decides it
    (the module argues why)."""

    def __init__(self, found: FoundShapes | None = None) -> None:
        self.calls = ShapeFinder() if found is None else found.finder
        self.found_at = None if found is None else found.at  # the statements' shapes kept
        self.lines: dict[str, str] = {}

    def of(self, line: str, offset: int = -1) -> str:
        """The shape of ``line``, which starts at ``offset`` of its text when that is
        given: a statement's shape is then kept in ``found`` by where it starts."""
        if "custom_call" in line:
            # Its shape is its statement's (the line up to its line break, where no hole
            # can reach) and the line break.
            end = len(line) - 1 if line[-1:] == "\n" else len(line)
            found = self.calls.find(line[:end])
            known, texts, _ = found
            if self.found_at is not None and offset >= 0:
                self.found_at[offset] = found
            # The range check reads integers: a line with one its type rejects is its own key.
            if not known.integers_taken(texts):
                return line
            return f"{known.key}{line[end:]}"
        if line[:1] == "#":  # an alias definition
            return blanked_line(line)
        key = VALUE_NAMES.sub("%_", line) if "%" in line else line  # decides the shape
        shape = self.lines.get(key)
        if shape is None:
            shape = blanked_line(key)
            if len(self.lines) < _REMEMBERED_LINES:
                self.lines[key] = shape
        return shape


class Validation:
    """One validation of ``text``, line by line (points 1 and 2): the parser's state stack,
    and the outcomes remembered from each stack by line shape. A line's lookup hashes its
    shape alone; a stack is hashed only when a line is lexed.

    ``trace``, when given, receives the shape of each line (None for a line too long to
    remember), each distinct shape one string: what a validation of a rewrite of the
    text reuses for the lines the rewrite left alone (``rewrite_validation.py``).
    ``found``, when given, receives the shapes of the custom call statements, by where
    each starts, for a rewrite of the text to take. ``remembered``: the outcomes to start
    from (a copy of another validation's, of a text that validated), which this one adds
    to."""

    def __init__(
        self,
        text: str,
        trace: list[str | None] | None = None,
        found: FoundShapes | None = None,
        remembered: Remembered | None = None,
    ):
        self.text = text
        tables = _tables()
        self.parse = _Parser(tables)
        self.stack: Stack = (tables.start_state,)
        self.remembered = Remembered() if remembered is None else remembered
        self.outcomes = self.remembered.outcomes
        self.known = self.outcomes.setdefault(self.stack, {})
        self.line_shapes = LineShapes(found)
        self.trace = trace
        self.distinct: dict[str, str] = {}  # each shape traced, as the one string traced

    def lines(
        self, start: int, end: int, traced: Sequence[str | None] | None = None, first: int = 0
    ) -> None:
        """Parse the lines of ``text[start:end]``, ``start`` a line start and ``end`` one
        or the end of the text; raises Unexpected where a line leaves the grammar.
        ``traced``: from index ``first`` on, the lines' shapes as a validation of the same
        lines traced them, so that they are not made again."""
        text, parse, outcomes = self.text, self.parse, self.outcomes
        stack, known = self.stack, self.known
        shape_of, find = self.line_shapes.of, text.find  # per line: kept at hand
        record = None if self.trace is None else self.trace.append
        distinct = self.distinct.setdefault
        shape: str | None
        while start < end:
            line_end = find("\n", start, end) + 1 or end
            if traced is not None:
                shape = traced[first]
                first += 1
            elif line_end - start > LONG_LINE:
                shape = None
            else:
                shape = shape_of(text[start:line_end], start)
            if record is not None:
                record(shape if shape is None else distinct(shape, shape))
            if shape is None:  # a long line: parsed at once, never remembered
                stack = parse.run(text, start, line_end, stack)
                known = outcomes.setdefault(stack, {})
            else:
                after = known.get(shape)
                if after is None:
                    coarser = blanked_dimensions(shape)  # blanks' point 7
                    after = known.get(coarser)
                    if after is None:
                        stack = self._parsed(start, line_end, stack, coarser)
                        after = known[coarser] = (stack, outcomes.setdefault(stack, {}))
                    known[shape] = after
                stack, known = after
            start = line_end
        self.stack, self.known = stack, known

    def _parsed(self, start: int, end: int, stack: Stack, key: str) -> Stack:
        """The stack after the line ``text[start:end]`` of ``key`` from ``stack``: by a
        parse of a line of that key from a stack with the same top states, else lexed."""
        parses = self.remembered.from_top.setdefault((key, stack[-1]), [])
        for depth, read, pushed in parses:
            if stack[-depth - 1 :] == read:
                return stack[: len(stack) - depth] + pushed
        after = self.parse.run(self.text, start, end, stack)
        lowest = self.parse.lowest
        assert lowest > 0  # only the end of the input reduces the whole stack
        parses.append((len(stack) - lowest, stack[lowest - 1 :], after[lowest:]))
        return after

    def finish(self) -> None:
        """Accept the end of the text, and raise for an integer literal out of range."""
        self.parse.finish(self.stack, len(self.text))
        if self.parse.integers.first is not None:  # it parses, but MLIR rejects this literal
            raise Unexpected(*self.parse.integers.first)


def first_error(
    source: Source,
    trace: list[str | None] | None = None,
    found: FoundShapes | None = None,
    remembered: Remembered | None = None,
) -> Diagnostic | None:
    """The first place where ``source`` leaves the grammar, or None if all of it parses.
    ``trace`` receives the shape of each line, ``found`` its custom call statements'
    shapes, ``remembered`` the outcomes (``Validation``)."""
    validation = Validation(source.text, trace, found, remembered)

    def parse() -> None:
        validation.lines(0, len(source.text))
        validation.finish()

    return first_diagnostic(source, parse)


def first_diagnostic(source: Source, parse: Callable[[], None]) -> Diagnostic | None:
    """The first of what ``parse`` raises (``Unexpected``) and an empty attribute name of
    ``source`` (``empty_names``), as a Diagnostic; None when there is neither."""
    empty_name = first_empty_attribute_name(source.text)
    try:
        parse()
    except Unexpected as error:
        if empty_name is None or error.offset < empty_name:
            return Diagnostic.at(source, error.offset, error.message)
    if empty_name is not None:
        return Diagnostic.at(source, empty_name, "an attribute name cannot be empty")
    return None
