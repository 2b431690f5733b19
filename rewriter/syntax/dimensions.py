"""Custom call models apart from dimension sizes: one lark parse for the statements that
differ only in the sizes written in their types.

A kernel called on many shapes (one target, dozens of signatures) gives statements that
agree but for the digits in ``tensor<4x1xf32>``, ``tensor<4x2xf32>``, ... Their holes
(``blanks.shape_of``) are the same, their shapes are not: each signature is judged on its own, as it
must be (sizes decide the extern's signature). What they share is lark's work, which is most
of what a new shape costs. So a statement is parsed with a sentinel in place of each size
(``sized_apart``), once for all statements equal to it but for sizes, and its model is the
sentinel parse's model with the sizes written back (``resize_step``: which parts of the
model hold sentinels or offsets past one is worked out once per sentinel parse, and only
those parts are rebuilt for each statement; the others are shared, being immutable).

Why that is the model lark would make of the statement itself:

1. Sizes are taken where the lexer takes a ``DIMS`` token: the digit runs of a dimension
   list ``(?:(?:[0-9]+|\\?|\\*)x)+`` right after ``tensor<``, ``memref<`` or ``vector<``, outside
   strings and comments, each run a whole component (between ``<`` or ``x`` and ``x``):
   ``blanks.dimension_lists`` finds the lists, as for a line's coarser key. The
   sentinel parse checks that each of its sentinels did lie in a ``DIMS`` token of its tree;
   if not, the statement is parsed as itself.
2. Then the two texts lex alike, token by token: up to a ``DIMS`` token they are equal, so
   the contextual lexer is in one state in both; there a digit can only start ``DIMS``
   (after ``tensor<`` no other terminal starts with a digit), whose pattern takes the same
   components from a run of other digits; after it the texts are equal again. Token types
   are equal, so the parser builds one tree; tokens differ only in the values of ``DIMS``.
3. The model (``to_model.py``) copies text between token boundaries, splits a ``DIMS`` value at
   its ``x``, decodes strings and compares values nowhere but in ``*`` (a dimension list of
   an unranked type, never a digit run). So each of its strings is the other's with each
   sentinel in place of its size, and each offset moves by the lengths the sizes before
   it changed. A statement with a backslash is parsed as itself: decoding an escape could
   make a sentinel's digits in a string that does not hold them. So is one that holds
   text the sentinels' finder takes (``blanks.SIZE_SENTINELS``): then, as a sentinel is a
   whole run of digits, all the finder takes in the text, or in a piece of it, is a whole
   sentinel, and each marks its own size and nothing else.

``tests/test_call_shapes.py`` compares these models with lark's on mutated exports.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from typing import cast

from lark import Token, Tree

from . import model
from .blanks import SIZE_SENTINELS, cut_at_sentinels, dimension_lists, sentinel

_SIZE = re.compile(r"[0-9]+")

Run = tuple[int, int]  # a size's start and end in its text


def size_runs(text: str) -> list[Run]:
    """Where ``text`` writes dimension sizes (point 1 of the module docstring)."""
    runs: list[Run] = []
    for match in dimension_lists(text):
        base = match.start(1)
        runs.extend(
            (base + size.start(), base + size.end()) for size in _SIZE.finditer(match.group(1))
        )
    return runs


def sized_apart(text: str, runs: list[Run]) -> tuple[str, list[Run]] | None:
    """``text`` with a sentinel for each size, and the sentinels' runs; None when sizes
    cannot be told apart this way (no sizes, a backslash, a sentinel's text: point 3)."""
    if not runs or "\\" in text or SIZE_SENTINELS.search(text):
        return None
    parts: list[str] = []
    sentinel_runs: list[Run] = []
    position = length = 0
    for index, (start, end) in enumerate(runs):
        parts.append(text[position:start])
        length += start - position
        size_sentinel = sentinel("size", index)
        parts.append(size_sentinel)
        sentinel_runs.append((length, length + len(size_sentinel)))
        length += len(size_sentinel)
        position = end
    parts.append(text[position:])
    return "".join(parts), sentinel_runs


def in_dims_tokens(tree: Tree, runs: list[Run]) -> bool:
    """Whether each run lies in a ``DIMS`` token of ``tree`` (point 1). Tokens do not
    overlap, so the one a run can lie in is the last that starts at or before it: found
    by bisection, for a statement of thousands of operands."""
    tokens = sorted(
        (token.start_pos or 0, token.end_pos or 0)
        for token in tree.scan_values(lambda value: isinstance(value, Token))
        if token.type == "DIMS"
    )
    starts = [start for start, _ in tokens]
    for a, b in runs:
        index = bisect_right(starts, a) - 1
        if index < 0 or b > tokens[index][1]:
            return False
    return True


# A step of a resize: rebuilds one part of the sentinel parse's model from a statement's
# sizes. A part that holds no sentinel and no offset past one has no step: it is kept.
Step = Callable[["SizesOf"], object]


class SizesOf:
    """One statement's sizes, and how far an offset after the first k sizes moves."""

    __slots__ = ("moved", "sizes")

    def __init__(self, sentinel_runs: list[Run], sizes: list[str]):
        self.sizes = sizes
        moved = [0]
        for (start, end), size in zip(sentinel_runs, sizes, strict=True):
            moved.append(moved[-1] + len(size) - (end - start))
        self.moved = moved


class _Recipe:
    """How to write sizes into one sentinel parse's model (point 3), worked out once for
    all the statements that share the parse: which strings hold which sentinels, how many
    sizes precede each offset, which parts hold neither (kept as they are). A statement's
    model is then its steps run on its sizes."""

    def __init__(self, sentinel_runs: list[Run]):
        self.runs = sentinel_runs
        self.ends = [end for _, end in sentinel_runs]
        self.first = sentinel_runs[0][0]

    def step(self, value: object) -> Step | None:
        """The step that rebuilds ``value``, or None when it is kept; raises ValueError for
        an offset inside a size (no token boundary is there)."""
        kind = type(value)  # exact types first: a str Enum (a type's kind) is no text
        if kind is str:
            return self._text(cast(str, value))
        if kind is model.Span:
            span = cast(model.Span, value)
            if span.end <= self.first:
                return None
            start, end = span.start, span.end
            before_start, before_end = self._sizes_before(start), self._sizes_before(end)
            return lambda sizes: model.Span(
                start + sizes.moved[before_start], end + sizes.moved[before_end]
            )
        if kind is tuple or kind is list:
            items = cast("tuple[object, ...] | list[object]", value)
            steps = [self.step(item) for item in items]
            if kind is tuple and not any(steps):
                return None
            return _rebuild(kind, list(items), steps)
        names = model.field_names_if_dataclass(kind)
        if names is None:
            return None  # bytes, numbers, booleans, None, enums: no size is written in them
        if isinstance(value, model.Attr) and value.span.end <= self.first:
            return None  # all of it before the first size: its text, spans and parts
        fields = [getattr(value, name) for name in names]
        steps = [self.step(field) for field in fields]
        frozen = kind.__dataclass_params__.frozen  # type: ignore[attr-defined]
        if frozen and not any(steps):
            return None  # kept, as immutable; a mutable part is each model's own
        return _rebuild(kind, fields, steps)

    def _text(self, text: str) -> Step | None:
        parts = cut_at_sentinels(text, SIZE_SENTINELS)
        if all(isinstance(part, str) for part in parts):
            return None

        def write(sizes: SizesOf) -> str:
            return "".join([part if isinstance(part, str) else sizes.sizes[part] for part in parts])

        return write

    def _sizes_before(self, offset: int) -> int:
        """How many sizes end at or before ``offset``: the runs ascend and do not overlap,
        so by bisection, and the one run ``offset`` may lie inside is the next."""
        count = bisect_right(self.ends, offset)
        if count < len(self.runs) and self.runs[count][0] < offset:
            raise ValueError("an offset inside a size")
        return count


def _rebuild(kind: type, values: list[object], steps: list[Step | None]) -> Step:
    """The step that makes a ``kind`` of ``values``, those with a step rebuilt."""
    rebuilt = [(index, step) for index, step in enumerate(steps) if step is not None]

    def run(sizes: SizesOf) -> object:
        parts = values.copy()
        for index, step in rebuilt:
            parts[index] = step(sizes)
        return kind(parts) if kind is tuple or kind is list else kind(*parts)

    return run


def resize_step(call: model.CustomCall, sentinel_runs: list[Run]) -> Step | None:
    """The step that writes a statement's sizes into ``call``, the model of the sentinel
    parse (point 3); None when an offset of the model lies inside a size."""
    try:
        return _Recipe(sentinel_runs).step(call)
    except ValueError:
        return None


class Sized:
    """A statement apart from its sizes: the sentinel parse's model (``base``), where its
    sentinels are, and the step that writes a statement's sizes into ``base``."""

    __slots__ = ("base", "runs", "step", "text")

    def __init__(self, text: str, base: model.CustomCall, runs: list[Run], step: Step):
        self.text = text  # the statement with a sentinel for each size
        self.base = base
        self.runs = runs
        self.step = step

    def sizes(self, text: str, runs: list[Run]) -> SizesOf:
        """The sizes of ``text``, a statement that is this one apart from its sizes."""
        return SizesOf(self.runs, [text[start:end] for start, end in runs])

    def model(self, sizes: SizesOf) -> model.CustomCall:
        """The model of the statement with these sizes (point 3)."""
        call = self.step(sizes)
        assert isinstance(call, model.CustomCall)
        return call


class SizedModels:
    """Custom call models by statement text, lark's parse shared between the statements
    that differ only in sizes. ``parse(text)`` is lark's model of a text; it raises on
    text that does not parse.

    One instance may serve every rewrite of a process (``call_shapes`` keeps one, with a
    ``limit``), so that a file's shapes seen before cost no lark parse. Sound because what
    it keeps by a text is made from that text alone: ``parse_tree`` and ``to_model`` read
    nothing else (the grammar is built once a process, ``grammar.parser``); a ``Sized`` is
    not changed once made; and each model it gives out is new in every mutable part
    (``_Recipe.step`` rebuilds each list and each mutable dataclass, the call itself among
    them), sharing only frozen parts, as the statements of one file already share them.
    """

    def __init__(
        self,
        parse_tree: Callable[[str], Tree],
        to_model: Callable[[Tree, str], model.CustomCall],
        limit: int | None = None,
    ):
        self.parse_tree = parse_tree
        self.to_model = to_model
        # Each sentinel parse; None: each statement parsed on its own. With ``limit``, the
        # oldest is dropped once that many are kept (an instance shared by all rewrites).
        self._apart: dict[str, Sized | None] = {}
        self.limit = limit

    def apart(self, text: str) -> tuple[Sized, SizesOf] | None:
        """The statement ``text`` is apart from its sizes, and its sizes; None when it is
        parsed as itself."""
        runs = size_runs(text)
        apart = sized_apart(text, runs)
        if apart is None:
            return None
        apart_text, sentinel_runs = apart
        kept = self._apart
        if apart_text in kept:
            sized = kept[apart_text]
        else:
            sized = self._parse_apart(apart_text, sentinel_runs)
            if self.limit is not None and len(kept) >= self.limit:
                del kept[next(iter(kept))]  # the oldest
            kept[apart_text] = sized
        if sized is None:
            return None
        return sized, sized.sizes(text, runs)

    def parse(self, text: str) -> model.CustomCall:
        found = self.apart(text)
        if found is None:
            return self.to_model(self.parse_tree(text), text)
        sized, sizes = found
        return sized.model(sizes)

    def _parse_apart(self, text: str, sentinel_runs: list[Run]) -> Sized | None:
        import lark

        try:
            tree = self.parse_tree(text)
        except lark.exceptions.LarkError:
            return None  # the statement itself is parsed, for its own outcome
        if not in_dims_tokens(tree, sentinel_runs):
            return None
        base = self.to_model(tree, text)
        # An offset inside a size: no token boundary is there; each is parsed.
        step = resize_step(base, sentinel_runs)
        return None if step is None else Sized(text, base, sentinel_runs, step)
