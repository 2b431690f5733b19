"""The holes of a statement: the parts that differ between statements of one shape.

``blanks.shape_of`` finds them with a loop over the matches of one pattern; a statement's
*shape* is its text with each hole blanked (``blanks`` has the kinds of hole, the grammar's
pattern each takes and what it is blanked to). Which parts are holes, and why a shape's
parse is every one of its statements' parse, is argued in ``call_shapes``.

That loop is most of what a call of a known shape costs, so every shape seen twice gets
a *matcher* (``shape_matcher``): a group for each hole that takes what ``shape_of`` takes
for a hole of that kind, and between them a group for each literal piece of the
statement it was made from, taken by its length alone (``.{n}``). A short pattern, so
compiling it costs about a third of what spelling the pieces out does (0.35 ms against
0.9 ms for a 300-character call), and the shapes whose pieces have the same lengths and
holes the same kinds share it (``re`` keeps compiled patterns). A statement has the
shape when the matcher's ``fullmatch`` takes it and the pieces it captures are the
shape's; its holes are then the hole groups. Why exactly then, and with ``shape_of``'s
holes: let S be the statement the shape was made from and P another.

Each hole's group is atomic (``(?>...)``): it takes the longest text its kind's pattern
takes where it starts (each pattern is one greedy run, whose first match is its longest)
and gives none of it back. So ``fullmatch`` makes one attempt per hole and refuses a
statement in time linear in its length; a group that gave characters back would try
every split of a run of name characters among the holes before refusing it (hours for
ten holes). A match of the atomic pattern is a match of the same pattern without
atomic groups, which the second point below covers.

- If P has S's shape, ``shape_of`` finds in P holes of S's kinds with S's literal pieces
  between them, each hole the longest text its kind's pattern takes there (see below).
  Each hole's group takes that text, so the match has those holes and captures S's
  pieces.
- If a match captures S's pieces, P is S's literal text with a string of each kind's
  pattern in each hole: that is the match of a pattern spelling S's pieces out, which
  takes exactly the statements of S's shape, with ``shape_of``'s holes:

  - Every hole is preceded by the context its kind's alternative needs (``%``, ``loc(#``,
    ``stablehlo.custom_call @``, ``=`` and blanks), whose last character (``%#@=``,
    blank) is in no hole's alphabet; so no two holes touch, a run of name characters in
    literal text ends before any hole, and a hole ends where the literal text after it
    starts (that text starts with a character the hole's pattern cannot continue with:
    the hole was maximal in S, or its look-ahead asked for it; so each hole is the
    longest text its pattern takes there).
  - Where S's scan matched a string or a comment, the same text is in P (strings and
    comments hold no hole). Where it matched a hole, P has the same context and a hole of
    the same kind: the alternatives tried before it fail in P as in S (they start with
    other characters, or, for numbers, ask for a ``.``, a type or a ``,``/``}`` that the
    literal text after the hole decides).
  - Where S's scan matched nothing, no alternative matches in P either: an attempt reads
    literal text until it fails, because reaching a hole would take the hole's own
    context, and then S's scan would have matched there. The one alternative that may
    read past a hole, a string with no closing quote on its line, fails in P too: holes
    hold no quote, backslash or newline.

A shape whose matcher has taken many statements is spelled out (``spelled_matcher``: its
literal pieces escaped, an atomic group in each hole's place), which takes exactly the
statements of the shape by the second point above, without copying the pieces to compare
them.

``tests/test_call_shapes.py`` checks the claims on mutated call-dense exports;
``tests/test_grammar_terminals.py`` that each hole's pattern is its terminal's and holds
none of the context characters above, nor a quote, backslash or newline.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .blanks import HOLE_PATTERNS, Hole, shape_of
from .integers import digits_always_taken, negative_digits_always_taken, range_error

_INT_TYPE = re.compile(r"[ \t]*:[ \t]*([su]?i[0-9]+)")


def shape_matcher(piece: str, holes: Sequence[Hole]) -> re.Pattern[str]:
    """A pattern whose ``fullmatch`` takes the statements of ``piece``'s shape when the
    literal pieces it captures (groups 1, 3, ..., by their lengths) are ``piece``'s; hole k
    is group 2k + 2 (see the module docstring)."""
    parts: list[str] = []
    position = 0
    for start, end, kind in holes:
        parts.append(f"(.{{{start - position}}})((?>{HOLE_PATTERNS[kind]}))")
        position = end
    parts.append(f"(.{{{len(piece) - position}}})")
    return re.compile("".join(parts), re.DOTALL)


def spelled_matcher(piece: str, holes: Sequence[Hole]) -> re.Pattern[str]:
    """A pattern that spells ``piece``'s literal pieces out, hole k as group k + 1: its
    ``fullmatch`` takes exactly the statements of ``piece``'s shape (see the module
    docstring), and copies no piece."""
    parts: list[str] = []
    position = 0
    for start, end, kind in holes:
        parts.append(re.escape(piece[position:start]))
        parts.append(f"((?>{HOLE_PATTERNS[kind]}))")
        position = end
    parts.append(re.escape(piece[position:]))
    return re.compile("".join(parts))


def matcher_key(piece: str) -> str | bytes:
    """A cheap guess at a statement's shape, to find the matchers worth trying: the text
    between its attributes and its location (a call's types), or, with no attributes, the
    statement without its digits and location. A guess only: the matcher decides."""
    end = piece.rfind(" loc(")
    if end < 0:
        end = len(piece)
    brace = piece.rfind("}", 0, end)
    if brace >= 0:
        return piece[brace + 1 : end]
    # bytes.translate deletes at C speed (str.translate looks each character up)
    return piece[:end].encode("utf-8", "surrogatepass").translate(None, b"0123456789")


SPELLED_AFTER = 64  # statements a shape's matcher takes before the shape is spelled out
_MATCHERS_PER_GUESS = 8  # matchers tried for one guess before shape_of decides


@dataclass(eq=False)
class KnownShape:
    """A shape seen in a file: the statement it was first seen in, its matcher, made when a
    second statement is tried against the shape, and its spelled-out matcher, made once the
    matcher has taken SPELLED_AFTER statements. Spelled out, a statement takes about 2 us
    less, and compiling costs about a millisecond (a shape's text is long): so a shape
    costs at most about a millisecond more than the better choice for its number of
    statements."""

    key: str
    made_from: str
    holes: list[Hole]
    # (hole, its type, digits always taken without a sign and after a minus sign)
    int_holes: tuple[tuple[int, str, int, int], ...]
    matcher: re.Pattern[str] | None = None
    spelled: re.Pattern[str] | None = None
    found: int = 0  # statements the matcher took
    # The shape of the statement after the last statement of this shape (``ShapeFinder``)
    after: KnownShape | None = None

    def __post_init__(self) -> None:
        literals: list[str] = []
        position = 0
        for start, end, _ in self.holes:
            literals.append(self.made_from[position:start])
            position = end
        literals.append(self.made_from[position:])
        self.literals = tuple(literals)

    def match(self, piece: str) -> tuple[tuple[str, ...], Callable[[int], int]] | None:
        """The hole texts of ``piece`` and where hole k ends (``end_of(k + 1)``), if
        ``piece`` has this shape (see the module docstring); else None."""
        if self.spelled is not None:
            spelled = self.spelled.fullmatch(piece)
            return None if spelled is None else (spelled.groups(), spelled.end)
        if self.matcher is None:
            self.matcher = shape_matcher(self.made_from, self.holes)
        found = self.matcher.fullmatch(piece)
        if found is None:
            return None
        groups = found.groups()
        if groups[0::2] != self.literals:
            return None
        self.found += 1
        if self.found >= SPELLED_AFTER:
            self.spelled = spelled_matcher(self.made_from, self.holes)
        ends = found.end
        return groups[1::2], lambda group: ends(2 * group)

    def integers_taken(self, texts: Sequence[str]) -> bool:
        """Whether each integer hole of a statement (its ``texts``) is a value its type
        takes (``rewriter/syntax/integers.py``): the one value that decides more than its text."""
        for hole, type_, digits, negative_digits in self.int_holes:
            text = texts[hole]
            if len(text) <= digits and text.isdigit():
                continue
            if (
                text[:1] == "-"
                and 1 < len(text) <= negative_digits + 1
                and text[1] != "0"
                and text[1:].isdigit()
            ):
                continue
            if range_error(text, type_):
                return False
        return True


class ShapeFinder:
    """The shapes of one file's statements, by a known shape's matcher when one takes the
    statement (see the module docstring), else by ``shape_of``."""

    def __init__(self) -> None:
        self.shapes: dict[str, KnownShape] = {}
        self._by_guess: dict[str | bytes, list[KnownShape]] = {}
        self._last: KnownShape | None = None  # the shape of the last statement

    def find(self, piece: str) -> tuple[KnownShape, tuple[str, ...], Callable[[int], int]]:
        """The shape of ``piece``, its hole texts, and where hole k ends (``end_of(k + 1)``).

        Statements come in runs and cycles (an unrolled loop repeats one statement, or a
        few in turn): the shape that came after the last statement's shape the last time
        (``KnownShape.after``) is tried first. ``KnownShape.match`` takes exactly the
        statements of that shape, with ``shape_of``'s holes (see the module docstring), and
        a statement has one shape (``shape_of`` is a function of its text), so what it
        takes is what the guess and the shapes tried for it would find, without the guess
        (``matcher_key``, a slice of the statement, and the guess's list)."""
        last = self._last
        if last is not None:
            predicted = last.after
            if predicted is not None:
                spelled = predicted.spelled  # ``match``'s first step, without its call
                if spelled is not None:
                    found = spelled.fullmatch(piece)
                    if found is not None:
                        self._last = predicted
                        return predicted, found.groups(), found.end
                else:
                    matched = predicted.match(piece)
                    if matched is not None:
                        self._last = predicted
                        return predicted, matched[0], matched[1]
        known, texts, end_of = self._find(piece)
        if last is not None:
            last.after = known
        self._last = known
        return known, texts, end_of

    def _find(self, piece: str) -> tuple[KnownShape, tuple[str, ...], Callable[[int], int]]:
        guess = matcher_key(piece)
        tried = self._by_guess.get(guess)
        if tried is None:
            tried = self._by_guess[guess] = []
        for known in tried:
            matched = known.match(piece)
            if matched is not None:
                texts, end_of = matched
                return known, texts, end_of
        key, holes = shape_of(piece)
        if key in self.shapes:
            known = self.shapes[key]
        else:
            known = self.shapes[key] = KnownShape(key, piece, holes, _int_holes(piece, holes))
        if len(tried) < _MATCHERS_PER_GUESS and all(shape is not known for shape in tried):
            tried.append(known)
        texts = tuple([piece[start:end] for start, end, _ in holes])
        return known, texts, lambda group: holes[group - 1][1]


Found = tuple[KnownShape, tuple[str, ...], Callable[[int], int]]  # what ``find`` gives


@dataclass
class FoundShapes:
    """A ShapeFinder and what it found for the statements of one text, by where each
    starts: a later pass over the same text takes them instead of finding them again
    (``--validate``'s validation of the input, then the rewrite). A statement is the text
    from its line's start to its end, before the line break."""

    finder: ShapeFinder = field(default_factory=lambda: ShapeFinder())
    at: dict[int, Found] = field(default_factory=dict)


def _int_holes(piece: str, holes: list[Hole]) -> tuple[tuple[int, str, int, int], ...]:
    found = []
    for index, (_, end, kind) in enumerate(holes):
        if kind == "int":
            type_ = integer_type(piece, end)
            found.append(
                (index, type_, digits_always_taken(type_), negative_digits_always_taken(type_))
            )
    return tuple(found)


def integer_type(piece: str, end: int) -> str:
    """The type written after the integer hole that ends at ``end`` (its look-ahead
    guarantees one)."""
    typed = _INT_TYPE.match(piece, end)
    assert typed is not None
    return typed.group(1)
