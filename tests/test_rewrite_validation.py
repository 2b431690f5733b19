"""The validation of a rewrite reuses its input's line shapes, and says what the plain
validation of the rewritten text says (``rewriter/syntax/rewrite_validation.py``)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import rewriter
from fuzz.rewrite import seeds
from rewriter.api import validate_input, validate_rewrite
from rewriter.plan.edits import Edit, apply_edits
from rewriter.syntax import validation
from rewriter.syntax.rewrite_validation import Validated, first_error_of_rewrite, validated
from rewriter.syntax.source import Source

pytestmark = pytest.mark.jax

CALL_DENSE = Path(__file__).parent / "data" / "call_dense"
# What a broken edit gets: characters that end, start or split tokens, and names.
BREAKS = list('%#:=",.@{}()<>0 \n') + ["%x", "@k", "loc(#", "}\n", "{\n", '"s']


def exports() -> list[str]:
    """The sample exports, jax's back-compat corpus and the call-dense exports, as text."""
    texts = [data.decode("utf-8") for data in seeds()]
    return texts + [path.read_text() for path in sorted(CALL_DENSE.glob("*.mlir"))]


def rewrites() -> list[tuple[Validated, list[Edit]]]:
    """Each export that has calls to rewrite: its validation and the rewrite's edits."""
    found = []
    for text in exports():
        result = rewriter.analyze(text)
        outcome = validated(Source(text))
        if result.edits and isinstance(outcome, Validated):
            found.append((outcome, result.edits))
    return found


def broken(edits: list[Edit], rng: random.Random) -> list[Edit]:
    """``edits`` with one to three of them broken: a character dropped or one of BREAKS
    put in."""
    edits = list(edits)
    for _ in range(rng.randint(1, 3)):
        index = rng.randrange(len(edits))
        start, end, text = edits[index]
        at = rng.randrange(len(text) + 1)
        if text and rng.random() < 0.3:
            text = text[:at] + text[at + 1 :]
        else:
            text = text[:at] + rng.choice(BREAKS) + text[at:]
        edits[index] = Edit(start, end, text)
    return edits


def test_a_rewrite_gets_the_diagnostic_of_its_plain_validation():
    """On real rewrites, and on rewrites whose edits are broken (so that errors fall in the
    edited lines, and in the untouched lines after them, whose stacks differ), the
    validation that reuses the input's shapes reports what the plain one does."""
    rng = random.Random(21)
    cases = rewrites()
    assert len(cases) > 20
    checked = errors = 0
    for input_, edits in cases:
        assert (
            first_error_of_rewrite(Source(apply_edits(input_.text, edits)), input_, edits) is None
        )
    for _ in range(300):
        input_, edits = rng.choice(cases)
        edits = broken(edits, rng)
        text = apply_edits(input_.text, edits)
        expected = validation.first_error(Source(text))
        assert first_error_of_rewrite(Source(text), input_, edits) == expected
        checked += 1
        errors += expected is not None
    assert 60 < errors < checked - 60  # both outcomes well represented


def test_lines_no_edit_touches_are_not_shaped_again(shaped_lines: list[str]):
    """Only the lines an edit touches are shaped: in an export with a call per layer, a
    small part of its lines."""
    text = (Path(__file__).parent.parent / "samples" / "mlp_model" / "mlp_model.mlir").read_text()
    result = rewriter.rewrite(text)
    input_ = validated(Source(text))
    assert isinstance(input_, Validated)
    shaped_lines.clear()
    assert first_error_of_rewrite(Source(result.text), input_, result.edits) is None
    touched = sum(edit.text.count("\n") + 2 for edit in result.edits)  # and both ends' lines
    assert 0 < len(shaped_lines) <= touched < result.text.count("\n") / 4


def test_validate_rewrite_raises_where_the_rewrite_leaves_the_grammar():
    """The API: an error in what the rewrite wrote is reported in the rewrite, at its
    place; a result of another text than the one validated is validated whole."""
    text = (CALL_DENSE / "regions_48.mlir").read_text()
    input_ = validate_input(text, filename="m.mlir")
    result = rewriter.rewrite(text)
    validate_rewrite(result, input_, filename="m.mlir (rewritten)")
    index = max(i for i, edit in enumerate(result.edits) if "func.call" in edit.text)
    edit = result.edits[index]
    result.edits[index] = Edit(edit.start, edit.end, edit.text.replace("func.call", "func.call %"))
    result.text = apply_edits(result.original, result.edits)
    with pytest.raises(rewriter.RewriteError) as raised:
        validate_rewrite(result, input_, filename="m.mlir (rewritten)")
    (diagnostic,) = raised.value.diagnostics
    line = result.text[: result.text.index("func.call %")].count("\n") + 1
    assert (diagnostic.filename, diagnostic.line) == ("m.mlir (rewritten)", line)
    assert diagnostic == validation.first_error(Source(result.text, "m.mlir (rewritten)"))
    other = rewriter.rewrite((CALL_DENSE / "layouts_48.mlir").read_text())
    validate_rewrite(other, input_)  # not input_'s text: validated whole, and it parses


def test_the_rewrite_s_validation_starts_from_the_input_s_outcomes(lexed_lines: list[str]):
    """The rewrite's validation starts from the outcomes the input's remembered: lines
    shaped as the input's, from stacks it met, are not lexed again. It starts from a copy:
    a rewrite whose validation failed on an integer out of range (after which lines go
    unchecked) leaves nothing behind for the next rewrite of the same input."""
    text = (CALL_DENSE / "regions_48.mlir").read_text()
    input_ = validate_input(text)
    result = rewriter.rewrite(text)

    def lexed_in(input_: Validated, edits: list[Edit]) -> int:
        lexed_lines.clear()
        assert first_error_of_rewrite(Source(result.text), input_, edits) is None
        return len(lexed_lines)

    alone = Validated(input_.text, input_.shapes, input_.calls)  # nothing remembered
    assert lexed_in(input_, result.edits) < lexed_in(alone, result.edits) - 10
    calls = [i for i, edit in enumerate(result.edits) if "func.call" in edit.text]

    def with_bad_constants(*indices: int) -> list[Edit]:
        edits = list(result.edits)
        for index in indices:
            start, end, replacement = edits[index]
            bad = f"%bad_{index} = arith.constant 300 : i8\n    "
            edits[index] = Edit(start, end, bad + replacement)
        return edits

    for edits in [with_bad_constants(calls[1], calls[-1]), with_bad_constants(calls[-1])]:
        rewritten = Source(apply_edits(text, edits))
        found = first_error_of_rewrite(rewritten, input_, edits)
        assert found is not None and "300" in found.message
        assert found == validation.first_error(rewritten)
