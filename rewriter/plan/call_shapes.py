"""Custom call statements by shape: lark's parse of a shape made once, every call judged on
its own values.

A call-dense export (an unrolled scan, a solver, a model whose every layer calls kernels)
repeats a few statement shapes thousands of times, differing only in SSA names, location
aliases, targets and scalar attribute values. Parsing a statement with lark costs
milliseconds; so a statement's *shape* (its text with those parts, its holes, blanked)
keys lark's parse of the first statement of that shape, with a sentinel in each hole.

Holes (found by ``rewriter/syntax/blanks.py``, outside strings and comments), each blanked to a
member of its class:

- ``name``: the body of ``%name`` (the longest run of ``[A-Za-z0-9_$.-]``);
- ``alias``: ``X`` in ``loc(#X)``;
- ``target``: ``T`` in ``stablehlo.custom_call @T`` (a bare symbol name);
- ``float``: ``L`` in ``= L : f32`` (or ``f64``), ``L`` of the grammar's FLOAT form;
- ``int``: ``L`` in ``= L : iN`` (or ``siN``, ``uiN``), ``L`` of the INT form;
- ``bool``: ``true`` or ``false`` after ``=``, before ``,`` or ``}``.

Why the sentinel parse is each statement's parse, but for the text in its holes:

1. What precedes and follows a hole ends its match (the runs are maximal, the contexts
   fixed), so statements of one shape have holes at the same places, of the same
   classes, and agree everywhere else.
2. The lexer gives every member of a class the same token type: a name body is taken
   whole by VALUE_USE, VALUE_ID or LS_RESULTS (``rewriter/syntax/blanks.py`` argues it); an
   alias is one HASH_ID, a target one SYMBOL (the only terminals starting with ``#`` and
   ``@``); a FLOAT-form literal is one FLOAT token and an INT-form one an INT token (HEX
   needs an ``x``; FLOAT is tried before INT and PUNCT); ``true``/``false`` are BOOL,
   whose priority beats BARE_ID (``tests/test_call_shapes.py`` checks lark's order). The
   parser reads token types only, so the trees have one shape, and the model
   (``to_model.py``) copies a token's text where it keeps it.

How each hole reaches the judgement (``judging.py``, the parts the plain path runs on
each call's own model), so that every part runs on the call's own values, or is
remembered under a key that holds all it reads:

- Names, aliases and the indentation: the judge is handed ``judging.judged_view``, which
  holds none of them; the replacement copies them as fields of its pattern (below).
- The target: selection is asked once per shape and target, on the shape's view and the
  target. The signature (rule 7, layouts, the tensors' FFI facts) is judged once per
  shape: its view holds ``judging.TARGET`` for the target on every path, so the view is
  each call's own but for positions (point 1; a view holds no other hole: ``_build``
  checks that no sentinel is left in it), which say only where an error is. A shape whose
  signature is in error is not reused: each call is judged on its own.
- Scalar values of the FFI dictionary (``float``, ``int``, ``bool`` holes that are a whole
  leaf of it): each call's own attribute model is made from the hole's text as lark's
  model of it (``_Leaf.attribute``), and its operand is ``attribute_operands.operand_of``
  of it, remembered by the hole's text (the rule is handed the attribute at offset 0, so
  its names and text are all it reads). An attribute the rule refuses sends the call to
  be judged on its own. The FFI facts and the parameter order are remembered by the
  attribute operands without their values (``judging.valueless``: what they are handed),
  the facts' target written in per target.
- Any other hole (``api_version = 4 : i32``, a name in a type's encoding) is *pinned*:
  its text is part of the key of the shape, which is parsed with it in place.

The replacement of a call is one ``str.format`` pattern per shape and valueless attribute
operands (``replacement.py``), made from the shape's ``judging.written_view``
(the view that every path writes from) with each sentinel a field for its hole's text,
and each attribute value from a hole a field for the call's own operand's value: the
writer (``mlir_text``) only joins the texts it is given, so a field stays a field.

Shapes that differ only in the sizes written in their types share lark's parse
(``rewriter/syntax/dimensions.py``); each is judged as a shape of its own.

``tests/test_call_shapes.py`` checks that a rewrite with shapes reused equals one that
parses every statement, on mutated call-dense exports; ``tests/test_rule_edits.py`` that it
does with rules edited to read more of their input.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from ..syntax import model
from ..syntax.blanks import HOLE_SENTINELS, Hole, cut_at_sentinels, sentinel
from ..syntax.calls import CallSyntaxError, parse_call
from ..syntax.dimensions import SizedModels
from ..syntax.grammar import parser
from ..syntax.holes import FoundShapes, KnownShape, ShapeFinder
from ..syntax.scan import CallSite, Scan
from ..syntax.source import LineCounter, Source
from ..syntax.to_model import custom_call_from_tree
from .attribute_operands import (
    AttributeOperand,
    UnsupportedAttribute,
    but_value,
    ffi_leaves,
    operand_of,
)
from .calling_conventions import Abi
from .judging import (
    CallReport,
    Problem,
    Signature,
    decide_extern,
    judge,
    judge_signature,
    judged_view,
    left_alone_report,
    of_target,
    rewritten_report,
    valueless,
    written_view,
)

_SENTINEL_MARK = "$rw"
_SHARED = 256  # values a shape remembers the operands of, to share between its calls
_VALUES = ("float", "int", "bool")

# A string with holes: literal pieces and hole indices, in order.
Template = tuple[str | int, ...]
Offset = tuple[int, int]  # (group, delta): see CallShape


def _fill(template: Template, holes: tuple[str, ...]) -> str:
    if len(template) == 1:  # most are one hole, or one piece of text
        part = template[0]
        return part if isinstance(part, str) else holes[part]
    return "".join(part if isinstance(part, str) else holes[part] for part in template)


# Exact types of model values that hold no string: skipped unopened (a span is in every
# attribute; a boolean is no exact int).
_NO_STRINGS = frozenset({int, bool, bytes, type(None), model.Span})


def _strings(value: Any) -> list[str]:
    """Every string inside a model value (dataclasses, tuples, lists)."""
    found: list[str] = []
    pending = [value]
    while pending:
        item = pending.pop()
        kind = type(item)  # exact types first, the common ones
        if kind is str:
            found.append(item)
        elif kind is tuple or kind is list:
            pending.extend(item)
        elif kind in _NO_STRINGS:
            continue
        elif isinstance(item, str):  # a str Enum
            found.append(item)
        elif isinstance(item, (tuple, list)):
            pending.extend(item)
        elif model.field_names_if_dataclass(kind) is not None:  # None for a class itself
            pending.extend(item.__dict__.values())  # its fields (the model's have no slots)
    return found


def _format_pattern(template: Template) -> str:
    """``template`` as a ``str.format`` pattern: its text escaped, hole k as the positional
    field ``{k}`` (``str.format`` finds those faster than items of an argument)."""
    return "".join(
        escape_format(part) if isinstance(part, str) else f"{{{part}}}" for part in template
    )


def escape_format(text: str) -> str:
    """``text`` written into a ``str.format`` pattern as itself."""
    return text.replace("{", "{{").replace("}", "}}")


@dataclass(eq=False)
class _Leaf:
    """An attribute of the FFI dictionary whose value is a hole: its place among the call's
    attribute operands, its hole, its names, its model in the shape's parse, and the
    operands of the values seen (with their ``valueless`` selves)."""

    index: int
    hole: int
    keys: tuple[str, ...]
    parsed: model.NumberAttr | model.BoolAttr
    # By the hole's text: its operand, its ``valueless`` operand's number in the shape,
    # and its value.
    operands: dict[str, tuple[AttributeOperand, int, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        parsed, self.path = self.parsed, ".".join(self.keys)  # ``operand_of``'s path, once
        # What follows the literal in the attribute's text (its type), the shape's
        self.after = (
            "" if isinstance(parsed, model.BoolAttr) else parsed.text[len(parsed.literal) :]
        )

    def attribute(self, text: str) -> model.Attr:
        """Lark's model of this attribute with ``text`` in its hole, parsed at offset 0: the
        same tokens (point 2), the literal's token value ``text``; ``to_model`` copies it
        as the literal and the start of the attribute's text, and reads a boolean's value
        as ``true``; the type after it is the shape's (``tests/test_call_shapes.py``)."""
        parsed = self.parsed
        if isinstance(parsed, model.BoolAttr):  # `true` or `false`: a short span
            return model.BoolAttr(text, _SPANS[len(text)], text == "true")
        whole = text + self.after
        span = _SPANS[len(whole)] if len(whole) < len(_SPANS) else model.Span(0, len(whole))
        return model.NumberAttr(whole, span, text, parsed.type, parsed.is_float)


