"""Slicing along a symbolic dimension (``x[1:]``, ``x[2:-2]``, ``jnp.diff``, a shift by one)
runs on both paths and gives ``jax.jit``'s
elements (rewriter/compile/dynamic_slices.py): jax writes each such slice as a
``stablehlo.dynamic_gather`` of one slice, which IREE does not lower."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths
from jax import export

import rewriter
from rewriter.compile.dynamic_slices import one_slice_dynamic_gathers

VECTOR = jax.ShapeDtypeStruct(export.symbolic_shape("b"), np.float32)
ROWS = jax.ShapeDtypeStruct(export.symbolic_shape("b, 4"), np.float32)
PLANE = jax.ShapeDtypeStruct(export.symbolic_shape("b, n"), np.float32)


def differences(x):
    return jnp.diff(x)


def the_middle_rows(x):
    return x[2:-2] * 2.0


def shifted_by_one(x):
    """The first row, then every row but the last: a sequence shifted down a step."""
    return jnp.concatenate([x[:1], x[:-1]])


def a_corner_of_two_symbolic_sizes(x):
    return x[1:, 1:] - x[:-1, :-1]


CASES = {  # name: (program, what it is exported at, its inputs at size b)
    "differences": (differences, [VECTOR], lambda b: [values(b)]),
    "the_middle_rows": (the_middle_rows, [ROWS], lambda b: [values(b, 4)]),
    "shifted_by_one": (shifted_by_one, [ROWS], lambda b: [values(b, 4)]),
    "a_corner_of_two_symbolic_sizes": (
        a_corner_of_two_symbolic_sizes,
        [PLANE],
        lambda b: [values(b, b + 2)],
    ),
}


def values(*shape: int) -> np.ndarray:
    return np.random.default_rng(sum(shape)).normal(size=shape).astype(np.float32)


def test_only_a_gather_of_one_slice_changes():
    changed, text = applied(one_slice_dynamic_gathers, the_middle_rows, ROWS)
    assert changed == 1 and "stablehlo.real_dynamic_slice" in text
    assert "dynamic_gather" not in text
    indexed = jax.ShapeDtypeStruct(export.symbolic_shape("b, 10"), np.float32)
    assert applied(one_slice_dynamic_gathers, lambda x: x[:, jnp.array([0, 2])], indexed)[0] == 0


@on_both_paths
@pytest.mark.parametrize("case", CASES)
def test_slices_along_a_symbolic_size_give_jax_jits_elements(case, path, tmp_path):
    program, shapes, make_inputs = CASES[case]
    main = main_on(path, rewriter.export(program, *shapes).text, tmp_path)
    for b in (2, 3, 7):
        arguments = make_inputs(b)
        got = np.asarray(main(*arguments))
        expected = np.asarray(jax.jit(program)(*arguments))
        assert got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)


ALL_BUT_TWO_FROM = """
module @all_but_two_from {
  func.func public @main(%x: tensor<?xf32>, %start: tensor<1xi32>) -> tensor<?xf32> {
    %two = stablehlo.constant dense<2> : tensor<i32>
    %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?xf32>) -> tensor<i32>
    %size = stablehlo.subtract %n, %two : tensor<i32>
    %sizes = stablehlo.reshape %size : (tensor<i32>) -> tensor<1xi32>
    %cut = "stablehlo.dynamic_gather"(%x, %start, %sizes) <{dimension_numbers =
      #stablehlo.gather<offset_dims = [0], start_index_map = [0]>}>
      : (tensor<?xf32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?xf32>
    return %cut : tensor<?xf32>
  }
}
"""


@on_both_paths
def test_a_start_is_clamped_so_the_slice_fits(path, tmp_path):
    """``n - 2`` elements from a start the caller gives: StableHLO clamps the start into
    ``[0, 2]`` (numpy's ``clip``, by hand), as jax's gather does."""
    main = main_on(path, ALL_BUT_TWO_FROM, tmp_path)
    x = np.arange(7, dtype=np.float32)
    for start in (-3, 0, 1, 2, 9):
        at = int(np.clip(start, 0, 2))
        got = main(x, np.array([start], np.int32))
        np.testing.assert_array_equal(got, x[at : at + 5])
