"""XLA's folds of ``x + 0``, ``0 + x``, ``x - 0`` and of a reduce that combines nothing, on
both paths (rewriter/compile/identity_folds.py): ``jax.jit`` keeps ``-0.0`` and denormals
there, both paths gave ``+0.0`` and 0."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, assert_jax_jits_bits, assert_symbolic_batch_bits, on_both_paths
from jax import lax

from rewriter.compile.identity_folds import identity_folds

pytestmark = [pytest.mark.iree, pytest.mark.jax]

# -0.0, +0.0, denormals of f32 (also of f64), a number, and in the last column -0.0 again
X32 = np.array(
    [[-0.0, 0.0, 1e-40, -1e-40], [-1.5, 2.0, -0.0, 3.0], [5e-45, -0.0, -0.0, 7.0]], np.float32
)
X64 = np.array([[-0.0, 0.0, 1e-310, -1e-310], [-1.5, 2.0, -0.0, 3.0], [5e-324, -0.0, -0.0, 7.0]])


def folds(x):
    """Each fold XLA makes, and neighbours it does not (``0 - x``, ``x + 1``, ``x * 0``, a
    sum along an axis of 4, windows of two)."""
    return (
        x + 0.0,
        0.0 + x,
        x - 0.0,
        x + jnp.zeros_like(x),
        x + (-0.0),
        x[:, 3:].sum(axis=1),  # a reduce over a dimension of size 1
        x[:, 3:].max(axis=1),
        lax.reduce_window(x, 0.0, lax.add, (1, 1), (1, 1), "VALID"),  # windows of one
        0.0 - x,
        x + 1.0,
        x * 0.0,
        x.sum(axis=1),
        lax.reduce_window(x, 0.0, lax.add, (1, 2), (1, 1), "VALID"),
    )


def test_the_folds_xla_makes_and_no_others():
    changed, text = applied(identity_folds, folds, X32)
    assert changed == 8  # five adds and subtracts, two reduces, a window of one
    assert text.count("stablehlo.subtract") == 1  # 0 - x stays
    assert "stablehlo.reduce(" in text  # the sum along the axis of 4
    assert text.count("stablehlo.reduce_window") == 1  # of windows of two


def test_integers_are_left_alone():
    changed, _ = applied(
        identity_folds, lambda i: (i + 0, i[:, :1].sum(axis=1)), X32.view(np.int32)
    )
    assert changed == 0


@on_both_paths
@pytest.mark.parametrize("x", [X32, X64], ids=["f32", "f64"])
def test_folds_keep_the_bits_jax_jit_keeps(path, x, tmp_path):
    assert_jax_jits_bits(path, folds, tmp_path, x, x64=x.dtype == np.float64)


@on_both_paths
def test_a_zero_of_a_symbolic_shape_is_folded(path, tmp_path):
    def function(x):
        return x + jnp.zeros_like(x), x + 0.0, x[:, 3:].sum(axis=1)

    assert_symbolic_batch_bits(path, function, tmp_path, X32[:1], X32)
