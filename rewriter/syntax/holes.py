"""The holes of a statement: the parts that differ between statements of one shape.

``shape_of`` finds them with a loop over the matches of one pattern (``_HOLES``); a
statement's *shape* is its text with each hole blanked. Which parts are holes, and why a
shape's parse is every one of its statements' parse, is argued in ``call_shapes``.

That loop is most of what a call of a known shape costs, so every shape also gets a
*matcher* (``shape_matcher``): the literal text of the statement it was made from, escaped,
with a group in each hole's place that takes what ``shape_of`` takes for a hole of that
kind. One C-speed ``fullmatch`` then finds a statement's holes. It finds them exactly
where ``shape_of`` would, with the same shape: let S be the statement a matcher was made
from and P one it matches. They agree outside the holes, and each hole of P is a string
of its kind's pattern. ``shape_of``'s scan takes the same steps on both:

- Every hole is preceded by the context its kind's alternative needs (``%``, ``loc(#``,
  ``stablehlo.custom_call @``, ``=`` and blanks), whose
  last character (``%#@=``, blank) is in no hole's alphabet; so no two holes touch, a run
  of name characters in literal text ends before any hole, and a hole ends where the
  literal text after it starts (that text starts with a character the hole's pattern
  cannot continue with: the hole was maximal in S, or its look-ahead asked for it).
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

A shape seen fewer times than a matcher is worth compiling is *walked* instead
(``KnownShape.walk``): each literal piece compared with ``startswith``, each hole taken by
its kind's pattern alone, at the place the piece before it ends. A walk takes what the
matcher takes, with the same groups: a hole's pattern, where the matcher could let a hole
end sooner, would leave a character its pattern can continue with (a name character, a
digit, ``.``, ``e``), and the literal text after the hole starts with one it cannot take
(the first point above); so the matcher's only choice for each hole is the longest one,
which is what a greedy match of the pattern alone gives.

``tests/test_call_shapes.py`` checks the claims on mutated call-dense exports.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .compact import STRING
from .integers import digits_always_taken, negative_digits_always_taken, range_error

FLOAT = r"[-+]?[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?"  # the grammar's FLOAT terminal
_INT = r"[-+]?[0-9]+"  # the grammar's INT terminal
_SYMBOL_NAME = r"[A-Za-z_$.\-][\w$.\-]*"
# What each kind of hole takes: one pattern for shape_of and the matchers alike.
HOLE_PATTERNS = {
    "name": r"[A-Za-z0-9_$.\-]+",
    "alias": _SYMBOL_NAME,
    "target": _SYMBOL_NAME,
    "float": FLOAT,
    "int": _INT,
    "bool": "true|false",
}
FLOAT_TYPE = r"(?=[ \t]*:[ \t]*f(?:32|64)(?![\w$.]))"


_HOLE_MATCHERS = {kind: re.compile(pattern) for kind, pattern in HOLE_PATTERNS.items()}


def _hole(kind: str) -> str:
    return f"(?P<{kind}>{HOLE_PATTERNS[kind]})"


_HOLES = re.compile(
    STRING
    + r"|//[^\n]*"
    + rf"|%{_hole('name')}"
    + rf"|loc\(#{_hole('alias')}\)"
    + rf"|stablehlo\.custom_call[ \t]+@{_hole('target')}"
    + rf"|=[ \t]*(?:{_hole('float')}{FLOAT_TYPE}"
    + rf"|{_hole('int')}(?=[ \t]*:[ \t]*[su]?i[0-9]+(?![\w$.]))"
    + rf"|{_hole('bool')}(?=[ \t]*[,}}]))"
)
BLANK = {"name": "_", "alias": "_", "target": "_", "float": "0.0", "int": "0", "bool": "true"}
_INT_TYPE = re.compile(r"[ \t]*:[ \t]*([su]?i[0-9]+)")

Hole = tuple[int, int, str]  # start and end in the statement, kind


def shape_of(piece: str) -> tuple[str, list[Hole]]:
    """The shape of a statement's text, and its holes."""
    holes: list[Hole] = []
    parts: list[str] = []
    position = 0
    for match in _HOLES.finditer(piece):
        kind = match.lastgroup  # None for a string or a comment: part of the shape
        if kind is not None:
            start, end = match.span(kind)
            holes.append((start, end, kind))
            parts.append(piece[position:start])
            parts.append(BLANK[kind])
            position = end
    parts.append(piece[position:])
    return "".join(parts), holes


