"""The closed sets of words (statuses, severities, kinds, forms) are Enums whose members are
also their words: every way a word leaves the rewriter (``==`` with a plain string,
f-strings, ``format()``, dictionary keys, ``json.dumps`` and ``json_text``, the notebook
view, ``--list`` lines and JSON) reads exactly as the plain word would."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

import rewriter
from rewriter import cli
from rewriter.emit import json_text, notebook
from rewriter.plan.attribute_kinds import CParameter, IreeValue, OperandKind
from rewriter.plan.calling_conventions import Abi, AbiKind
from rewriter.plan.ffi_facts import AttributeKind
from rewriter.plan.status import Status
from rewriter.syntax.diagnostics import Severity
from rewriter.syntax.model import CallForm, TypeKind

ENUMS = (
    Status,
    Severity,
    TypeKind,
    CallForm,
    AttributeKind,
    AbiKind,
    OperandKind,
    CParameter,
    IreeValue,
)
MEMBERS = [member for enum in ENUMS for member in enum]

CALL = "stablehlo.custom_call @{target}(%arg0) {{mhlo.backend_config = {{}}}} : (tensor<2xf32>)"
MODULE = f"""module {{
  func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {{
    %0 = {CALL.format(target="scale")} -> tensor<2xf32>
    %1 = {CALL.format(target="keep")} -> tensor<2xf32>
    %2 = {CALL.format(target="pack")} -> tuple<tensor<2xf32>>
    return %0 : tensor<2xf32>
  }}
}}
"""


@pytest.mark.parametrize("member", MEMBERS, ids=repr)
def test_a_member_reads_as_its_word(member):
    word = member.value
    assert type(word) is str
    assert member == word and word == member and member is type(member)(word)
    assert str(member) == word and type(str(member)) is str
    assert f"{member}" == word and f"{member!s}" == word and "%s" % (member,) == word  # noqa: UP031
    assert format(member, ">12") == format(word, ">12")
    assert hash(member) == hash(word)
    assert {word: 1}[member] == 1 and {member: 1}[word] == 1
    assert json.dumps({member: [member]}) == json.dumps({word: [word]})
    assert json_text.dumps({member: [member, {"k": member}]}) == json.dumps(
        {word: [word, {"k": word}]}, indent=2
    )
    assert repr(member) == f"<{type(member).__name__}.{member.name}: {word!r}>"


def _analyzed():
    return rewriter.analyze(MODULE, skip=["keep"], filename="m.mlir")


def test_reports_and_diagnostics_carry_the_enums():
    result = _analyzed()
    assert [report.status for report in result.calls] == ["rewritten", "left alone", "error"]
    assert [report.status for report in result.calls] == list(Status)
    assert [d.severity for d in result.errors] == [Severity.ERROR]
    assert rewriter.Status is Status and rewriter.Severity is Severity


def test_views_of_a_report_read_as_with_plain_words():
    """The notebook view, the --list line and the --list JSON of each report are those of
    the same report with its status as a plain str (what they were before the Enums)."""
    result = _analyzed()
    for report in result.calls:
        plain = replace(report, status=str(report.status))
        assert type(plain.status) is str
        assert notebook.render_call(report) == notebook.render_call(plain)
        assert cli._list_line(report) == cli._list_line(plain)
    plain_errors = [replace(d, severity=str(d.severity)) for d in result.errors]
    plain_calls = [replace(r, status=str(r.status)) for r in result.calls]
    listing = cli._json_file("m.mlir", result.calls, result.errors, result.warnings)
    plain_listing = cli._json_file("m.mlir", plain_calls, plain_errors, result.warnings)
    assert json_text.dumps(listing) == json.dumps(plain_listing, indent=2)
    assert '"status": "left alone"' in json_text.dumps(listing)
    assert [d.format() for d in result.errors] == [d.format() for d in plain_errors]


def test_abi_takes_its_word():
    assert Abi("iree").kind is AbiKind.IREE and Abi().kind is AbiKind.C
    assert Abi("iree") == Abi(AbiKind.IREE)
    with pytest.raises(ValueError, match="abi must be 'c' or 'iree', not 'wasm'"):
        Abi("wasm")