_SPANS = [model.Span(0, length) for length in range(64)]  # ``Span(0, n)``, shared


@dataclass(slots=True)
class _Judged:
    """Selection and the signature of a shape's calls of one target: the view they judged,
    and why the calls are left alone, or their signature; neither: in error."""

    view: model.CustomCall
    reason: str | None
    signature: Signature | None
    # By a call's key (its leaves' valueless operands, numbered): the extern of this
    # target (``of_target(decide_extern(...), target)``) and its ``PlacedCall.named``.
    decided: dict[tuple[int, ...], tuple[Any, dict[int, Any]]] = field(default_factory=dict)


@dataclass
class CallShape:
    """Lark's parse of one statement shape, and where its holes go.

    ``call`` is the shape's first statement's model with sentinels in its holes (pinned
    holes hold their text); offsets in it count from the statement's start."""

    call: model.CustomCall
    source: Source  # the text the shape was parsed from
    # The call's start, end and target in a statement: ``delta``, plus the end of the
    # statement's hole ``group - 1`` (the matcher's group ``group``) when ``group`` > 0.
    start_at: Offset
    end_at: Offset
    target_at: Offset
    target: Template
    holes: int  # fields of the patterns from the statement: its holes, then its leaves' values
    view: model.CustomCall  # judging.judged_view of ``call``
    written: model.CustomCall  # judging.written_view of ``call``
    # Per attribute operand: the operand of an attribute without holes; None for a leaf.
    constants: tuple[AttributeOperand | None, ...]
    leaves: tuple[_Leaf, ...]
    target_hole: int | None = None  # the hole that is the target, when that is all of it
    by_target: dict[str, _Judged] = field(default_factory=dict)
    # By the leaves' hole texts: the attribute operands, the numbers of the leaves'
    # valueless operands (``valueless``), and the leaves' operands' values.
    by_values: dict[tuple[str, ...], tuple[Any, ...]] = field(default_factory=dict)
    # Each valueless operand of a leaf (``but_value``), numbered: a call's key is its
    # leaves' numbers.
    numbers: dict[tuple[object, ...], int] = field(default_factory=dict)
    memo: dict[object, Any] = field(default_factory=dict)  # what the planner derives

    def __post_init__(self) -> None:
        holes = [leaf.hole for leaf in self.leaves]
        # The leaves' hole texts of a statement's hole texts (a slice: a tuple of one or none).
        self.values_of: Callable[[tuple[str, ...]], tuple[str, ...]] = (
            itemgetter(*holes)
            if len(holes) > 1
            else itemgetter(slice(holes[0], holes[0] + 1) if holes else slice(0))
        )

    def text(self, text: str) -> str:
        """A text of the shape's call (its results, an operand, its location) as a
        ``str.format`` pattern over the statement's holes."""
        return _format_pattern(cut_at_sentinels(text, HOLE_SENTINELS))

    def value(self, index: int, value: str) -> str:
        """The value of attribute operand ``index`` as a pattern: a field after the
        statement's holes for a leaf's, else itself."""
        for order, leaf in enumerate(self.leaves):
            if leaf.index == index:
                return f"{{{self.holes - len(self.leaves) + order}}}"
        return escape_format(value)


