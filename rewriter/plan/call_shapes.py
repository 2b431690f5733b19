"""Custom call statements by shape: each shape parsed and judged once, then reused.

A call-dense export (an unrolled scan, a solver, a model whose every layer calls kernels)
repeats a few statement shapes thousands of times, differing only in SSA names, location
aliases, targets and scalar attribute values. Parsing a statement with lark costs
milliseconds; so a statement's *shape* (its text with those parts, its holes, blanked)
keys what lark and the judge made of the first statement of that shape, and later
statements of the shape only fill in their own holes.

Holes (found by ``rewriter/syntax/holes.py``, outside strings and comments), each blanked to a
member of its class:

- ``name``: the body of ``%name`` (the longest run of ``[A-Za-z0-9_$.-]``);
- ``alias``: ``X`` in ``loc(#X)``;
- ``target``: ``T`` in ``stablehlo.custom_call @T`` (a bare symbol name);
- ``float``: ``L`` in ``= L : f32`` (or ``f64``), ``L`` of the grammar's FLOAT form;
- ``int``: ``L`` in ``= L : iN`` (or ``siN``, ``uiN``), ``L`` of the INT form;
- ``bool``: ``true`` or ``false`` after ``=``, before ``,`` or ``}``.

Why a shape's outcome is each of its statements' own outcome:

1. What precedes and follows a hole ends its match (the runs are maximal, the contexts
   fixed), so statements of one shape have holes at the same places, of the same
   classes, and agree everywhere else.
2. The lexer gives every member of a class the same token type: a name body is taken
   whole by VALUE_USE, VALUE_ID or LS_RESULTS (``rewriter/syntax/validation.py`` argues it); an
   alias is one HASH_ID, a target one SYMBOL (the only terminals starting with ``#`` and
   ``@``); a FLOAT-form literal is one FLOAT token and an INT-form one an INT token (HEX
   needs an ``x``; FLOAT is tried before INT and PUNCT); ``true``/``false`` are BOOL,
   whose priority beats BARE_ID (``tests/test_call_shapes.py`` checks lark's order). The
   parser reads token types only, so the trees have one shape.
3. The shape is parsed as its first statement with sentinels in its holes. The model
   copies a hole's text without looking into it; the judge reads a value in one place
   only, the selection of targets (``selection.skip_reason``), which is asked again for
   every statement's own target. Unique sentinels (``%$rw0$``, ``#$rw1$``, ``@$rw2$``,
   a float found nowhere else) show where hole text ends up: the result binding, the
   operands, the location, the target and the constants of attributes. Integer and
   boolean holes are followed by their spans to the attribute they hold; an integer that
   its type does not take (``rewriter/syntax/integers.py``, the judge's one look at a value) is
   not filled in but parsed for real. A shape whose judged outcome holds a sentinel
   anywhere else, that fails to parse or is judged an error is not reused: its
   statements are parsed one by one, for real, so every diagnostic is their own.

Once a shape is known, its statements are found by its matcher (``holes.KnownShape``:
one regular expression match gives their holes), and their replacement text is one
``str.format`` pattern made once per shape with the holes as fields.

Shapes that differ only in the sizes written in their types (one kernel on many
signatures) share more than lark's parse (``rewriter/syntax/dimensions.py``): their
sentinel parse is judged once, and each shape's report, attribute values and replacement
are its own sizes written into that outcome (``_SizedOutcome`` argues why); a shape's own
model is made only when asked for (a layout wrapper, a call left alone).

``tests/test_call_shapes.py`` checks that a rewrite with shapes reused equals one that
parses every statement, on mutated call-dense exports.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, cast

from ..syntax import model
from ..syntax.calls import CallSyntaxError, parse_call
from ..syntax.dimensions import Sized, SizedModels, SizesOf, Step, resize_outcome_step
from ..syntax.grammar import parser
from ..syntax.holes import BLANK, FoundShapes, Hole, KnownShape, ShapeFinder
from ..syntax.scan import CallSite, Scan
from ..syntax.source import LineCounter, Source
from ..syntax.to_model import custom_call_from_tree
from .attribute_operands import ffi_attributes

_SENTINEL_MARK = "$rw"
_SHARED_OPERANDS = 256  # attribute operands a shape keeps to share between its calls
_SENTINEL = re.compile(r"\$rw([0-9]+)\$|1\.([0-9]{6})7531e\+07")
# Sizes whose judgement is their sentinel parse's (see _SizedOutcome), and the statements.
_SIZE_NUMBER = re.compile(r"[0-9]{1,18}")
_SIZED_TEXT_BOUND = 7_000_000

# A string with holes: literal pieces and hole indices, in order.
Template = tuple[str | int, ...]
Offset = tuple[int, int]  # (group, delta): see CallShape


def _sentinel(kind: str, index: int) -> str:
    if kind == "float":
        return f"1.{index:06d}7531e+07"
    if kind in ("int", "bool"):
        return BLANK[kind]  # followed by its span, not by its text
    return f"$rw{index}$"


def _fill(template: Template, holes: tuple[str, ...]) -> str:
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
        elif kind is int or item is None:
            continue
        elif isinstance(item, str):  # a str Enum
            found.append(item)
        elif isinstance(item, (tuple, list)):
            pending.extend(item)
        else:
            names = model.field_names_if_dataclass(kind)  # None for a class itself
            if names is not None:
                pending.extend([getattr(item, name) for name in names])
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


def _fields(attribute: Any) -> tuple[type, list[Any], int]:
    """An AttributeOperand's class, field values and where its value is among them: each
    call whose value is its own gets an operand built from these at once."""
    kind = type(attribute)
    return (
        kind,
        [getattr(attribute, name) for name in kind.__slots__],
        kind.__slots__.index("value"),
    )


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
    holes were; offsets in ``call`` count from the statement's start. A shape judged apart
    from its sizes (``apart``) makes its call only when asked for it: its replacement and
    its extern's declaration are made from its sentinel parse's."""

    built: model.CustomCall | None  # the call; None until asked for, with ``apart``
    report: Any  # planner.CallReport, judged as selected
    source: Source  # the text the shape was parsed from
    # The call's start, end and target in a statement: ``delta``, plus the end of the
    # statement's hole ``group - 1`` (the matcher's group ``group``) when ``group`` > 0.
    start_at: Offset
    end_at: Offset
    target_at: Offset
    target: Template
    attribute_values: tuple[tuple[int, Template], ...]  # (index in report.attributes, value)
    memo: dict[object, Any]  # what later stages derive from the shape alone
    holes: int  # the statements' holes: fields 0 to holes - 1 of the patterns
    # The hole that is the target, when that is all of it (as in every export).
    target_hole: int | None = None
    # Per target: why its calls are left alone, or their reports' field values.
    by_target: dict[str, tuple[str | None, list[Any]]] = field(default_factory=dict)
    # The attribute operands of a call, from its holes; None when no value is a hole.
    operands: FilledOperands | None = None
    # Judged apart from its sizes: the shape of its sentinel parse, and its sizes.
    apart: tuple[CallShape, Sized, SizesOf] | None = None
    # The shape of a sentinel parse: its outcome, to write a statement's sizes into.
    sized_outcome: _SizedOutcome | None = None

    @property
    def call(self) -> model.CustomCall:
        if self.built is None:
            assert self.apart is not None
            _, sized, sizes = self.apart
            self.built = sized.model(sizes)
        return self.built

    @property
    def selected_by(self) -> model.CustomCall:
        """The call selection (rule 6) is asked about: it reads the target, given apart,
        and the names of the attributes, which a statement shares with its sentinel parse
        (``dimensions.py``)."""
        return self.apart[0].call if self.apart is not None else self.call

    def outcome(self, sizes: SizesOf) -> tuple[Any, tuple[tuple[int, Template], ...]]:
        """The report and attribute values of a statement with ``sizes`` whose sentinel
        parse this shape is (see ``_SizedOutcome``)."""
        assert self.sized_outcome is not None
        return self.sized_outcome.of(sizes)

    def sized_text(self, text: str) -> str:
        """``text``, made from the shape of its sentinel parse, with the shape's sizes."""
        if self.apart is None:
            return text
        _, sized, sizes = self.apart
        return sized.write(text, sizes)

    def text(self, text: str) -> str:
        """A text of the shape's call (its results, an operand, its location) as a
        ``str.format`` pattern over the statement's holes ``h``."""
        return _format_pattern(_template(text))

    def value(self, index: int, value: str) -> str:
        """The value of attribute operand ``index`` as a pattern over the holes ``h``."""
        for filled, template in self.attribute_values:
            if filled == index:
                return _format_pattern(template)
        return escape_format(value)


