"""Custom call statements by shape: each shape parsed and judged once, then reused.

A call-dense export (an unrolled scan, a solver, a model whose every layer calls kernels)
repeats a few statement shapes thousands of times, differing only in SSA names, location
aliases and float attribute values. Parsing every statement with lark costs milliseconds
each; so a statement's *shape* (its text with those parts, its holes, blanked) keys what
lark and the judge made of the first statement of that shape, and later statements of
the shape only fill in their own holes.

Holes, found outside strings and comments:

- a name: the body of ``%name`` (the longest run of ``[A-Za-z0-9_$.-]``), blanked to ``_``;
- a location alias: ``X`` in ``loc(#X)``, blanked to ``_``;
- a float literal written ``= LITERAL : f32`` (or ``f64``) with ``LITERAL`` matching the
  grammar's FLOAT terminal, blanked to ``0.0``.

Why a shape's outcome is each of its statements' own outcome:

1. Each hole is blanked to a member of its own class, and what precedes and follows a hole
   ends its match (the runs are maximal; the float's context is fixed), so statements of
   one shape have holes at the same places, of the same classes, and agree elsewhere.
2. The lexer gives every member of a class the same token type: a name body is taken
   whole by VALUE_USE, VALUE_ID or LS_RESULTS (``rewriter/validation.py`` argues it); an
   alias is one HASH_ID, the only terminal starting with ``#`` after ``loc(``; a FLOAT-form
   literal is one FLOAT token, as HEX needs an ``x``, and FLOAT is tried before INT and
   PUNCT (``tests/test_call_shapes.py`` checks lark's order). The parser reads token
   types only, so the trees have one shape, and the model copies a hole's text without
   looking into it.
3. The shape is parsed as its first statement with every hole replaced by a sentinel of
   the hole's class (``%$rw0$``, ``#$rw1$``, a float that occurs nowhere else). The
   sentinels show where hole text ends up: in the result binding, the operands, the
   location and the constant values of float attributes. A shape whose judged outcome has
   a sentinel anywhere else, or that fails to parse or is judged an error, is not reused:
   its statements are parsed one by one, for real, so every diagnostic is their own.

``tests/test_call_shapes.py`` checks that a rewrite with shapes reused equals one that
parses every statement on mutated call-dense exports.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Any

from . import model
from .calls import CallSyntaxError, parse_call, statement_end
from .compact import STRING
from .scan import CallSite, Scan
from .source import Source
from .syntax import parser
from .tree import custom_call_from_tree

_FLOAT = r"[-+]?[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?"  # the grammar's FLOAT terminal
_HOLES = re.compile(
    STRING
    + r"|//[^\n]*"
    + r"|%(?P<name>[A-Za-z0-9_$.\-]+)"
    + r"|loc\(#(?P<alias>[A-Za-z_$.\-][\w$.\-]*)\)"
    + rf"|=[ \t]*(?P<float>{_FLOAT})(?=[ \t]*:[ \t]*f(?:32|64)(?![\w$.]))"
)
_BLANK = {"name": "_", "alias": "_", "float": "0.0"}
_SENTINEL_MARK = "$rw"
_SENTINEL = re.compile(r"\$rw([0-9]+)\$|1\.([0-9]{6})7531e\+07")

# A string with holes: literal pieces and hole indices, in order.
Template = tuple[str | int, ...]


def _sentinel(kind: str, index: int) -> str:
    return f"1.{index:06d}7531e+07" if kind == "float" else f"$rw{index}$"


def shape_of(piece: str) -> tuple[str, list[tuple[int, int, str]]]:
    """The shape of a statement's text, and its holes as (start, end, kind)."""
    holes: list[tuple[int, int, str]] = []
    parts: list[str] = []
    position = 0
    for match in _HOLES.finditer(piece):
        kind = match.lastgroup
        if kind is None:  # a string or a comment: part of the shape as it is
            continue
        start, end = match.span(kind)
        holes.append((start, end, kind))
        parts.append(piece[position:start])
        parts.append(_BLANK[kind])
        position = end
    parts.append(piece[position:])
    return "".join(parts), holes


def _fill(template: Template, holes: list[str]) -> str:
    return "".join(part if isinstance(part, str) else holes[part] for part in template)


def _template(text: str) -> Template:
    """``text`` (a string of the shape's model) cut at its sentinels."""
    parts: list[str | int] = []
    position = 0
    for match in _SENTINEL.finditer(text):
        parts.append(text[position : match.start()])
        index = match.group(1) or match.group(2)
        parts.append(int(index))
        position = match.end()
    parts.append(text[position:])
    return tuple(part for part in parts if part != "")


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a model value (dataclasses, tuples, lists, dicts)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif is_dataclass(value) and not isinstance(value, type):
        for field in fields(value):
            yield from _strings(getattr(value, field.name))


@dataclass
class CallShape:
    """What lark and the judge made of one statement shape, and where its holes go.

    ``call`` and ``report`` are the shape's first statement's (with sentinels where its
    holes were); offsets in ``call`` count from ``base``."""

    call: model.CustomCall
    report: Any  # plan.CallReport, judged
    base: int
    hole_starts: tuple[int, ...] = ()  # where each sentinel starts, relative to ``base``
    hole_lengths: tuple[int, ...] = ()
    results: Template = ()
    operands: tuple[Template, ...] = ()
    location: Template = ()
    attribute_values: tuple[tuple[int, Template], ...] = ()  # (index in report.attributes, value)

    @classmethod
    def exact(cls, call: model.CustomCall, report: Any, base: int) -> CallShape:
        """A statement taken as it is: no holes, used once."""
        return cls(
            call,
            report,
            base,
            results=(call.results,),
            operands=tuple((operand,) for operand in call.operands),
            location=(call.location,),
        )