class Literal:
    """The ``text``/``value`` patterns of a call parsed on its own: its texts written in."""

    holes = 0

    def text(self, text: str) -> str:
        return escape_format(text)

    def value(self, index: int, value: str) -> str:
        return escape_format(value)


LITERAL = Literal()


@dataclass(slots=True)
class PlacedCall:
    """One custom call statement: its shape, and what is its own."""

    shape: CallShape | None  # None: parsed on its own
    own_call: model.CustomCall | None  # the statement's own call; None: the shape's
    start: int  # the statement's first non-blank character
    end: int  # the end of the op
    target_start: int
    target: str
    # The fields of its shape's patterns: the statement's hole texts, then its leaves'
    # operand values; () for a call parsed on its own.
    holes: tuple[str, ...]
    module: int
    report: CallReport
    key: tuple[int, ...] = ()  # its leaves' valueless operands, numbered by the shape
    named: dict[int, Any] | None = None  # the planner's, for its shape, target and key

    @property
    def call(self) -> model.CustomCall:
        if self.own_call is not None:
            return self.own_call
        assert self.shape is not None
        return self.shape.call

    @property
    def fields(self) -> CallShape | Literal:
        """How the call's texts are written into its replacement's pattern."""
        return self.shape if self.shape is not None else LITERAL