class FilledOperands:
    """The attribute operands of a shape's calls, from their hole texts. Calls that agree
    in their values share one tuple, and calls that agree in one value its operand (up to
    a few hundred of each a shape): exports repeat most values, and 70k calls of a dozen
    attributes must fit in memory. What a call needs is worked out once per shape: which
    holes are the values (an ``itemgetter`` when each value is one hole, as numbers are),
    and each filled operand's class and other fields."""

    def __init__(self, attributes: tuple[Any, ...], filled: tuple[tuple[int, Template], ...]):
        self.attributes = list(attributes)
        templates = [template for _, template in filled]
        holes = [part for template in templates for part in template if type(part) is int]
        if len(holes) == len(templates) and all(len(template) == 1 for template in templates):
            self.values_of: Callable[[tuple[str, ...]], tuple[str, ...]] = (
                itemgetter(*holes) if len(holes) > 1 else lambda texts: (texts[holes[0]],)
            )
        else:
            self.values_of = lambda texts: tuple([_fill(t, texts) for t in templates])
        self.slots = [(index, *_fields(attributes[index])) for index, _ in filled]
        self.by_values: dict[tuple[str, ...], tuple[Any, ...]] = {}
        self.by_value: dict[tuple[int, str], Any] = {}

    def of(self, holes: tuple[str, ...]) -> tuple[Any, ...]:
        """The attribute operands of a call with these hole texts."""
        values = self.values_of(holes)
        found = self.by_values.get(values)
        if found is not None:
            return found
        attributes, shared = self.attributes.copy(), self.by_value
        for (index, kind, fields, at), value in zip(self.slots, values, strict=True):
            operand = shared.get((index, value))
            if operand is None:
                fields = fields.copy()
                fields[at] = value
                operand = kind(*fields)
                if len(shared) < _SHARED_OPERANDS:
                    shared[index, value] = operand
            attributes[index] = operand
        found = tuple(attributes)
        if len(self.by_values) < _SHARED_OPERANDS:
            self.by_values[values] = found
        return found


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
    holes: tuple[str, ...]  # the statement's hole texts; () for a call parsed on its own
    module: int
    report: Any  # planner.CallReport

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


