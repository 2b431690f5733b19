"""Gradients of max and min pools run on both paths and give ``jax.jit``'s numbers bit for
bit (rewriter/compile/window_scatters.py): IREE lowers a ``select_and_scatter`` only when
its windows do not overlap, and then gives a window's gradient to the last of its equal
greatest elements, where XLA gives it to the first."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths
from jax import export, lax

import rewriter
from rewriter.compile.window_scatters import window_scatters


def pool_gradient(reduce, initial, window, strides, padding):
    """The gradient of the sum of squares of a pool (a ``select_and_scatter`` in jax's
    export), at its input."""

    def loss(x):
        pooled = lax.reduce_window(x, initial, reduce, window, strides, padding)
        return jnp.sum(jnp.square(pooled.astype(jnp.float32)))

    return jax.grad(loss)


MAX_3X3_STRIDE_2 = pool_gradient(lax.max, -jnp.inf, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
MIN_3X3_STRIDE_1 = pool_gradient(lax.min, jnp.inf, (1, 3, 3, 1), (1, 1, 1, 1), "VALID")
MAX_4_STRIDE_1 = pool_gradient(lax.max, -jnp.inf, (4,), (1,), "VALID")
MAX_2X2_STRIDE_2 = pool_gradient(lax.max, -jnp.inf, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def ties(shape, dtype, seed=0, nan=False):
    """Values of three levels, so that most windows hold equal greatest (and least)
    elements: which one a window picks decides where its gradient goes."""
    values = np.random.default_rng(seed).integers(0, 3, size=shape).astype(np.float64)
    if nan:
        values.flat[7] = np.nan
    return values.astype(dtype)


CASES = {  # name: (function, input)
    "max 3x3 stride 2, f32": (MAX_3X3_STRIDE_2, ties((2, 9, 9, 3), np.float32)),
    "max 3x3 stride 2, a NaN": (MAX_3X3_STRIDE_2, ties((1, 7, 7, 2), np.float32, nan=True)),
    "min 3x3 stride 1, f32": (MIN_3X3_STRIDE_1, ties((2, 8, 8, 2), np.float32, seed=1)),
    "max 3x3 stride 2, f64": (MAX_3X3_STRIDE_2, ties((1, 8, 8, 2), np.float64, seed=2)),
    "max 4 stride 1, bf16": (MAX_4_STRIDE_1, ties((40,), ml_dtypes.bfloat16, seed=3)),
    "max 2x2 stride 2, windows apart": (MAX_2X2_STRIDE_2, ties((2, 8, 8, 3), np.float32)),
}


def test_a_symbolic_batch_changes_where_windows_are_1_wide_along_it():
    batch = jax.ShapeDtypeStruct(export.symbolic_shape("b, 9, 9, 3"), np.float32)
    changed, text = applied(window_scatters, MAX_3X3_STRIDE_2, batch)
    assert changed == 1 and "stablehlo.real_dynamic_slice" in text
    pooled_along_the_batch = pool_gradient(lax.max, -jnp.inf, (2, 3, 3, 1), (1, 2, 2, 1), "VALID")
    assert applied(window_scatters, pooled_along_the_batch, batch)[0] == 0


@on_both_paths
def test_pool_gradients_of_a_symbolic_batch_are_jax_jits(path, tmp_path):
    """A 3x3 max pool of stride 2, padded (padded_windows.py), of a symbolic batch size."""
    batch = jax.ShapeDtypeStruct(export.symbolic_shape("b, 9, 9, 3"), np.float32)
    text = rewriter.export(MAX_3X3_STRIDE_2, batch).text
    main = main_on(path, text, tmp_path)
    for size in (1, 3):
        x = ties((size, 9, 9, 3), np.float32, seed=size)
        np.testing.assert_array_equal(main(x), np.asarray(jax.jit(MAX_3X3_STRIDE_2)(x)))


def test_each_pool_gradient_changes():
    x = ties((1, 9, 9, 2), np.float32)
    before = applied(lambda module: 0, MAX_3X3_STRIDE_2, x)[1]
    changed, text = applied(window_scatters, MAX_3X3_STRIDE_2, x)
    assert changed == 1 and "select_and_scatter" not in text
    for op in ("stablehlo.slice", "stablehlo.pad"):  # one per offset of the 3x3 window
        assert text.count(op) - before.count(op) == 9
    for function in (MIN_3X3_STRIDE_1, MAX_2X2_STRIDE_2):
        assert applied(window_scatters, function, x)[0] == 1


def test_ones_in_a_window_give_its_gradient_to_the_first():
    """The module doc's example (of the sum of squares: 2, not 1): the first of equal
    greatest elements is picked, as jax.jit picks it."""
    gradient = pool_gradient(lax.max, -jnp.inf, (2, 2), (2, 2), "VALID")
    np.testing.assert_array_equal(jax.jit(gradient)(np.ones((2, 2), np.float32)), [[2, 0], [0, 0]])


@on_both_paths
@pytest.mark.parametrize("name", list(CASES))
def test_pool_gradients_are_jax_jits_bit_for_bit(name, path, tmp_path):
    function, x = CASES[name]
    with jax.enable_x64(x.dtype == np.float64):
        text = rewriter.export(function, x).text
        expected = np.asarray(jax.jit(function)(x))
    assert "select_and_scatter" in text
    copy = x.copy()
    got = main_on(path, text, tmp_path)(x)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got.astype(np.float64), expected.astype(np.float64))
    np.testing.assert_array_equal(x, copy)