# select(view, target) -> why a call of that target is left alone, or None.
Select = Callable[[model.CustomCall, str], "str | None"]

_UNSEEN: Any = object()  # a shape not built yet
_NO_ERRORS: tuple[Any, ...] = ()


@dataclass(eq=False)
class _Pinned:
    """A shape with pinned holes: its shapes by the pinned holes' texts."""

    holes: frozenset[int]
    shapes: dict[tuple[str, ...], CallShape | None] = field(default_factory=dict)


class CallShapes:
    """Places every custom call of one file, parsing each shape once."""

    def __init__(
        self,
        source: Source,
        scan: Scan,
        select: Select,
        abi: Abi,
        *,
        reuse: bool = True,
        found: FoundShapes | None = None,
    ):
        self.source = source
        self.scan = scan
        self.select = select
        self.abi = abi
        self.reuse = reuse  # False: every statement parsed on its own (the reference)
        # ``found``: the statements' shapes a validation of the same text found
        self.finder = ShapeFinder() if found is None else found.finder
        self.found_at = {} if found is None else found.at
        self.lines = LineCounter(source)  # calls are placed in file order
        self.models = _shared_models()
        # By the finder's shape; None: a shape not to reuse.
        self.shapes: dict[KnownShape, CallShape | _Pinned | None] = {}

    def place(self, site: CallSite) -> tuple[PlacedCall, Sequence[Any]]:
        """The call at ``site`` and the errors judging it gave; raises CallSyntaxError."""
        if not self.reuse:
            return self._place_exact(site)
        # A statement that goes on past its first line never parses as its first line
        # (its brackets are open there), so that line is its shape or its key to none.
        found = self.found_at.get(site.statement)  # the same text's: the same statement
        if found is None:
            text = self.source.text
            end = text.find("\n", site.keyword)
            found = self.finder.find(text[site.statement : end if end >= 0 else len(text)])
        known, hole_texts, end_of = found
        shape = self.shapes.get(known, _UNSEEN)
        if shape is _UNSEEN:
            shape = self.shapes[known] = self._build(known.made_from, known.holes)
        if type(shape) is _Pinned:
            shape = self._pinned(shape, known, hole_texts)
        placed = None if shape is None else self._instance(shape, site, hole_texts, end_of)
        if placed is None:
            return self._place_exact(site)
        return placed, _NO_ERRORS

    def _pinned(
        self, pinned: _Pinned, known: KnownShape, hole_texts: tuple[str, ...]
    ) -> CallShape | None:
        """The shape of a statement with pinned holes: parsed with their texts in place."""
        texts = tuple([hole_texts[k] for k in sorted(pinned.holes)])
        shape = pinned.shapes.get(texts, _UNSEEN)
        if shape is _UNSEEN:
            pieces = known.literals
            parts = [pieces[0]]
            holes: list[Hole] = []
            start = len(pieces[0])
            for k, (_, _, kind) in enumerate(known.holes):
                parts.append(hole_texts[k])
                holes.append((start, start + len(hole_texts[k]), kind))
                parts.append(pieces[k + 1])
                start += len(hole_texts[k]) + len(pieces[k + 1])
            built = self._build("".join(parts), holes, pinned.holes)
            shape = pinned.shapes[texts] = built if isinstance(built, CallShape) else None
        return shape

    def _instance(
        self,
        shape: CallShape,
        site: CallSite,
        hole_texts: tuple[str, ...],
        end_of: Callable[[int], int],
    ) -> PlacedCall | None:
        """A call of ``shape``; None when it is to be judged on its own (an error)."""
        if shape.target_hole is not None:
            target = hole_texts[shape.target_hole]
        else:
            target = _fill(shape.target, hole_texts)
        judged = shape.by_target.get(target)
        if judged is None:
            judged = shape.by_target[target] = self._judged(shape, target)
        statement = site.statement
        group, delta = shape.start_at
        start = statement + delta + (end_of(group) if group else 0)
        line, column = self.lines.line_col(start, statement)
        key: tuple[int, ...] = ()
        fields, named = hole_texts, None
        if judged.reason is not None:
            view, reason = judged.view, judged.reason
            report = left_alone_report(self.source.filename, line, column, view, target, reason)
        elif judged.signature is None:
            return None
        else:
            values = shape.values_of(hole_texts)
            operands = shape.by_values.get(values)
            if operands is None:
                operands = self._operands(shape, values)
                if operands is None:
                    return None
            attributes, key, own_values = operands
            if own_values:
                fields = hole_texts + own_values
            decided = judged.decided.get(key)
            if decided is None:
                extern = shape.memo.get(key)
                if extern is None:
                    extern = shape.memo[key] = decide_extern(
                        self.abi, judged.signature, valueless(attributes)
                    )
                decided = judged.decided[key] = (of_target(extern, target), {})
            report = rewritten_report(
                self.source.filename, line, column, target, judged.signature, attributes, decided[0]
            )
            named = decided[1]
        group, delta = shape.end_at
        end = statement + delta + (end_of(group) if group else 0)
        group, delta = shape.target_at
        target_start = statement + delta + (end_of(group) if group else 0)
        module = self.scan.module_of(site.keyword)
        return PlacedCall(
            shape, None, start, end, target_start, target, fields, module, report, key, named
        )

    def _judged(self, shape: CallShape, target: str) -> _Judged:
        """Selection of the shape's calls of ``target`` (on the shape's view and the target),
        and the signature of the shape's calls (on its view alone; see the module
        docstring)."""
        reason = self.select(shape.view, target)
        if reason:
            return _Judged(shape.view, reason, None)
        signature = shape.memo.get("signature", _UNSEEN)
        if signature is _UNSEEN:
            try:
                signature = judge_signature(shape.view)
            except (Problem, RecursionError):
                signature = None  # each call judged on its own, for its errors
            shape.memo["signature"] = signature
        return _Judged(shape.view, None, signature)

    def _operands(self, shape: CallShape, values: tuple[str, ...]) -> tuple[Any, ...] | None:
        """The attribute operands of a call whose leaves hold ``values``, the leaves'
        ``valueless`` operands and their operands' values; None when an attribute is in
        error (the call is judged on its own, for its diagnostic)."""
        attributes: list[Any] = list(shape.constants)
        numbers: list[int] = []
        own: list[str] = []
        for leaf, text in zip(shape.leaves, values):  # noqa: B905 (as many; a keyword: a slower call)
            one = leaf.operands.get(text)
            if one is None:
                try:
                    operand = operand_of(leaf.keys, leaf.attribute(text), leaf.path)
                except (UnsupportedAttribute, RecursionError):
                    return None
                number = shape.numbers.setdefault(but_value(operand), len(shape.numbers))
                one = (operand, number, operand.value)
                if len(leaf.operands) < _SHARED:
                    leaf.operands[text] = one
            attributes[leaf.index] = one[0]
            numbers.append(one[1])
            own.append(one[2])
        operands = (tuple(attributes), tuple(numbers), tuple(own))
        if len(shape.by_values) < _SHARED:
            shape.by_values[values] = operands
        return operands

    def _place_exact(self, site: CallSite) -> tuple[PlacedCall, list[Any]]:
        call = parse_call(self.source, self.scan, site)
        report, errors = judge(self.source, call, self.select, self.abi)
        placed = PlacedCall(
            None,
            call,
            call.span.start,
            call.span.end,
            call.target_span.start,
            call.target,
            (),
            call.module,
            report,
        )
        return placed, errors

    def _build(
        self, piece: str, holes: list[Hole], pinned: frozenset[int] = frozenset()
    ) -> CallShape | _Pinned | None:
        """The shape of ``piece``, parsed with sentinels in its holes (but the ``pinned``
        ones); a ``_Pinned`` when holes other than those must be pinned, None when it is
        not to be reused (see the module docstring)."""
        if _SENTINEL_MARK in piece or HOLE_SENTINELS.search(piece):
            return None  # a sentinel's text of its own: where would its hole's go?
        parts: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        position = length = 0
        for index, (start, end, kind) in enumerate(holes):
            text = piece[start:end] if index in pinned else sentinel(kind, index)
            parts.append(piece[position:start])
            length += start - position
            starts.append(length)
            parts.append(text)
            length += len(text)
            ends.append(length)
            position = end
        parts.append(piece[position:])
        canonical = "".join(parts)
        for index, (_, _, kind) in enumerate(holes):
            if kind == "float" and index not in pinned:
                if canonical.count(sentinel(kind, index)) != 1:
                    return None
        try:
            import lark

            call = self.models.parse(canonical)
            leaves = ffi_leaves(call)
        except (lark.exceptions.LarkError, RecursionError):
            return None  # parsed for real, statement by statement, with its own diagnostic
        free = [k for k in range(len(holes)) if k not in pinned]
        # Leaves: each FFI attribute holds no hole, or is one value hole whole.
        constants: list[AttributeOperand | None] = []
        shape_leaves: list[_Leaf] = []
        for keys, attribute in leaves:
            inside = _holes_inside(starts, attribute.span, free)
            if not inside:
                try:
                    constants.append(operand_of(keys, attribute))
                except (UnsupportedAttribute, RecursionError):
                    return None
                continue
            hole = inside[0]
            literal = (
                attribute.text
                if isinstance(attribute, model.BoolAttr)
                else getattr(attribute, "literal", None)
            )
            whole = (
                len(inside) == 1
                and holes[hole][2] in _VALUES
                and isinstance(attribute, (model.NumberAttr, model.BoolAttr))
                and attribute.span.start == starts[hole]
                and literal == canonical[starts[hole] : ends[hole]]
                and attribute.text.startswith(literal)
            )
            if not whole:
                return None
            assert isinstance(attribute, (model.NumberAttr, model.BoolAttr))
            shape_leaves.append(_Leaf(len(constants), hole, keys, attribute))
            constants.append(None)
        # Holes to pin: value holes that are no leaf, sentinels the view holds.
        at_leaves = {leaf.hole for leaf in shape_leaves}
        to_pin = {k for k in free if holes[k][2] in _VALUES and k not in at_leaves}
        written = written_view(call)
        view = judged_view(call, written)
        target = cut_at_sentinels(call.target, HOLE_SENTINELS)
        for match in HOLE_SENTINELS.finditer("\0".join(_strings(view))):
            to_pin.add(int(match.group(1) or match.group(2)))
        if to_pin:
            return _Pinned(pinned | to_pin) if not pinned else None
        at = [call.span.start, call.span.end, call.target_span.start]
        offsets = [_offset(starts, ends, offset) for offset in at]
        if None in offsets:
            return None
        start_at, end_at, target_at = offsets
        assert start_at is not None and end_at is not None and target_at is not None
        shape = CallShape(
            call,
            Source(canonical, self.source.filename),
            start_at,
            end_at,
            target_at,
            target,
            len(holes) + len(shape_leaves),
            view,
            written,
            tuple(constants),
            tuple(shape_leaves),
        )
        if len(target) == 1 and isinstance(target[0], int):
            shape.target_hole = target[0]
        return shape