# judge(source, call, reason) -> (report, errors): plan's rules for one parsed call; with
# a reason the report says the call is left alone.
Judge = Callable[[Source, model.CustomCall, "str | None"], tuple[Any, list[Any]]]
# select(call, target) -> why a call of that target is left alone, or None.
Select = Callable[[model.CustomCall, str], "str | None"]


_UNSEEN: Any = object()  # a shape not built yet
_ONE_SHAPE: Any = object()  # a sentinel parse that one shape has been built from
_NO_ERRORS: tuple[Any, ...] = ()


class CallShapes:
    """Places every custom call of one file, parsing and judging each shape once."""

    def __init__(
        self,
        source: Source,
        scan: Scan,
        judge: Judge,
        select: Select,
        *,
        reuse: bool = True,
        found: FoundShapes | None = None,
    ):
        self.source = source
        self.scan = scan
        self.judge = judge
        self.select = select
        self.reuse = reuse  # False: every statement parsed on its own (the reference)
        # ``found``: the statements' shapes a validation of the same text found
        self.finder = ShapeFinder() if found is None else found.finder
        self.found_at = {} if found is None else found.at
        self.lines = LineCounter(source)  # calls are placed in file order
        self.models = SizedModels(_parse_statement, _statement_model)
        # By the finder's shape (one per shape key); None: a shape not to reuse.
        self.shapes: dict[KnownShape, CallShape | None] = {}
        # By sentinel parse text: its shape, judged; None: each statement judged itself.
        self.sized_shapes: dict[str, CallShape | None] = {}

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
        # An integer its type does not take is an error: the statement is parsed for real.
        if shape is None or (known.int_holes and not known.integers_taken(hole_texts)):
            return self._place_exact(site)
        return self._instance(shape, site, hole_texts, end_of), _NO_ERRORS

    def _instance(
        self,
        shape: CallShape,
        site: CallSite,
        hole_texts: tuple[str, ...],
        end_of: Callable[[int], int],
    ) -> PlacedCall:
        statement = site.statement
        group, delta = shape.start_at
        start = statement + delta + (end_of(group) if group else 0)
        group, delta = shape.end_at
        end = statement + delta + (end_of(group) if group else 0)
        group, delta = shape.target_at
        target_start = statement + delta + (end_of(group) if group else 0)
        if shape.target_hole is not None:
            target = hole_texts[shape.target_hole]
        else:
            target = _fill(shape.target, hole_texts)
        judged = shape.by_target.get(target)
        if judged is None:
            judged = shape.by_target[target] = self._judged_for(shape, target)
        reason, fields = judged
        if reason is None:
            report = type(shape.report)(*fields)
            if shape.operands is not None:
                report.attributes = shape.operands.of(hole_texts)
        else:
            report, _ = self.judge(shape.source, shape.call, reason)
            report.target = target
        report.line, report.column = self.lines.line_col(start, statement)
        return PlacedCall(
            shape,
            None,
            start,
            end,
            target_start,
            target,
            hole_texts,
            self.scan.module_of(site.keyword),
            report,
        )

    def _judged_for(self, shape: CallShape, target: str) -> tuple[str | None, list[Any]]:
        """Whether calls of ``target`` with this shape are left alone (the reason), and
        else the field values of their reports (the shape's, with the target's own)."""
        reason = self.select(shape.selected_by, target)
        facts = shape.report.ffi_facts
        if facts is not None and facts.target != target:
            facts = _clone(facts, target=target)
        report = _clone(shape.report, ffi_facts=facts, target=target)
        return reason, [getattr(report, name) for name in type(report).__slots__]

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
            (),
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
        ends: list[int] = []
        position = length = 0
        for index, (start, end, kind) in enumerate(holes):
            sentinel = _sentinel(kind, index)
            parts.append(piece[position:start])
            length += start - position
            starts.append(length)
            parts.append(sentinel)
            length += len(sentinel)
            ends.append(length)
            position = end
        parts.append(piece[position:])
        canonical = "".join(parts)
        for index, (_, _, kind) in enumerate(holes):
            if kind == "float" and canonical.count(_sentinel(kind, index)) != 1:
                return None
        try:
            import lark

            found = self.models.apart(canonical)
            call = None
            if found is None:
                call = self.models.to_model(self.models.parse_tree(canonical), canonical)
        except (lark.exceptions.LarkError, RecursionError):
            return None  # parsed for real, statement by statement, with its own diagnostic
        source = Source(canonical, self.source.filename)
        apart = None
        if found is not None and len(canonical) < _SIZED_TEXT_BOUND:
            apart = self._judged_apart(found[0], found[1], holes, starts)
        attribute_values: tuple[tuple[int, Template], ...] | None
        if apart is not None:
            base, sized, sizes = apart
            report, attribute_values = base.outcome(sizes)
            spans = (base.call.span, base.call.target_span)
            at = [sized.moved(offset, sizes) for offset in (spans[0].start, spans[0].end)]
            at.append(sized.moved(spans[1].start, sizes))
            target = base.target
        else:
            if call is None:
                assert found is not None
                call = found[0].model(found[1])
            report, errors = self.judge(source, call, None)
            if errors:
                return None
            attribute_values = _attribute_values(call, report, holes, starts)
            if attribute_values is not None and _leaks(call, report, attribute_values):
                return None
            at = [call.span.start, call.span.end, call.target_span.start]
            target = _template(call.target)
        offsets = [_offset(starts, ends, offset) for offset in at]
        if attribute_values is None or None in offsets:
            return None
        start_at, end_at, target_at = offsets
        assert start_at is not None and end_at is not None and target_at is not None
        shape = CallShape(
            call,
            report,
            source,
            start_at,
            end_at,
            target_at,
            target,
            attribute_values,
            {},
            len(holes),
            apart=apart,
        )
        if len(shape.target) == 1 and isinstance(shape.target[0], int):
            shape.target_hole = shape.target[0]
        if attribute_values:
            shape.operands = FilledOperands(report.attributes, attribute_values)
        return shape

    def _judged_apart(
        self, sized: Sized, sizes: SizesOf, holes: list[Hole], starts: list[int]
    ) -> tuple[CallShape, Sized, SizesOf] | None:
        """The shape of a statement's sentinel parse, judged once for all the statements
        that share the parse, whose outcome is theirs with their sizes written in (see
        ``_SizedOutcome``); None when a statement is to be judged on its own. The first
        shape of a sentinel parse is (most have only one: judging the parse too would
        cost what it saves twice over); the second judges the parse."""
        if not all(_SIZE_NUMBER.fullmatch(size) for size in sizes.sizes):
            return None
        base = self.sized_shapes.get(sized.text, _UNSEEN)
        if base is _UNSEEN:
            self.sized_shapes[sized.text] = _ONE_SHAPE
            return None
        if base is _ONE_SHAPE:
            base = self.sized_shapes[sized.text] = self._sized_shape(sized, sizes, holes, starts)
        return None if base is None else (base, sized, sizes)

    def _sized_shape(
        self, sized: Sized, sizes: SizesOf, holes: list[Hole], starts: list[int]
    ) -> CallShape | None:
        """The shape of the sentinel parse ``sized``, judged; None when ``_build`` would not
        reuse it. Only its call, report, attribute values, target and holes are read."""
        # Where the holes of a statement (at ``starts``) are in the sentinel parse's text:
        # no hole is inside a size, so each moves back by what the sizes before it moved.
        ends = [end + sizes.moved[k + 1] for k, (_, end) in enumerate(sized.runs)]
        apart_starts = [start - sizes.moved[bisect.bisect_right(ends, start)] for start in starts]
        source = Source(sized.text, self.source.filename)
        report, errors = self.judge(source, sized.base, None)
        if errors:
            return None
        attribute_values = _attribute_values(sized.base, report, holes, apart_starts)
        if attribute_values is None or _leaks(sized.base, report, attribute_values):
            return None
        report_step = resize_outcome_step(report, sized.runs)
        if report_step is None:
            return None
        outcome = _SizedOutcome(
            report_step, attribute_values, resize_outcome_step(attribute_values, sized.runs)
        )
        nowhere = (0, 0)
        return CallShape(
            sized.base,
            report,
            source,
            nowhere,
            nowhere,
            nowhere,
            _template(sized.base.target),
            attribute_values,
            {},
            len(holes),
            sized_outcome=outcome,
        )


