"""The table of attribute kinds (``rewriter/plan/attribute_kinds.py``): each row's rule
makes operands of that kind, and each layer takes what it does with an attribute from its
kind's row, not from the attribute's type text.

The pairs: an attribute in a call's backend_config, then its kind and the row's columns
(the rule, the FFI kind, the C parameter, the IREE value), derived by hand from
abi/README.md ("How each attribute is passed").
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest
from planning_pairs import call_of, statement

from rewriter.emit import header
from rewriter.iree import values
from rewriter.plan import attribute_kinds, attribute_operands, ffi_facts
from rewriter.plan.attribute_kinds import (
    KINDS,
    CParameter,
    FfiKind,
    IreeValue,
    OperandKind,
    UnknownKind,
    kind_of,
)
from rewriter.plan.attribute_operands import attribute_operands as operands_of

ROOT = Path(__file__).resolve().parent.parent

PAIRS = [
    # attribute, kind, rule, ffi, C parameter, IREE value
    ("7 : ui8", "integer", "_number", "scalar", "scalar", "integer"),
    ("-3 : si32", "integer", "_number", "scalar", "scalar", "integer"),
    ("5", "integer", "_number", "scalar", "scalar", "integer"),
    ("true", "bool", "_bool", "scalar", "scalar", "bool"),
    ("1 : i1", "bool", "_number", "scalar", "scalar", "bool"),
    ("1.5 : f32", "float", "_number", "scalar", "scalar", "float"),
    ("2.5", "float", "_number", "scalar", "scalar", "float"),
    ("1.0 : bf16", "half", "_number", "scalar", "scalar", "half_bits"),
    ("1.0 : f16", "half", "_number", "scalar", "scalar", "half_bits"),
    ('"ab"', "string", "_string_operand", "string", "descriptor", "bytes"),
    ("array<i64: 4, 5>", "array", "_array", "array", "descriptor", "array"),
    ("dense<[1, 2]> : tensor<2xui8>", "dense", "_dense", "array", "descriptor", "array"),
]


def test_every_kind_has_one_row_and_a_pair():
    assert set(KINDS) == set(OperandKind)
    assert {row.kind for row in KINDS.values()} == set(OperandKind)
    assert {pair[1] for pair in PAIRS} == {kind.value for kind in OperandKind}


@pytest.mark.parametrize(
    ("attribute", "kind", "rule", "ffi", "c_parameter", "iree_value"),
    PAIRS,
    ids=[pair[0] for pair in PAIRS],
)
def test_the_rule_makes_the_kind_its_row_describes(
    monkeypatch: pytest.MonkeyPatch,
    attribute: str,
    kind: str,
    rule: str,
    ffi: str,
    c_parameter: str,
    iree_value: str,
):
    """The operand of ``attribute`` has ``kind``, and is made by a function the row names
    (``_bool`` for ``true``; ``_number`` for ``1 : i1``, a number that passes as a
    boolean)."""
    called: list[str] = []
    for name in {rule for row in KINDS.values() for rule in row.rules}:
        original = getattr(attribute_operands, name)

        def recording(*args, _original=original, _name=name):
            called.append(_name)
            return _original(*args)

        monkeypatch.setattr(attribute_operands, name, recording)
    (operand,) = operands_of(call_of(statement(f"{{a = {attribute}}}")))
    row = operand.kind
    assert (row.kind, row.ffi, row.c_parameter, row.iree_value) == (
        kind,
        ffi,
        c_parameter,
        iree_value,
    )
    assert called == [rule]
    assert rule in KINDS[OperandKind(kind)].rules


def test_kind_of_refuses_a_type_no_rule_makes():
    for source in ("f8E4M3FN", "index", "complex<f32>", "", "tuple<i32>"):
        with pytest.raises(UnknownKind, match="the type of no attribute operand"):
            kind_of(source)


def test_own_element_keeps_signedness():
    assert attribute_kinds.own_element("array<ui8>") == "ui8"
    assert attribute_kinds.own_element("tensor<2x3xsi16>") == "si16"
    assert attribute_kinds.own_element("ui8") is None
    assert attribute_kinds.own_element("string") is None


# ---------------------------------------------------------------- consumers follow the table


def _with_row(monkeypatch: pytest.MonkeyPatch, kind: OperandKind, **columns) -> None:
    monkeypatch.setitem(KINDS, kind, dataclasses.replace(KINDS[kind], **columns))


def _operand(attribute: str):
    (operand,) = operands_of(call_of(statement(f"{{a = {attribute}}}")))
    return operand


def test_the_header_takes_the_c_parameter_from_the_row(monkeypatch: pytest.MonkeyPatch):
    string = _operand('"ab"')
    assert header.attribute_c_type(string) == "rw_memref_i8_1d *"
    _with_row(monkeypatch, OperandKind.STRING, c_parameter=CParameter.SCALAR)
    with pytest.raises(header.NoCType, match="string is no scalar type"):
        header.attribute_c_type(string)


def test_ffi_facts_take_the_ffi_kind_from_the_row(monkeypatch: pytest.MonkeyPatch):
    dense = _operand("dense<[1, 2]> : tensor<2xui8>")
    (fact,) = ffi_facts.attribute_facts([dense])
    assert (fact.kind, fact.dtype, fact.dims) == (FfiKind.ARRAY, "u8", (2,))
    _with_row(monkeypatch, OperandKind.DENSE, ffi=FfiKind.STRING)
    (fact,) = ffi_facts.attribute_facts([dense])
    assert fact.kind == FfiKind.STRING


def test_the_iree_value_follows_the_row(monkeypatch: pytest.MonkeyPatch):
    raw = np.frombuffer(b"ab", np.int8)
    assert values.attribute_value(raw, "string") == b"ab"
    assert values.attribute_value(raw, "array<ui8>").tolist() == [97, 98]
    assert values.attribute_value(-1, "ui8") == np.uint8(255)
    assert values.attribute_value(0x3F80, "bf16").item() == 1.0
    _with_row(monkeypatch, OperandKind.STRING, iree_value=IreeValue.ARRAY)
    with pytest.raises(TypeError):  # string has no element type to view the bytes as
        values.attribute_value(raw, "string")


# Where the type text of an attribute may be looked at to tell its kind: the table and the
# rules that write it.
_KIND_TESTS = re.compile(r"source_type\s*(==|!=|in\b)|source_type\.startswith|source\.startswith")


def test_no_other_module_tells_a_kind_from_the_type_text():
    allowed = {"rewriter/plan/attribute_kinds.py", "rewriter/plan/attribute_operands.py"}
    offenders = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sorted((ROOT / "rewriter").rglob("*.py"))
        if str(path.relative_to(ROOT)) not in allowed
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if _KIND_TESTS.search(line)
    ]
    assert offenders == []
