"""Pools with ``padding="SAME"`` exported with a symbolic batch size run on both paths and
give ``jax.jit``'s numbers (rewriter/compile/padded_windows.py): IREE lowers no padded
``reduce_window`` of dynamic shape."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths
from jax import export, lax

import rewriter
from rewriter.compile.padded_windows import explicit_window_padding

BATCH = jax.ShapeDtypeStruct(export.symbolic_shape("b, 9, 9, 3"), np.float32)


def max_pool(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")


def sum_pool(x):
    return lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME")


def argmax_pool(x):
    """A pool of two operands (the greatest and its column): IREE lowers no such window of
    dynamic shape, padded or not, so it is left to unrolled_windows."""
    columns = lax.broadcasted_iota(jnp.int32, x.shape, 2)

    def greater(a, b):
        take = a[0] >= b[0]
        return jnp.where(take, a[0], b[0]), jnp.where(take, a[1], b[1])

    return lax.reduce_window(
        (x, columns), (-jnp.inf, 0), greater, (1, 2, 2, 1), (1, 1, 1, 1), "SAME"
    )


def test_padded_windows_of_dynamic_shape_change_and_no_others():
    changed, text = applied(explicit_window_padding, max_pool, BATCH)
    assert changed == 1 and "stablehlo.pad" in text
    assert applied(explicit_window_padding, argmax_pool, BATCH)[0] == 0
    static = np.zeros((2, 9, 9, 3), np.float32)
    assert applied(explicit_window_padding, max_pool, static)[0] == 0

    def unpadded(x):
        return lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 2, 2, 1), "VALID")

    assert applied(explicit_window_padding, unpadded, BATCH)[0] == 0


@on_both_paths
@pytest.mark.parametrize("pool", [max_pool, sum_pool], ids=lambda f: f.__name__)
def test_padded_pools_of_a_symbolic_batch_give_jax_jits_numbers(pool, path, tmp_path):
    text = rewriter.export(pool, BATCH).text
    x = np.random.default_rng(0).normal(size=(2, 9, 9, 3)).astype(np.float32)
    expected = np.asarray(jax.jit(pool)(x))
    copy = x.copy()
    got = main_on(path, text, tmp_path)(x)
    np.testing.assert_array_equal(got, expected)  # the same windows in the same order
    np.testing.assert_array_equal(x, copy)