@dataclass(slots=True)
class _SizedOutcome:
    """What the judge made of a statement apart from its sizes (``dimensions.py``), as steps
    that write a statement's sizes in: its report, and its attribute values from holes.

    Why the judge's outcome for a statement is the sentinel parse's outcome with its sizes
    written in, as text into strings and as numbers into ints equal to a sentinel's value,
    for a statement whose every size has at most 18 digits, and that is shorter than
    ``_SIZED_TEXT_BOUND``:

    1. The statement's model is the sentinel parse's with its sizes written in
       (``dimensions.py``). Types keep their kind, element type and rank; attributes their
       classes and everything but the sizes in their types' texts.
    2. The judge (``planner._judge``, rules 6 and 7, attribute operands, layouts, FFI
       facts, the ABI's parameter order) reads a size in three ways only: it copies its
       text (operand and result types, ``layouts.physical``, a dense attribute's signless
       type), asks whether a dimension is ``?`` (no size is), and converts it to a number
       (``Type.sizes`` and ``parse_tensor`` for FFI facts), which it stores. It compares
       no size with anything, computes with none, and ``int`` takes every size (at most
       18 digits: far below Python's limit on digits, past which ``int`` raises and the
       FFI facts are None). Every other number it makes is an
       index or a count below the statement's length (ranks, permutations, parameter
       order, array and string lengths), or read from the statement's text: a text with
       a sentinel's value holds the sentinel's digits, which occur only at the sentinel
       (``sized_apart``); below ``_SIZED_TEXT_BOUND`` no count reaches a sentinel's value
       (they start at 7000003). So the ints equal to a sentinel's value are its size's, and
       the strings hold a sentinel's digits exactly where they hold its size.
    3. ``_attribute_values`` pairs the same holes with the same attributes in both (the
       spans move with the sizes, and the holes with them), and ``_leaks`` looks for hole
       sentinels, which hold no size and which no size's digits make or break (a size is
       written between non-digits).

    So the outcome is the statement's own, as long as it is reused at all: the statement
    is judged on its own when its sentinel parse is not reused (an error, a leak).
    ``tests/test_call_shapes.py`` compares this with parsing and judging every statement,
    on exports whose sizes are mutated."""

    report_step: Step
    attribute_values: tuple[tuple[int, Template], ...]
    values_step: Step | None

    def of(self, sizes: SizesOf) -> tuple[Any, tuple[tuple[int, Template], ...]]:
        """The report and attribute values of the statement with these sizes."""
        values = self.attribute_values
        if self.values_step is not None:
            values = cast("tuple[tuple[int, Template], ...]", self.values_step(sizes))
        return self.report_step(sizes), values