def _holes_inside(starts: list[int], span: model.Span, free: list[int]) -> list[int]:
    """The free holes that start inside ``span``."""
    first = bisect.bisect_left(starts, span.start)
    last = bisect.bisect_left(starts, span.end)
    return [k for k in range(first, last) if k in free]


def _parse_statement(text: str) -> Any:
    return parser().parse(text, start="custom_call_stmt")


def _statement_model(tree: Any, text: str) -> model.CustomCall:
    return custom_call_from_tree(tree, text, 0)


# The statement models of every rewrite, by the parse and model functions in use.
_MODELS: dict[tuple[object, object], SizedModels] = {}
_KEPT_PARSES = 1024  # a shape's parse is a few hundred small objects


def _shared_models() -> SizedModels:
    """Statement models by their text apart from sizes, shared by every rewrite of the
    process: the shapes of a file like one rewritten before cost no lark parse (the
    fixed cost of a rewrite). ``SizedModels`` says why what it keeps is sound; kept by the
    functions that make it (``_parse_statement``, ``custom_call_from_tree``), so that
    a parse made by other functions (one edited, or wrapped by a test) is not served."""
    key = (_parse_statement, custom_call_from_tree)
    models = _MODELS.get(key)
    if models is None:
        _MODELS.clear()
        models = _MODELS[key] = SizedModels(_parse_statement, _statement_model, _KEPT_PARSES)
    return models


def _offset(starts: list[int], ends: list[int], offset: int) -> Offset | None:
    """Where ``offset`` of the shape's text is in a statement of the shape: after which
    hole, by how much (None if inside a hole)."""
    before = bisect.bisect_left(starts, offset)  # holes that start before it
    if before == 0:
        return 0, offset
    if offset < ends[before - 1]:
        return None
    return before, offset - ends[before - 1]


__all__ = ["CallShape", "CallShapes", "CallSyntaxError", "PlacedCall"]
