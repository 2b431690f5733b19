"""What an XLA FFI handler is told of a call (``rewriter/plan/ffi_facts.py``) as
before/after pairs: a call in, the ``rewriter.xla_ffi`` description of its extern out. Its
dtypes are XLA's names (``s32``, ``u8``, ``pred``), its dims the logical ones with the
layout minor-to-major, its attributes the leaves' types, and shape operands (jax's
``indices_of_shape_operands``) are named."""

from __future__ import annotations

import pytest
from planning_pairs import assert_pair, facts_text, statement

from rewriter.plan.ffi_facts import parse_facts


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            statement("{eps = 1.0e-05 : f32}", "(tensor<10x10xf32>) -> tensor<10x10xf32>"),
            '{attributes = {eps = "f32"}, operands = ["f32[10,10]{1,0}"], '
            'results = ["f32[10,10]{1,0}"], target = "k"}',
            id="the tutorial's rms_norm",
        ),
        pytest.param(
            statement(
                '{n = 3 : ui8, s = "ab", a = array<i64: 1, 2>, d = {x = true}}',
                "(tensor<2xi32>, tensor<?x4xi1>) -> (tensor<2xui8>, tensor<f64>)",
            ),
            '{attributes = {a = "s64[2]", d = {x = "pred"}, n = "u8", s = "string"}, '
            'operands = ["s32[2]{0}", "pred[?,4]{1,0}"], results = ["u8[2]{0}", "f64[]"], '
            'target = "k"}',
            id="every kind of attribute, dynamic and 0-d tensors",
        ),
        pytest.param(
            "%0 = stablehlo.custom_call @k(%arg0) {mhlo.backend_config = {}, "
            "operand_layouts = [dense<[0, 1]> : tensor<2xindex>], "
            "result_layouts = [dense<[0, 1]> : tensor<2xindex>]} "
            ": (tensor<3x5xf32>) -> tensor<3x5xf32>",
            '{attributes = {}, operands = ["f32[3,5]{0,1}"], results = ["f32[3,5]{0,1}"], '
            'target = "k"}',
            id="a column-major layout kept as XLA writes it",
        ),
    ],
)
def test_a_call_s_description(before: str, after: str):
    assert_pair(facts_text, before, after)


def test_a_description_reads_back_as_written():
    text = facts_text(statement('{n = 3 : ui8, s = "ab"}', "(tensor<2xi32>) -> tensor<2xi32>"))
    assert parse_facts(text).attribute_value() == text
