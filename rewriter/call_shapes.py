"""Custom call statements by shape: each shape parsed and judged once, then reused.

A call-dense export (an unrolled scan, a solver, a model whose every layer calls kernels)
repeats a few statement shapes thousands of times, differing only in SSA names, location
aliases, targets and scalar attribute values. Parsing a statement with lark costs
milliseconds; so a statement's *shape* (its text with those parts, its holes, blanked)
keys what lark and the judge made of the first statement of that shape, and later
statements of the shape only fill in their own holes.

Holes, found outside strings and comments, each blanked to a member of its class:

- ``name``: the body of ``%name`` (the longest run of ``[A-Za-z0-9_$.-]``);
- ``alias``: ``X`` in ``loc(#X)``;
- ``target``: ``T`` in ``stablehlo.custom_call @T`` (a bare symbol name);
- ``float``: ``L`` in ``= L : f32`` (or ``f64``), ``L`` of the grammar's FLOAT form;
- ``int``: ``L`` in ``= L : iN`` (or ``siN``, ``uiN``), ``L`` of the INT form;
- ``bool``: ``true`` or ``false`` after ``=``, before ``,`` or ``}``;
- ``constant``, ``constant_bool``: the same forms after ``arith.constant``, in no custom
  call but in the rewritten module, whose validation remembers lines by these shapes.

Why a shape's outcome is each of its statements' own outcome:

1. What precedes and follows a hole ends its match (the runs are maximal, the contexts
   fixed), so statements of one shape have holes at the same places, of the same
   classes, and agree everywhere else.
2. The lexer gives every member of a class the same token type: a name body is taken
   whole by VALUE_USE, VALUE_ID or LS_RESULTS (``rewriter/validation.py`` argues it); an
   alias is one HASH_ID, a target one SYMBOL (the only terminals starting with ``#`` and
   ``@``); a FLOAT-form literal is one FLOAT token and an INT-form one an INT token (HEX
   needs an ``x``; FLOAT is tried before INT and PUNCT); ``true``/``false`` are BOOL,
   whose priority beats BARE_ID (``tests/test_call_shapes.py`` checks lark's order). The
   parser reads token types only, so the trees have one shape.
3. The shape is parsed as its first statement with sentinels in its holes. The model
   copies a hole's text without looking into it; the judge reads a value in one place
   only, the selection of targets (``select.skip_reason``), which is asked again for
   every statement's own target. Unique sentinels (``%$rw0$``, ``#$rw1$``, ``@$rw2$``,
   a float found nowhere else) show where hole text ends up: the result binding, the
   operands, the location, the target and the constants of attributes. Integer and
   boolean holes are followed by their spans to the attribute they hold; an integer that
   its type does not take (``rewriter/integers.py``, the judge's one look at a value) is
   not filled in but parsed for real. A shape whose judged outcome holds a sentinel
   anywhere else, that fails to parse or is judged an error is not reused: its
   statements are parsed one by one, for real, so every diagnostic is their own.

``tests/test_call_shapes.py`` checks that a rewrite with shapes reused equals one that
parses every statement, on mutated call-dense exports.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Any

from . import model
from .calls import CallSyntaxError, parse_call
from .compact import STRING
from .constants import ffi_attributes
from .integers import range_error
from .scan import CallSite, Scan
from .source import Source
from .syntax import parser
from .tree import custom_call_from_tree

_FLOAT = r"[-+]?[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?"  # the grammar's FLOAT terminal
_INT = r"[-+]?[0-9]+"  # the grammar's INT terminal
_HOLES = re.compile(
    STRING
    + r"|//[^\n]*"
    + r"|%(?P<name>[A-Za-z0-9_$.\-]+)"
    + r"|loc\(#(?P<alias>[A-Za-z_$.\-][\w$.\-]*)\)"
    + r"|stablehlo\.custom_call[ \t]+@(?P<target>[A-Za-z_$.\-][\w$.\-]*)"
    + rf"|=[ \t]*(?:(?P<float>{_FLOAT})(?=[ \t]*:[ \t]*f(?:32|64)(?![\w$.]))"
    + rf"|(?P<int>{_INT})(?=[ \t]*:[ \t]*[su]?i[0-9]+(?![\w$.]))"
    + r"|(?P<bool>true|false)(?=[ \t]*[,}]))"
    # The constants a rewrite writes, for the validation of its output (rewriter/validation)
    + rf"|arith\.constant[ \t]+(?:(?P<constant>{_FLOAT})(?=[ \t]*:[ \t]*f(?:32|64)(?![\w$.]))"
    + r"|(?P<constant_bool>true|false)(?![\w$.]))"
)
_BLANK = {"name": "_", "alias": "_", "target": "_", "float": "0.0", "int": "0", "bool": "true"}
_BLANK |= {"constant": "0.0", "constant_bool": "true"}
_INT_TYPE = re.compile(r"[ \t]*:[ \t]*([su]?i[0-9]+)")
_SENTINEL_MARK = "$rw"
_SHARED_OPERANDS = 256  # attribute operands a shape keeps to share between its calls
_SENTINEL = re.compile(r"\$rw([0-9]+)\$|1\.([0-9]{6})7531e\+07")

# A string with holes: literal pieces and hole indices, in order.
Template = tuple[str | int, ...]
Hole = tuple[int, int, str]  # start and end in the statement, kind


def _sentinel(kind: str, index: int) -> str:
    if kind == "float":
        return f"1.{index:06d}7531e+07"
    if kind in ("int", "bool"):
        return _BLANK[kind]  # followed by its span, not by its text
    return f"$rw{index}$"


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
            parts.append(_BLANK[kind])
            position = end
    parts.append(piece[position:])
    return "".join(parts), holes


def integer_type(piece: str, end: int) -> str:
    """The type written after the integer hole that ends at ``end`` (its look-ahead
    guarantees one)."""
    typed = _INT_TYPE.match(piece, end)
    assert typed is not None
    return typed.group(1)


def integers_taken(piece: str, holes: list[Hole]) -> bool:
    """Whether every integer hole of ``piece`` is a value its type takes
    (``rewriter/integers.py``): the one value that decides more than its own text."""
    return not any(
        range_error(piece[start:end], integer_type(piece, end))
        for start, end, kind in holes
        if kind == "int"
    )


def _fill(template: Template, holes: list[str]) -> str:
    if len(template) == 1:  # most are one hole, or one piece of text
        part = template[0]
        return part if isinstance(part, str) else holes[part]
    return "".join(part if isinstance(part, str) else holes[part] for part in template)


def _template(text: str) -> Template:
    """``text`` (a string of the shape's model) cut at its sentinels."""
    parts: list[str | int] = []
    position = 0
    for match in _SENTINEL.finditer(text):
        parts.append(text[position : match.start()])
        parts.append(int(match.group(1) or match.group(2)))
        position = match.end()
    parts.append(text[position:])
    return tuple(part for part in parts if part != "")


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a model value (dataclasses, tuples, lists)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _strings(item)
    elif is_dataclass(value) and not isinstance(value, type):
        for field in fields(value):
            yield from _strings(getattr(value, field.name))


def _clone(original: Any, **changes: Any) -> Any:
    """A copy of a dataclass instance with ``changes``: each call's report and attributes
    are the shape's, but for what is the call's own (the classes have slots, so that 70k
    of them fit in the memory the input is allowed)."""
    kind = type(original)
    return kind(*[changes.get(name, getattr(original, name)) for name in kind.__slots__])


@dataclass
class CallShape:
    """What lark and the judge made of one statement shape, and where its holes go.

    ``call`` and ``report`` are the shape's first statement's, with sentinels where its
    holes were; offsets in ``call`` count from the statement's start."""

    call: model.CustomCall
    report: Any  # plan.CallReport, judged as selected
    source: Source  # the text the shape was parsed from
    sentinels_length: tuple[int, ...]  # the length of the first k sentinels, for each k
    holes_before_start: int  # how many holes come before the call's start, end, target
    holes_before_end: int
    holes_before_target: int
    results: Template
    operands: tuple[Template, ...]
    location: Template
    target: Template
    attribute_values: tuple[tuple[int, Template], ...]  # (index in report.attributes, value)
    int_holes: tuple[tuple[int, str], ...]  # (hole, its type): in range, or parsed for real
    memo: dict[object, Any]  # what later stages derive from the shape alone


@dataclass(slots=True)
class PlacedCall:
    """One custom call statement: its shape, and what is its own."""

    shape: CallShape | None  # None: parsed on its own
    call: model.CustomCall  # the shape's call, or the statement's own
    start: int  # the statement's first non-blank character
    end: int  # the end of the op
    target_start: int
    target: str
    results: str
    operands: tuple[str, ...]
    location: str
    module: int
    report: Any  # plan.CallReport


# judge(source, call, reason) -> (report, errors): plan's rules for one parsed call; with
# a reason the report says the call is left alone.
Judge = Callable[[Source, model.CustomCall, "str | None"], tuple[Any, list[Any]]]
# select(call, target) -> why a call of that target is left alone, or None.
Select = Callable[[model.CustomCall, str], "str | None"]


class CallShapes:
    """Places every custom call of one file, parsing and judging each shape once."""

    def __init__(
        self, source: Source, scan: Scan, judge: Judge, select: Select, *, reuse: bool = True
    ):
        self.source = source
        self.scan = scan
        self.judge = judge
        self.select = select
        self.reuse = reuse  # False: every statement parsed on its own (the reference)
        self.shapes: dict[str, CallShape | None] = {}  # None: a shape not to reuse

    def place(self, site: CallSite) -> tuple[PlacedCall, list[Any]]:
        """The call at ``site`` and the errors judging it gave; raises CallSyntaxError."""
        if not self.reuse:
            return self._place_exact(site)
        text = self.source.text
        # A statement that goes on past its first line never parses as its first line
        # (its brackets are open there), so that line is its shape or its key to none.
        end = text.find("\n", site.keyword)
        piece = text[site.statement : end if end >= 0 else len(text)]
        key, holes = shape_of(piece)
        if key in self.shapes:
            shape = self.shapes[key]
        else:
            shape = self.shapes[key] = self._build(piece, holes)
        if shape is None:
            return self._place_exact(site)
        hole_texts = [piece[start:stop] for start, stop, _ in holes]
        for hole, type_ in shape.int_holes:
            if range_error(hole_texts[hole], type_):
                return self._place_exact(site)
        return self._instance(shape, site, hole_texts), []

    def _instance(self, shape: CallShape, site: CallSite, hole_texts: list[str]) -> PlacedCall:
        call, statement, lengths = shape.call, site.statement, shape.sentinels_length
        # Offsets of the shape's text move by how much longer this statement's holes are.
        start = statement + call.span.start
        if shape.holes_before_start:
            before = shape.holes_before_start
            start += sum(map(len, hole_texts[:before])) - lengths[before]
        before = shape.holes_before_end
        end = statement + call.span.end + sum(map(len, hole_texts[:before])) - lengths[before]
        before = shape.holes_before_target
        target_start = statement + call.target_span.start
        target_start += sum(map(len, hole_texts[:before])) - lengths[before]
        target = _fill(shape.target, hole_texts)
        by_target = shape.memo.setdefault("by_target", {})
        if target not in by_target:
            facts = shape.report.ffi_facts
            if facts is not None and facts.target != target:
                facts = _clone(facts, target=target)
            by_target[target] = (self.select(call, target), facts)
        reason, facts = by_target[target]
        if reason is None:
            report = _clone(shape.report, ffi_facts=facts, target=target)
            if shape.attribute_values:
                report.attributes = self._attributes(shape, hole_texts)
        else:
            report, _ = self.judge(shape.source, call, reason)
            report.target = target
        report.line, report.column = self.source.line_col(start)
        return PlacedCall(
            shape,
            call,
            start,
            end,
            target_start,
            target,
            _fill(shape.results, hole_texts),
            tuple([_fill(operand, hole_texts) for operand in shape.operands]),
            _fill(shape.location, hole_texts),
            self.scan.module_of(site.keyword),
            report,
        )

    def _attributes(self, shape: CallShape, hole_texts: list[str]) -> tuple[Any, ...]:
        """The shape's attribute operands with this call's values. Calls that agree in a
        value share its operand (up to a few dozen values an attribute): exports repeat most
        values, and 70k calls of a dozen attributes must fit in memory."""
        shared = shape.memo.setdefault("operands", {})
        attributes = list(shape.report.attributes)
        for index, template in shape.attribute_values:
            value = _fill(template, hole_texts)
            operand = shared.get((index, value))
            if operand is None:
                operand = _clone(attributes[index], value=value)
                if len(shared) < _SHARED_OPERANDS:
                    shared[index, value] = operand
            attributes[index] = operand
        return tuple(attributes)

    def _place_exact(self, site: CallSite) -> tuple[PlacedCall, list[Any]]:
        call = parse_call(self.source, self.scan, site)
        report, errors = self.judge(self.source, call, self.select(call, call.target))
        placed = PlacedCall(
            None,
            call,
            call.span.start,
            call.span.end,
            call.target_span.start,
            call.target,
            call.results,
            call.operands,
            call.location,
            call.module,
            report,
        )
        return placed, errors

    def _build(self, piece: str, holes: list[Hole]) -> CallShape | None:
        """The shape of ``piece``, parsed with sentinels in its holes; None when it is not
        to be reused (see the module docstring)."""
        if _SENTINEL_MARK in piece:
            return None
        parts: list[str] = []
        starts: list[int] = []
        lengths: list[int] = []
        int_holes: list[tuple[int, str]] = []
        position = length = 0
        for index, (start, end, kind) in enumerate(holes):
            sentinel = _sentinel(kind, index)
            parts.append(piece[position:start])
            length += start - position
            starts.append(length)
            lengths.append(len(sentinel))
            parts.append(sentinel)
            length += len(sentinel)
            position = end
            if kind == "int":
                int_holes.append((index, integer_type(piece, end)))
        parts.append(piece[position:])
        canonical = "".join(parts)
        for index, (_, _, kind) in enumerate(holes):
            if kind == "float" and canonical.count(_sentinel(kind, index)) != 1:
                return None
        try:
            import lark

            tree = parser().parse(canonical, start="custom_call_stmt")
            call = custom_call_from_tree(tree, canonical, 0)
        except (lark.exceptions.LarkError, RecursionError):
            return None  # parsed for real, statement by statement, with its own diagnostic
        source = Source(canonical, self.source.filename)
        report, errors = self.judge(source, call, None)
        if errors:
            return None
        attribute_values = _attribute_values(call, report, holes, starts)
        if attribute_values is None:
            return None
        shape = CallShape(
            call,
            report,
            source,
            (0, *itertools.accumulate(lengths)),
            bisect.bisect_left(starts, call.span.start),
            bisect.bisect_left(starts, call.span.end),
            bisect.bisect_left(starts, call.target_span.start),
            _template(call.results),
            tuple(_template(operand) for operand in call.operands),
            _template(call.location),
            _template(call.target),
            attribute_values,
            tuple(int_holes),
            {},
        )
        return None if _leaks(shape) else shape


def _attribute_values(
    call: model.CustomCall, report: Any, holes: list[Hole], starts: list[int]
) -> tuple[tuple[int, Template], ...] | None:
    """For each attribute operand that holds a hole, its value as a template: floats by
    their sentinels, integers and booleans by their spans. None if a span leads nowhere
    it can be told."""
    by_start = {start: index for index, start in enumerate(starts)}
    keys_of_hole: dict[int, tuple[str, ...]] = {}
    entries, _ = ffi_attributes(call)
    pending: list[tuple[tuple[str, ...], model.Attr]] = [((name,), v) for name, v in entries]
    while pending:
        keys, value = pending.pop()
        if isinstance(value, model.DictAttr):
            pending.extend(((*keys, name), entry) for name, entry in value.entries)
        elif isinstance(value, (model.NumberAttr, model.BoolAttr)):
            hole = by_start.get(value.span.start)
            if hole is not None and holes[hole][2] in ("int", "bool"):
                keys_of_hole[hole] = keys
    values: list[tuple[int, Template]] = []
    operand_of_keys = {attribute.keys: i for i, attribute in enumerate(report.attributes)}
    for hole, keys in keys_of_hole.items():
        operand = operand_of_keys.get(keys)
        if operand is None or report.attributes[operand].value != _BLANK[holes[hole][2]]:
            return None
        values.append((operand, (hole,)))
    for index, attribute in enumerate(report.attributes):
        if _SENTINEL.search(attribute.value):
            values.append((index, _template(attribute.value)))
    return tuple(sorted(values))


def _leaks(shape: CallShape) -> bool:
    """Whether a sentinel reached any part of the outcome that is not filled per call."""
    call = shape.call
    report = _clone(shape.report)
    filled = {index for index, _ in shape.attribute_values}
    report.attributes = tuple(
        replace(attribute, value="") if index in filled else attribute
        for index, attribute in enumerate(report.attributes)
    )
    report.target = ""
    if report.ffi_facts is not None:
        report.ffi_facts = replace(report.ffi_facts, target="")
    kept = (call.indent, call.input_types, call.result_types, call.results_text, call.form)
    return any(_SENTINEL.search(text) for text in _strings((kept, report)))


__all__ = ["CallShape", "CallShapes", "CallSyntaxError", "PlacedCall", "shape_of"]
