"""The validation of a rewrite, which reuses its input's: the lines no edit touched are
not shaped again.

A rewrite is its input with edits (spans replaced by text). Its lines are of two kinds:

- Lines an edit touches, from the start of the line where it starts to the end of the
  line where it ends: parsed as the plain validation parses every line
  (``Validation.lines``).
- Lines no edit touches: the input's own lines, in the same order. A line's shape is a
  function of its text alone (``LineShapes.of``), so each is the shape the input's
  validation traced for it, and the line is looked up and, if new in its state stack,
  parsed by that shape as the plain validation would. Making a shape is most of what a
  line costs (the lookup is a tenth of it); the stacks differ, the rewrite holding
  declarations the input had not, so outcomes are looked up again.

The rewrite's validation starts from a copy of the outcomes the input's remembered (an
outcome is fixed by the stack and the shape, in any text: ``validation``): a line shaped
as one of the input's, from a stack the input's validation met or one with the same top
states (a function's lines, below which the rewrite declared externs), is not lexed again.

Every line is thus parsed or looked up by the shape the plain validation gives it, from
the same stacks, so the outcome is the plain validation's (``first_error`` of the
rewrite's text), which ``tests/test_rewrite_validation.py`` checks on mutated rewrites.
What it saves is the shaping of the lines between calls: most of an export with a call
per layer, none of one with a call on every line.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from .diagnostics import Diagnostic
from .holes import FoundShapes
from .source import Source
from .validation import Remembered, Unexpected, Validation, first_error

Span = tuple[int, int, str]  # an edit: the span start:end of the input, and its text


@dataclass(frozen=True)
class Validated:
    """A text that validated, the shape of each of its lines (``Validation``), the
    shapes of its custom call statements, which a rewrite of the text takes, and the
    outcomes its validation remembered, which the rewrite's starts from (a copy)."""

    text: str
    shapes: list[str | None] = field(repr=False)
    calls: FoundShapes = field(default_factory=FoundShapes, repr=False)
    remembered: Remembered = field(default_factory=Remembered, repr=False)
    plain: bool = False  # validated by the reference path: nothing remembered


def validated(source: Source) -> Validated | Diagnostic:
    """``source`` validated, or the first place where it leaves the grammar."""
    shapes: list[str | None] = []
    calls = FoundShapes()
    remembered = Remembered()
    error = first_error(source, shapes, calls, remembered)
    return Validated(source.text, shapes, calls, remembered) if error is None else error


def first_error_of_rewrite(
    rewritten: Source, input_: Validated, edits: Sequence[Span]
) -> Diagnostic | None:
    """The first place where ``rewritten``, the validated input's text with ``edits``,
    leaves the grammar, or None: what ``first_error(rewritten)`` says."""
    text, original, shapes = rewritten.text, input_.text, input_.shapes
    validation = Validation(text, remembered=input_.remembered.copy())
    position = line = 0  # the next line of the input not yet parsed, and its number
    shift = 0  # how far the rewrite's text is ahead of the input's at ``position``
    try:
        for start, end, rewritten_end in _blocks(original, edits):
            if start > position:  # the lines no edit touches, [position, start) of the input
                validation.lines(position + shift, start + shift, shapes, line)
            validation.lines(start + shift, rewritten_end)  # the edited lines, in the rewrite
            line += original.count("\n", position, end)  # the untouched lines', the block's
            position, shift = end, rewritten_end - end
        validation.lines(position + shift, len(text), shapes, line)  # after the last edit
        validation.finish()
    except Unexpected as error:
        return Diagnostic.at(rewritten, error.offset, error.message)
    return None


Block = tuple[int, int, int]


def _blocks(original: str, edits: Sequence[Span]) -> Iterator[Block]:
    """The blocks of lines the edits touch: for each, where its lines start and end in the
    input (a line start, and a line's end after its line break or the end of the text),
    and where they end in the rewrite. Edits that share a line are one block."""
    shift = 0  # what the edits before the current block added
    block_start = block_end = -1
    added = 0  # what the current block's edits add
    for start, end, replacement in sorted(edits, key=lambda edit: (edit[0], edit[1])):
        if start >= block_end:
            if block_end != -1:
                yield block_start, block_end, block_end + shift + added
                shift += added
            block_start = original.rfind("\n", 0, start) + 1
            block_end = _line_end(original, end)
            added = 0
        else:
            block_end = max(block_end, _line_end(original, end))
        added += len(replacement) - (end - start)
    if block_end != -1:
        yield block_start, block_end, block_end + shift + added


def _line_end(text: str, offset: int) -> int:
    """The end of the line holding ``offset``: after its line break, or the end of text."""
    return text.find("\n", offset) + 1 or len(text)