def shape_matcher(piece: str, holes: Sequence[Hole]) -> re.Pattern[str]:
    """A pattern whose ``fullmatch`` takes exactly the statements of ``piece``'s shape, with
    group k + 1 on hole k (see the module docstring)."""
    parts: list[str] = []
    position = 0
    for start, end, kind in holes:
        parts.append(re.escape(piece[position:start]))
        parts.append(f"({HOLE_PATTERNS[kind]})")
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


MATCHER_AFTER = 64  # statements shape_of finds of a shape before the shape gets a matcher
_MATCHERS_PER_GUESS = 8  # matchers tried for one guess before shape_of decides


@dataclass(eq=False)
class KnownShape:
    """A shape seen in a file: the statement it was first seen in, and its matcher once it
    has been seen often (compiling one costs about what 64 runs of shape_of do, so a shape
    costs at most twice what the best choice would have); until then it is walked."""

    key: str
    made_from: str
    holes: list[Hole]
    # (hole, its type, digits always taken without a sign and after a minus sign)
    int_holes: tuple[tuple[int, str, int, int], ...]
    found: int = 0  # statements found of this shape without the matcher
    matcher: re.Pattern[str] | None = None

    def __post_init__(self) -> None:
        literals: list[str] = []
        position = 0
        for start, end, _ in self.holes:
            literals.append(self.made_from[position:start])
            position = end
        literals.append(self.made_from[position:])
        self._first = literals[0]
        self._steps = [
            (_HOLE_MATCHERS[kind], literal)
            for (_, _, kind), literal in zip(self.holes, literals[1:], strict=True)
        ]

    def walk(self, piece: str) -> tuple[tuple[str, ...], list[int]] | None:
        """The hole texts of ``piece`` and where hole k ends (``ends[k + 1]``), if ``piece``
        has this shape (see the module docstring); else None."""
        if not piece.startswith(self._first):
            return None
        position = len(self._first)
        texts: list[str] = []
        ends = [0]
        for pattern, literal in self._steps:
            match = pattern.match(piece, position)
            if match is None:
                return None
            end = match.end()
            if not piece.startswith(literal, end):
                return None
            texts.append(match.group())
            ends.append(end)
            position = end + len(literal)
        if position != len(piece):
            return None
        return tuple(texts), ends

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
    """The shapes of one file's statements, by a known shape's matcher or walk when one
    takes the statement (see the module docstring), else by ``shape_of``."""

    def __init__(self) -> None:
        self.shapes: dict[str, KnownShape] = {}
        self._by_guess: dict[str | bytes, list[KnownShape]] = {}

    def find(self, piece: str) -> tuple[KnownShape, tuple[str, ...], Callable[[int], int]]:
        """The shape of ``piece``, its hole texts, and where hole k ends (``end_of(k + 1)``)."""
        guess = matcher_key(piece)
        tried = self._by_guess.get(guess)
        if tried is None:
            tried = self._by_guess[guess] = []
        for known in tried:
            if known.matcher is not None:
                match = known.matcher.fullmatch(piece)
                if match is not None:
                    return known, match.groups(), match.end
            else:
                walked = known.walk(piece)
                if walked is not None:
                    self._found(known)
                    texts, ends = walked
                    return known, texts, ends.__getitem__
        key, holes = shape_of(piece)
        if key in self.shapes:
            known = self.shapes[key]
        else:
            known = self.shapes[key] = KnownShape(key, piece, holes, _int_holes(piece, holes))
        self._found(known)
        if len(tried) < _MATCHERS_PER_GUESS and all(shape is not known for shape in tried):
            tried.append(known)
        texts = tuple([piece[start:end] for start, end, _ in holes])
        return known, texts, lambda group: holes[group - 1][1]

    @staticmethod
    def _found(known: KnownShape) -> None:
        known.found += 1
        if known.found >= MATCHER_AFTER and known.matcher is None:
            known.matcher = shape_matcher(known.made_from, known.holes)


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
