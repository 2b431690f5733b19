"""Rules 2 and 3 (``rewriter/plan/attribute_operands.py``) as before/after pairs: the
attributes of a call in, its extra operands out (abi/README.md, "How each attribute is
passed")."""

from __future__ import annotations

import pytest
from planning_pairs import assert_pair, call_of, operands_text, statement

from rewriter.plan.attribute_operands import UnsupportedAttribute, ffi_leaves, operand_of


@pytest.mark.parametrize(
    ("backend_config", "operands"),
    [
        pytest.param("{eps = 1.5 : f32}", "eps: f32 -> 1.5 : f32", id="f32 keeps its literal"),
        pytest.param(
            "{x = 0x7FC00000 : f32, y = -2.5e-01 : f64}",
            "x: f32 -> 0x7FC00000 : f32\ny: f64 -> -2.5e-01 : f64",
            id="hexadecimal bits and exponents as written",
        ),
        pytest.param("{u = 2.5}", "u: f64 -> 2.5 : f64", id="an untyped float is f64"),
        pytest.param(
            "{h = 1.0 : f16, b = 2.0 : bf16}",
            "b: bf16 -> 2.0 : bf16 passed as i16\nh: f16 -> 1.0 : f16 passed as i16",
            id="half floats travel as their bits, sorted by name",
        ),
        pytest.param(
            "{n = 76 : ui8, m = -3 : si32, k = 7 : i64}",
            "k: i64 -> 7 : i64\nm: si32 -> -3 : i32\nn: ui8 -> 76 : i8",
            id="integers signless",
        ),
        pytest.param("{n = 5}", "n: i64 -> 5 : i64", id="an untyped integer is i64"),
        pytest.param("{flag = true}", "flag: i1 -> true", id="a boolean takes no type"),
        pytest.param(
            '{name = "ab"}',
            'name: string -> dense<"0x6162"> : tensor<2xi8>',
            id="a string as its bytes (a, b: 0x61, 0x62)",
        ),
        pytest.param(
            "{cfg = {b = 1 : i32, a = {z = 2 : i32}}, top = 3 : i32}",
            "cfg.a.z: i32 -> 2 : i32\ncfg.b: i32 -> 1 : i32\ntop: i32 -> 3 : i32",
            id="dictionaries flattened depth first, sorted at every level",
        ),
        pytest.param(
            "{d = dense<[1, 2, 3]> : tensor<3xui8>}",
            "d: tensor<3xui8> -> dense<[1, 2, 3]> : tensor<3xi8>",
            id="a dense attribute with signless elements",
        ),
        pytest.param(
            "{a = array<i64: 4, 5>}",
            "a: array<i64> -> dense<[4, 5]> : tensor<2xi64>",
            id="an array as a tensor constant",
        ),
        pytest.param("{}", "", id="no attributes, no operands"),
    ],
)
def test_attributes_become_operands(backend_config: str, operands: str):
    assert_pair(operands_text, statement(backend_config), operands)


@pytest.mark.parametrize(
    ("backend_config", "message"),
    [
        ("{x = 1.0 : f8E4M3FN}", "attribute 'x' has type f8E4M3FN; the calling contract passes"),
        ("{n = 300 : i8}", "attribute 'n': integer constant 300 out of range for i8"),
        ("{s = @f}", "attribute 's' is a symbol reference, which the calling contract cannot"),
        ("{l = [1, 2]}", "attribute 'l' is a list, which the calling contract cannot pass"),
    ],
)
def test_attributes_the_contract_cannot_pass_are_refused(backend_config: str, message: str):
    with pytest.raises(UnsupportedAttribute) as raised:
        operands_text(statement(backend_config))
    assert raised.value.message.startswith(message)


@pytest.mark.parametrize(
    "backend_config",
    ["{eps = 1.5 : f32}", "{a = {b = 7 : ui8}}", "{n = 300 : i8}", "{s = @f}"],
)
def test_a_path_handed_in_is_the_path_joined(backend_config: str):
    """``operand_of(keys, attr, path)`` (a shape's leaf hands its path, joined once) makes
    what ``operand_of(keys, attr)`` makes, and refuses at the same offset of the file."""
    for keys, attr in ffi_leaves(call_of(statement(backend_config))):
        outcomes = []
        for path in (None, ".".join(keys)):
            try:
                outcomes.append(operand_of(keys, attr, path))
            except UnsupportedAttribute as error:
                outcomes.append((error.offset, error.message))
        assert attr.span.start > 0  # moved to offset 0 for the rule
        assert outcomes[0] == outcomes[1]
