"""The custom calls the scan finds (``rewriter/syntax/scan.py``): where each statement
starts, and the error for a call that does not start its own line, derived by hand."""

from __future__ import annotations

import pytest

from rewriter.syntax.model import CallForm
from rewriter.syntax.scan import scan
from rewriter.syntax.source import Source

_CALL = "stablehlo.custom_call @k(%a) : (tensor<f32>) -> tensor<f32>"
_GENERIC = '"stablehlo.custom_call"(%a) {call_target_name = "k"} : (tensor<f32>) -> tensor<f32>'
_OUT_OF_PLACE = "a custom call must start its own line (with only its results before it)"


def _module(*lines: str) -> str:
    body = "".join(f"    {line}\n" for line in lines)
    return (
        "module {\n  func.func @f(%a: tensor<f32>) -> tensor<f32> {\n"
        f"{body}    return %a : tensor<f32>\n  }}\n}}\n"
    )


def test_each_call_starts_its_statement_at_its_line():
    """Lines 3 to 5: a pretty call with one result, a generic one, one with two results;
    each statement starts at its line's start, each keyword after the results."""
    text = _module(f"%0 = {_CALL}", f"%1 = {_GENERIC}", f"%2:2 = {_CALL}")
    found = scan(Source(text))
    assert not found.diagnostics
    starts = [text.index(f"    %{n}") for n in range(3)]
    assert [call.statement for call in found.calls] == starts
    assert [call.keyword for call in found.calls] == [
        starts[0] + 9,
        starts[1] + 9,
        starts[2] + 11,
    ]
    assert [call.form for call in found.calls] == [
        CallForm.PRETTY,
        CallForm.GENERIC,
        CallForm.PRETTY,
    ]


@pytest.mark.parametrize("generic", [False, True])
def test_a_call_after_other_text_on_its_line_is_an_error(generic):
    """Line 4 holds an op before the second pretty call: the error is at that call's
    keyword, column 29 (4 blanks, the 19 characters of ``"x.y"() : () -> () ``, then
    ``%1 = ``); the calls before and after it (and a generic one) are in place."""
    lines = [f"%0 = {_CALL}", f'"x.y"() : () -> () %1 = {_CALL}', f"%2 = {_CALL}"]
    if generic:
        lines.append(f"%3 = {_GENERIC}")
    found = scan(Source(_module(*lines), "t.mlir"))
    assert [(d.line, d.column, d.message) for d in found.diagnostics] == [(4, 29, _OUT_OF_PLACE)]
