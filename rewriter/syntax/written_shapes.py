"""The line shapes of text written from a pattern, made once per pattern and literal values.

A rewrite writes each call's replacement from its shape's ``str.format`` pattern
(``rewriter/plan/replacement.py``): a dozen lines that differ from call to call only in
their fields, most of them names (the call's operands and results, the constants' fresh
names, the callee, the location's alias). Shaping those lines one by one is most of what
validating such a rewrite costs (``validation.LineShapes``: 7k to 49k instructions a
line). Here a line's shape is made once per pattern, line and values of the fields that
are not names, and looked up for the other calls.

Why that is the shape ``LineShapes.of`` gives the line. A field is *blanked* when every
place it has in the pattern is one of these, and the value it had the first time the
pattern was seen fits that place's class:

- (a) a whole name, ``%`` and a run of ``N = [A-Za-z0-9_$.-]`` (a constant's fresh name);
- (b) a run of ``N`` after a literal ``%`` (an operand or result: ``%{3}``);
- (c) a symbol name ``[A-Za-z_$.-][\\w$.-]*`` (SYMBOL's unquoted form) after a literal ``@``
  (the callee);
- (d) an alias name (what HASH_ID takes after its ``#``, now the same pattern) after a
  literal ``loc(#`` and before a literal ``)``;

and in each place a literal character from ``AFTER`` follows it (a blank, ``,():]}``, a
line break: none a name or symbol character, nor ``<``); or

- (e) a constant's value, in a line that is ``B{a} = arith.constant {e} : T loc(#{d})``
  and a line break (the rewrite's constant for an attribute): ``B`` blanks or nothing,
  ``{a}`` a field of (a), ``{d}`` one of (d), not the pattern's last line (which the text
  after the edit ends), and ``{e}``'s values of the FLOAT form (``terminals.FLOAT``) with
  ``T`` ``f32`` or ``f64``, or of one to nine digits with ``T`` ``i32``, ``i64``,
  ``si32``, ``si64``, ``ui32`` or ``ui64``. On the first line it is blanked only when
  the text before the edit is blanks too; otherwise its value is literal there.

Every other field is *literal*: a line's shape is remembered under its literal fields'
values. A pattern is used for a call only when each blanked value fits its classes, none
holds ``custom_call``, and the text is the pattern filled.

A line with a field of (e) is, with what is before the edit, ``B%n = arith.constant v :
T loc(#A)\n``, ``B`` blanks, ``n`` a run of ``N`` and ``A`` an alias name. ``custom_call``
is not in it (no value holds it, nor the literals), nor a ``#`` at its start. Its key
(``LineShapes.lines`` remembers what a line gave by a key that decides it) is ``B%_``
and the rest, in which ``blanks.blanked_line`` finds no quote, ``@``, ``array<`` or
``dense<``, blanks ``loc(#A)`` to ``loc(#_)``, and finds one ``arith.constant `` before
``v``: its float alternative, tried first, takes all of a FLOAT-form ``v`` (greedy, and
`` : T`` follows, ``T`` ``f32`` or ``f64``) and blanks it to ``0.0``; an integer of one
to nine digits fails it (no ``.``) and the boolean, and is the integer alternative
before one of the six types, blanked to ``0``. So the line's shape is ``B%_ =
arith.constant 0.0 : T loc(#_)\n`` (or ``0``) whatever ``n``, ``v`` and ``A``: an
export's constants that differ from call to call (a scale, a step) share it, and so do
the calls' blocks of lines.

For the other lines, let L and L' be one line of two such calls that agree in their
literal fields (and in the text before and after the edit, part of the key). The
values hold no quote, backslash, line break, ``%`` (but (a)'s first), ``@``, ``#``,
``(``, ``<`` or ``/``, and each is maximal: the character after it ends every run of
``N`` or symbol characters. Through ``LineShapes.of``, step by step:

1. ``custom_call`` occurs in L as in L': an occurrence is all ``N`` characters, so it
   cannot take (a)'s ``%``, the marker before (b), (c) and (d), or the character after a
   value; and no value holds it. So L and L' take the same branch (the call branch
   never: those texts are not used). A ``#`` starts both or neither: the first character
   is literal, or (a)'s ``%``.
2. The key (not for an alias definition, a line that starts with ``#``):
   ``blanks.VALUE_NAMES`` takes ``%`` and its run: (a) and (b) whole, each to ``%_``; a
   run from another ``%`` stops at the marker of every value. So the keys differ only in
   fields, and only in fields other than (a) and (b).
3. ``blanked_line`` (of the keys, or of L and L' when they are alias definitions):
   strings are found by quotes, backslashes and line breaks alone, which the values do
   not hold, so the same spans are blanked (a field inside one goes with it); a comment
   is kept, and the steps below blank its fields as elsewhere. An alias definition reads
   runs that stop before every value, but for ``_ALIAS_USE``, which may blank a (d) alias
   as ``#_`` in one line and not the other: step 4 blanks both. Its ``array<`` test
   cannot reach a value, which no ``<`` follows. ``blanks.VALUE_NAMES`` then blanks (a)
   and (b) as in step 2 (in a key, ``%_`` to itself).
4. ``_LOCATION_ALIAS`` and ``_SYMBOL`` blank (d) and (c) whole, to ``loc(#_)`` and ``@_``,
   and other matches stop at their markers.

After step 4 the two lines are one text, so the rest of ``blanked_line`` (splats,
constants, ``array<``) does the same to both. A line's shape counts its text's length
only to skip remembering lines longer than ``LONG_LINE``: a line made here is shaped
whatever its length, and the key is still sound for it (``blanks``, point 3).

``tests/test_written_shapes.py`` checks, on the call-dense exports with their fields'
values mutated within and out of their classes, that every line's shape made here is
``LineShapes.of``'s.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from operator import itemgetter
from string import Formatter
from typing import NamedTuple

from .blanks import CONSTANT_VALUES, LINE_HOLES
from .terminals import ALIAS_NAME, VALUE_NAME
from .validation import LineShapes

# Each class of blanked field: the pattern its values fit, and how the literal before it
# ends: (a) a whole name, after any literal; (b), (c), (d) the names ``blanks`` blanks.
_WHOLE_NAME = f"%{VALUE_NAME}"
AFTER = frozenset(" ,():]}\r\n")  # what may follow a blanked field
# (e): the literal before a constant's value, and for each literal after it (its type and
# the start of its location) the pattern of the values blanked there.
_CONSTANT = " = arith.constant "
_CONSTANT_VALUES = {f"{type_} loc(#": values for type_, values in CONSTANT_VALUES.items()}
_CONSTANT_CLASSES = frozenset(_CONSTANT_VALUES.values())
_SEPARATOR = " "  # between the blanked values when they are checked at once: in no class
_REMEMBERED = 1 << 16  # line shapes kept, at most
# Texts of one pattern whose blocks are kept before one recurs: a pattern whose calls all
# differ in a literal value (a loop's step) is shaped line by line.
_BLOCK_TRIES = 64


class Written(NamedTuple):
    """A text written from a ``str.format`` pattern with positional fields only:
    ``text == pattern.format(*values)``, which its maker vouches for."""

    pattern: str
    values: tuple[str, ...]
    text: str


Piece = str | int  # a literal text, or the index of a field
Shapes = tuple[str, ...]


class _Template:
    """A pattern cut into lines of pieces, with which fields are blanked (decided by the
    values of the first text written from it), and the line shapes made so far: of the
    lines with no literal field, one each (``fixed``), and of the others, and of the first
    and last lines (which the text around the edit completes), one per key; and of all
    lines, by the text around the edit and all literal values (``blocks``)."""

    def __init__(self, pattern: str, values: Sequence[str]):
        pieces: list[Piece] = []
        for literal, name, spec, conversion in Formatter().parse(pattern):
            if literal:
                pieces.append(literal)
            if name is not None:
                positional = name.isdigit() and not spec and not conversion
                pieces.append(int(name) if positional else len(values))  # unusable
        self.usable = all(
            piece < len(values) if isinstance(piece, int) else "custom_call" not in piece
            for piece in pieces
        )
        self.fields = len(values)
        self.lines = _lines(pieces)
        classes = _classes(pieces, values) if self.usable else {}
        constants = _constant_values(self.lines, classes)
        self.blanked = _blanked_picker(list(classes))
        self.check = re.compile(_SEPARATOR.join(classes.values()))
        literal_fields = [
            [piece for piece in line if isinstance(piece, int) and piece not in classes]
            for line in self.lines
        ]
        last = len(self.lines) - 1
        # Lines shaped per key: (number, what picks the key's values, the shapes by key).
        self.keyed: list[tuple[int, Callable[[Sequence[str]], object], dict[object, str]]] = [
            (number, _picker(fields), {})
            for number, fields in enumerate(literal_fields)
            if fields or number in (0, last)
        ]
        self.fixed: list[str] | None = None  # made with the first text's shapes
        # All lines' shapes at once, by the text around the edit and every literal value.
        self.all_literals = _picker(sorted({p for fields in literal_fields for p in fields}))
        # The first line's fields of class (e): blanked after blanks alone, and otherwise
        # literal (the text before the edit is not of (e)'s form).
        self.first_constants = _picker(constants[0]) if 0 in constants else None
        self.blocks: dict[tuple[str, str, object, object], Shapes] = {}
        self.block_misses = 0  # before a first hit: past _BLOCK_TRIES, blocks are not kept

    def fits(self, values: Sequence[str]) -> bool:
        """Whether the blanked fields' values fit their classes, and none is a call's."""
        blanked = _SEPARATOR.join(self.blanked(values))
        return "custom_call" not in blanked and self.check.fullmatch(blanked) is not None


def _lines(pieces: list[Piece]) -> list[list[Piece]]:
    """``pieces`` cut at each line break of their literals (kept at the line's end)."""
    lines: list[list[Piece]] = [[]]
    for piece in pieces:
        if isinstance(piece, int):
            lines[-1].append(piece)
            continue
        first, *others = piece.split("\n")
        if first:
            lines[-1].append(first)
        for other in others:
            lines.append([other] if other else [])
    return lines


def _classes(pieces: list[Piece], values: Sequence[str]) -> dict[int, str]:
    """The fields to blank and the pattern of their class (see the module docstring):
    a field whose every place is of one class, with a value that fits it."""
    classes: dict[int, str] = {}
    refused: set[int] = set()
    for place, piece in enumerate(pieces):
        if not isinstance(piece, int) or piece in refused:
            continue
        before = pieces[place - 1] if place > 0 else None
        after = pieces[place + 1] if place + 1 < len(pieces) else None
        found = _class_at(before, after, values[piece])
        if found is None or classes.setdefault(piece, found) != found:
            refused.add(piece)
            classes.pop(piece, None)
    return classes


def _class_at(before: Piece | None, after: Piece | None, value: str) -> str | None:
    """The class pattern of a field between ``before`` and ``after`` with ``value``."""
    if not isinstance(after, str) or after[0] not in AFTER:
        return None
    for marker, pattern in LINE_HOLES:
        if isinstance(before, str) and before.endswith(marker):
            if marker == "loc(#" and after[0] != ")":
                return None
            return pattern if re.fullmatch(pattern, value) else None
    if before == _CONSTANT and after in _CONSTANT_VALUES:  # (e), if its line is of the form
        pattern = _CONSTANT_VALUES[after]
        return pattern if re.fullmatch(pattern, value) else None
    return _WHOLE_NAME if re.fullmatch(_WHOLE_NAME, value) else None


def _constant_values(lines: list[list[Piece]], classes: dict[int, str]) -> dict[int, list[int]]:
    """The fields of class (e) by the number of their line, each line checked to be of
    the form ``B{a} = arith.constant {e} : T loc(#{d})``, B blanks or nothing, and not the
    last line; a field of class (e) in another line is dropped from ``classes`` (it stays
    literal)."""
    found: dict[int, list[int]] = {}
    for number, line in enumerate(lines):
        fields = [p for p in line if isinstance(p, int) and classes.get(p) in _CONSTANT_CLASSES]
        if not fields:
            continue
        body = line[1:] if isinstance(line[0], str) and not line[0].strip(" \t") else line
        # The field of (e) third: ``_class_at`` gave it its class for the literals around it.
        if number < len(lines) - 1 and len(body) == 6 and fields == [body[2]]:
            name, _, _, _, alias, close = body
            if (
                isinstance(name, int)
                and classes.get(name) == _WHOLE_NAME
                and isinstance(alias, int)  # after ``loc(#``: of (d) when of its pattern
                and classes.get(alias) == ALIAS_NAME
                and close == ")"
            ):
                found[number] = fields
                continue
        for field in fields:
            classes.pop(field, None)
    return found


def _picker(indices: list[int]) -> Callable[[Sequence[str]], object]:
    """What tells apart the values at ``indices``: the value itself for one, a tuple of
    them for more, ``None`` for none."""
    if not indices:
        return lambda values: None
    return itemgetter(*indices)


def _blanked_picker(indices: list[int]) -> Callable[[Sequence[str]], tuple[str, ...]]:
    """The values at ``indices``, as a tuple."""
    if len(indices) > 1:
        return itemgetter(*indices)
    return lambda values: tuple(values[index] for index in indices)


def _filled(line: list[Piece], values: Sequence[str]) -> str:
    return "".join(piece if isinstance(piece, str) else values[piece] for piece in line)


class WrittenShapes:
    """The shapes of written lines, for one validation (its ``LineShapes``)."""

    def __init__(self, line_shapes: LineShapes):
        self.line_shapes = line_shapes
        self.templates: dict[str, _Template] = {}
        self.remembered = 0

    def shapes(self, written: Written, text: str, before: str, after: str) -> Shapes | None:
        """The shapes of the lines of ``before + text + after``, ``before`` and ``after``
        the rest of the first and last lines of an edit whose text is ``text``; None when
        they are to be shaped one by one (``text`` is not ``written``'s, or a value is not
        of its field's class)."""
        if text is not written.text:  # the edit is not the one written
            return None
        pattern, values, _ = written
        template = self.templates.get(pattern)
        if template is None:
            template = self.templates[pattern] = _Template(pattern, values)
        if (
            not template.usable
            or len(values) != template.fields
            or text.count("\n") != len(template.lines) - 1  # no value holds a line break
            or not template.fits(values)
            or "custom_call" in before
            or "custom_call" in after
        ):
            return None
        constants = None  # the first line's values of (e), when they are literal
        if template.first_constants is not None and before.strip(" \t"):
            constants = template.first_constants(values)
        keep_block = template.block_misses < _BLOCK_TRIES
        if keep_block:
            block_key = (before, after, template.all_literals(values), constants)
            known = template.blocks.get(block_key)
            if known is not None:
                template.block_misses = -_BLOCK_TRIES  # blocks recur: keep them
                return known
            template.block_misses += 1
        shapes = template.fixed
        if shapes is None:  # the lines without a key: shaped once
            shapes = template.fixed = [
                self._shape(template, number, values, before, after)
                for number in range(len(template.lines))
            ]
        shapes = shapes.copy()
        last = len(template.lines) - 1
        for number, pick, by_key in template.keyed:
            key = pick(values)
            if number == 0:
                key = (before, key, constants)
            if number == last:
                key = (after, key)
            shape = by_key.get(key)
            if shape is None:
                shape = self._shape(template, number, values, before, after)
                if self.remembered < _REMEMBERED:
                    by_key[key] = shape
                    self.remembered += 1
            shapes[number] = shape
        if not after and (last > 0 or not before) and not _filled(template.lines[last], values):
            del shapes[last]  # the text ends the file, with a line break or nothing
        if keep_block and self.remembered < _REMEMBERED:
            template.blocks[block_key] = known = tuple(shapes)
            self.remembered += 1
            return known
        return tuple(shapes)

    def _shape(
        self, template: _Template, number: int, values: Sequence[str], before: str, after: str
    ) -> str:
        """The shape of line ``number`` of ``before + text + after``."""
        line = _filled(template.lines[number], values)
        if number == 0:
            line = before + line
        line += after if number == len(template.lines) - 1 else "\n"
        return self.line_shapes.of(line)