@dataclass
class PlacedCall:
    """One custom call statement: its shape, and what is its own."""

    shape: CallShape
    start: int  # the statement's first non-blank character
    end: int  # the end of the op
    target_start: int
    results: str
    operands: tuple[str, ...]
    location: str
    module: int
    report: Any  # plan.CallReport


# judge(source, call) -> (report, errors): plan's rules applied to one parsed call.
Judge = Callable[[Source, model.CustomCall], tuple[Any, list[Any]]]


class CallShapes:
    """Places every custom call of one file, parsing and judging each shape once."""

    def __init__(self, source: Source, scan: Scan, judge: Judge, *, reuse: bool = True):
        self.source = source
        self.scan = scan
        self.judge = judge
        self.reuse = reuse  # False: every statement parsed on its own (the reference)
        self.shapes: dict[str, CallShape | None] = {}  # None: a shape not to reuse

    def place(self, site: CallSite) -> tuple[PlacedCall, list[Any]]:
        """The call at ``site`` and the errors judging it gave; raises CallSyntaxError."""
        if not self.reuse:
            return self._place_exact(site)
        text = self.source.text
        end = statement_end(text, site.statement, site.keyword)
        piece = text[site.statement : end]
        key, holes = shape_of(piece)
        shape = self.shapes.get(key, False)
        if shape is False:
            shape = self.shapes[key] = self._build(piece, holes)
        if shape is None:
            return self._place_exact(site)
        hole_texts = [piece[start:stop] for start, stop, _ in holes]
        return self._instance(shape, site, hole_texts), []

    def _instance(self, shape: CallShape, site: CallSite, hole_texts: list[str]) -> PlacedCall:
        call = shape.call
        growth = [len(t) - n for t, n in zip(hole_texts, shape.hole_lengths, strict=True)]

        def moved(offset: int) -> int:  # an offset of the shape's text in this statement
            relative = offset - shape.base
            return (
                site.statement
                + relative
                + sum(
                    grown
                    for grown, hole in zip(growth, shape.hole_starts, strict=True)
                    if hole < relative
                )
            )

        start = moved(call.span.start)
        report = copy.copy(shape.report)
        report.line, report.column = self.source.line_col(start)
        if shape.attribute_values:
            attributes = list(report.attributes)
            for index, value in shape.attribute_values:
                attributes[index] = replace(attributes[index], value=_fill(value, hole_texts))
            report.attributes = tuple(attributes)
        return PlacedCall(
            shape,
            start,
            moved(call.span.end),
            moved(call.target_span.start),
            _fill(shape.results, hole_texts),
            tuple(_fill(operand, hole_texts) for operand in shape.operands),
            _fill(shape.location, hole_texts),
            self.scan.module_of(site.keyword),
            report,
        )

    def _place_exact(self, site: CallSite) -> tuple[PlacedCall, list[Any]]:
        call = parse_call(self.source, self.scan, site)
        report, errors = self.judge(self.source, call)
        shape = CallShape.exact(call, report, 0)
        placed = PlacedCall(
            shape,
            call.span.start,
            call.span.end,
            call.target_span.start,
            call.results,
            call.operands,
            call.location,
            call.module,
            report,
        )
        return placed, errors

    def _build(self, piece: str, holes: list[tuple[int, int, str]]) -> CallShape | None:
        """The shape of ``piece`` parsed with sentinels in its holes; None when it is not
        to be reused (see the module docstring)."""
        if _SENTINEL_MARK in piece:
            return None
        parts, starts, lengths = [], [], []
        position = 0
        for index, (start, end, kind) in enumerate(holes):
            sentinel = _sentinel(kind, index)
            parts.append(piece[position:start])
            starts.append(sum(map(len, parts)))
            lengths.append(len(sentinel))
            parts.append(sentinel)
            position = end
        parts.append(piece[position:])
        canonical = "".join(parts)
        floats = [_sentinel(k, i) for i, (_, _, k) in enumerate(holes) if k == "float"]
        if any(canonical.count(sentinel) != 1 for sentinel in floats):
            return None
        try:
            import lark

            tree = parser().parse(canonical, start="custom_call_stmt")
        except lark.exceptions.LarkError:
            return None  # parsed for real, statement by statement, with its own diagnostic
        try:
            call = custom_call_from_tree(tree, canonical, 0)
        except RecursionError:
            return None
        report, errors = self.judge(Source(canonical, self.source.filename), call)
        if errors:
            return None
        shape = CallShape(
            call,
            report,
            0,
            tuple(starts),
            tuple(lengths),
            _template(call.results),
            tuple(_template(operand) for operand in call.operands),
            _template(call.location),
            tuple(
                (index, _template(attribute.value))
                for index, attribute in enumerate(report.attributes)
                if _SENTINEL.search(attribute.value)
            ),
        )
        return shape if not _leaks(shape) else None


def _leaks(shape: CallShape) -> bool:
    """Whether a sentinel reached any part of the outcome that is not filled per call."""
    call = shape.call
    report = copy.copy(shape.report)
    filled = {index for index, _ in shape.attribute_values}
    report.attributes = tuple(
        replace(attribute, value="") if index in filled else attribute
        for index, attribute in enumerate(report.attributes)
    )
    kept = (call.indent, call.target, call.input_types, call.result_types, call.results_text)
    return any(_SENTINEL.search(text) for text in _strings((kept, call.form, report)))


__all__ = ["CallShape", "CallShapes", "CallSyntaxError", "PlacedCall", "shape_of"]
