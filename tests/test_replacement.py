"""A call's replacement text (rewriter/plan/replacement.py): the pattern is parsed once and
each call's text joined from its pieces; that is what ``str.format`` of the pattern gives."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from rewriter.api import read_source, scan
from rewriter.plan import planner
from rewriter.plan.call_shapes import escape_format
from rewriter.plan.naming import ValueNamer, ssa_base
from rewriter.plan.replacement import ReplacementForm

DATA = Path(__file__).parent / "data" / "call_dense"


@st.composite
def forms(draw: st.DrawFn) -> tuple[ReplacementForm, int]:
    """A pattern of literal text (braces escaped) and fields: holes, fresh names, the callee."""
    holes = draw(st.integers(0, 4))
    hints = tuple(draw(st.lists(st.sampled_from(["eps", "a.b", "0x", "eps"]), max_size=3)))
    fields = [f"{{{index}}}" for index in range(holes + len(hints))] + ["{callee}"]
    parts = draw(
        st.lists(st.sampled_from(fields) | st.text("ab{}%@ \n").map(escape_format), max_size=12)
    )
    # A form always holds its callee's field and some text (`func.call @`).
    pattern = "".join(["func.call @{callee}(", *parts, ")"])
    return ReplacementForm(pattern, holes, hints), holes


@settings(max_examples=300, deadline=None)
@given(forms(), st.data())
def test_a_text_is_the_pattern_formatted(form_and_holes, data):
    form, holes = form_and_holes
    texts = tuple(data.draw(st.lists(st.text("x{}%0", max_size=3), min_size=holes, max_size=holes)))
    callee = data.draw(st.sampled_from(["k", "k_{0}", "{callee}"]))
    taken = {"eps"}
    fresh = ValueNamer(taken).fresh_from([ssa_base(hint) for hint in form.hints])
    expected = form.pattern.format(*texts, *fresh, callee=callee)
    fields = form.fields(texts, ValueNamer(taken), callee)
    assert form.text(fields) == expected


def test_every_call_of_the_call_dense_exports_is_written_as_its_pattern_formatted():
    """The forms the planner makes, on the calls it makes them for."""
    checked = 0
    for path in sorted(DATA.glob("*.mlir")):
        source = read_source(path.read_text(), path.name)
        found = scan(source)
        shapes = planner._call_shapes(source, found, None, None, planner.C_ABI, True)
        joined, formatted = ValueNamer(found.values), ValueNamer(found.values)
        for site in found.calls:
            placed, _ = shapes.place(site)
            form = planner._replacement_of(placed, "\n")
            fresh = formatted.fresh_from([ssa_base(hint) for hint in form.hints])
            expected = form.pattern.format(*placed.holes, *fresh, callee="kernel")
            fields = form.fields(placed.holes, joined, "kernel")
            assert form.text(fields) == expected
            checked += 1
    assert checked > 200  # the calls of five exports of 48 layers