def _parse_statement(text: str) -> Any:
    return parser().parse(text, start="custom_call_stmt")


def _statement_model(tree: Any, text: str) -> model.CustomCall:
    return custom_call_from_tree(tree, text, 0)


def _offset(starts: list[int], ends: list[int], offset: int) -> Offset | None:
    """Where ``offset`` of the shape's text is in a statement of the shape: after which
    hole, by how much (None if inside a hole)."""
    before = bisect.bisect_left(starts, offset)  # holes that start before it
    if before == 0:
        return 0, offset
    if offset < ends[before - 1]:
        return None
    return before, offset - ends[before - 1]


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
        if operand is None or report.attributes[operand].value != BLANK[holes[hole][2]]:
            return None
        values.append((operand, (hole,)))
    for index, attribute in enumerate(report.attributes):
        if _SENTINEL.search(attribute.value):
            values.append((index, _template(attribute.value)))
    return tuple(sorted(values))


def _leaks(
    call: model.CustomCall, report: Any, attribute_values: tuple[tuple[int, Template], ...]
) -> bool:
    """Whether a sentinel reached any part of the outcome that is not filled per call: all
    of the report but its target, the values of the attributes filled from holes and the
    target of its FFI facts; and the parts of the call that are not rewritten per call."""
    filled = {index for index, _ in attribute_values}
    parts: list[Any] = [call.indent, call.input_types, call.result_types, call.results_text]
    parts.append(call.form)
    for name in type(report).__slots__:
        if name not in ("target", "attributes", "ffi_facts"):
            parts.append(getattr(report, name))
    for index, attribute in enumerate(report.attributes):
        parts.append(_fields_but(attribute, "value") if index in filled else attribute)
    if report.ffi_facts is not None:
        parts.append(_fields_but(report.ffi_facts, "target"))
    # "\0" is in no sentinel: joined, no two strings make one
    return _SENTINEL.search("\0".join(_strings(parts))) is not None


def _fields_but(value: Any, name: str) -> list[Any]:
    """The fields of a slotted dataclass instance but one."""
    return [getattr(value, other) for other in type(value).__slots__ if other != name]


__all__ = ["CallShape", "CallShapes", "CallSyntaxError", "PlacedCall"]
