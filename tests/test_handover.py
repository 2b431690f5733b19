"""The hand-over from IREE's MLIR to upstream MLIR 22: i1 constants in hex, bit-packed."""

from __future__ import annotations

import pytest

from rewriter.compile.toolchain import bit_packed_i1

CASES = [
    (  # one byte per element (iree-opt) -> eight elements a byte, the first lowest
        'initial_value = dense<"0x01000001000001000001000001000001"> : tensor<16xi1>',
        'initial_value = dense<"0x4992"> : tensor<16xi1>',
    ),
    (  # a partial last byte, several dimensions
        'value = dense<"0x010101010101010101010000"> : tensor<3x4xi1>',
        'value = dense<"0xFF03"> : tensor<3x4xi1>',
    ),
    (  # up to eight elements: a list, since one byte could be read as a splat
        'value = dense<"0x0001000100"> : vector<5xi1>',
        "value = dense<[false, true, false, true, false]> : vector<5xi1>",
    ),
    (  # already bit-packed, other types, splats: unchanged
        'value = dense<"0x4992"> : tensor<16xi1>',
        'value = dense<"0x4992"> : tensor<16xi1>',
    ),
    (
        'value = dense<"0x0100000002000000"> : tensor<2xi32>',
        'value = dense<"0x0100000002000000"> : tensor<2xi32>',
    ),
    ("value = dense<true> : tensor<128xi1>", "value = dense<true> : tensor<128xi1>"),
]


@pytest.mark.parametrize(("before", "after"), CASES)
def test_i1_hex_constants_are_bit_packed(before: str, after: str):
    assert bit_packed_i1(before) == after
