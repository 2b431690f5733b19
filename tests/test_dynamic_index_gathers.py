"""Gathers from a static array at indices of a symbolic batch (embedding lookups,
``jnp.take``, ``jnp.interp``, ``jnp.digitize``), and from an array of a symbolic size
(``x[::-1]``, ``x[::2]``, rows at given indices), run on both paths and give ``jax.jit``'s
numbers (rewriter/compile/dynamic_index_gathers.py): IREE makes invalid reshapes of their
indices. ``digitize``'s unsigned indices also pass through a broadcast of a symbolic batch
(rewriter/compile/dynamic_broadcasts.py copies them as signless integers)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths
from jax import export

import rewriter
from rewriter.compile.dynamic_index_gathers import dynamic_index_gathers

TOKENS = jax.ShapeDtypeStruct(export.symbolic_shape("b, 7"), np.int32)
ROWS = jax.ShapeDtypeStruct(export.symbolic_shape("b, 10"), np.float32)
TABLE = jnp.linspace(-1.0, 1.0, 50 * 4, dtype=jnp.float32).reshape(50, 4)


def embedding_lookup(tokens):
    """Rows of a table: a gather of slices 4 wide, out-of-range tokens clamped."""
    return TABLE[tokens]


def take_with_fill(tokens):
    """``jnp.take``: NaN for an index out of range, negative ones from the end."""
    return jnp.take(TABLE[:, 0], tokens)


def take_clipped_from_integers(tokens):
    return jnp.take(jnp.arange(50, dtype=jnp.int32) * 3, tokens, mode="clip")


def interpolate(x):
    return jnp.interp(x, jnp.linspace(-2.0, 2.0, 5), jnp.arange(5.0, dtype=jnp.float32) ** 2)


def digitize(x):
    return jnp.digitize(x, jnp.linspace(-2.0, 2.0, 5))


def reversed_rows(x):
    return x[::-1] * 2.0


def every_second_row(x):
    return x[::2]


def first_and_last_rows(x):
    """Indices given as constants, one from the end: a gather from the dynamic ``x`` at
    static indices."""
    return jnp.take(x, jnp.array([0, -1]), axis=0)


PROGRAMS = [
    (embedding_lookup, TOKENS),
    (take_with_fill, TOKENS),
    (take_clipped_from_integers, TOKENS),
    (interpolate, ROWS),
    (digitize, ROWS),
    (reversed_rows, ROWS),
    (every_second_row, ROWS),
    (first_and_last_rows, ROWS),
]


def inputs(shape, batch: int) -> np.ndarray:
    generator = np.random.default_rng(batch)
    if shape.dtype == np.int32:  # in range, negative and past the end
        return generator.integers(-60, 60, size=(batch, *shape.shape[1:])).astype(np.int32)
    return generator.normal(size=(batch, *shape.shape[1:])).astype(np.float32) * 2


def test_only_gathers_at_indices_of_dynamic_shape_change():
    changed, text = applied(dynamic_index_gathers, embedding_lookup, TOKENS)
    assert changed == 1 and "tensor.extract %arg0" in text  # the table, element by element
    static = np.zeros((3, 7), np.int32)
    assert applied(dynamic_index_gathers, embedding_lookup, static)[0] == 0


@on_both_paths
@pytest.mark.parametrize(("program", "shape"), PROGRAMS, ids=[p.__name__ for p, _ in PROGRAMS])
def test_gathers_at_a_symbolic_batch_of_indices_give_jax_jits_numbers(
    program, shape, path, tmp_path
):
    main = main_on(path, rewriter.export(program, shape).text, tmp_path)
    for batch in (1, 3, 6):
        x = inputs(shape, batch)
        got, expected = np.asarray(main(x)), np.asarray(jax.jit(program)(x))
        assert got.dtype == expected.dtype and got.shape == expected.shape
        # the same elements, and interp's few f32 operations on them in the same order
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=0)


VECTOR_FIRST = """
module @vector_first {
  func.func public @main(%indices: tensor<1x?xi32>) -> tensor<?xf32> {
    %table = stablehlo.constant dense<[10.0, 11.0, 12.0, 13.0, 14.0]> : tensor<5xf32>
    %taken = "stablehlo.gather"(%table, %indices) <{dimension_numbers =
      #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0]>,
      slice_sizes = array<i64: 1>}> : (tensor<5xf32>, tensor<1x?xi32>) -> tensor<?xf32>
    return %taken : tensor<?xf32>
  }
}
"""


@on_both_paths
def test_an_index_vector_dimension_not_printed_is_the_first(path, tmp_path):
    """StableHLO prints no ``index_vector_dim`` of 0: the indices ``(1, n)`` are n start
    indices of one component each, clamped into the table (numpy's ``clip``, by hand)."""
    main = main_on(path, VECTOR_FIRST, tmp_path)
    indices = np.array([[3, -2, 0, 9, 4, 1]], np.int32)
    expected = np.array([13.0, 10.0, 10.0, 14.0, 14.0, 11.0], np.float32)
    np.testing.assert_array_equal(main(indices), expected)


SEQUENCES = jax.ShapeDtypeStruct(export.symbolic_shape("b, t, 4"), np.float32)


def along_a_symbolic_length(x):
    """``x[:, ::-1]``, ``x[:, ::2]``, ``x[:, 1::3]``, the last step ``x[:, -1]`` and the
    product of the first row's and the first column's features, of a symbolic batch and
    length: jax's ``dynamic_gather`` whose slice sizes, the batch's among them, are known
    at run time."""
    outer = x[:, 0, 0][:, None] * x[0, :, 0][None, :]
    return x[:, ::-1], x[:, ::2], x[:, 1::3] * 2.0, x[:, -1], x[:, -1, 2], outer


@on_both_paths
def test_gathers_along_a_symbolic_length_with_slices_of_a_symbolic_size(path, tmp_path):
    main = main_on(path, rewriter.export(along_a_symbolic_length, SEQUENCES).text, tmp_path)
    for batch, length in ((1, 1), (2, 5), (3, 8)):
        x = np.random.default_rng(length).normal(size=(batch, length, 4)).astype(np.float32)
        for got, expected in zip(main(x), jax.jit(along_a_symbolic_length)(x), strict=True):
            assert got.shape == expected.shape
            np.testing.assert_array_equal(got, np.asarray(expected))
