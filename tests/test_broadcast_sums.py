"""A sum over the dimensions a broadcast spread is a multiply by their count on both paths,
as XLA's simplifier makes it (rewriter/compile/broadcast_sums.py): the gradient of a bias
under a mean sums a broadcast ``1 / n`` over the batch, and both paths added the copies one
by one, about N / 2 units of roundoff off ``jax.jit``."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, assert_jax_jits_bits, on_both_paths

from rewriter.compile.broadcast_sums import broadcast_sums

pytestmark = [pytest.mark.iree, pytest.mark.jax]

RNG = np.random.default_rng(3)
X = RNG.standard_normal((1000, 8)).astype(np.float32)
W = RNG.standard_normal((8, 4)).astype(np.float32)
M = RNG.standard_normal((5, 1, 3)).astype(np.float32)


def sums(x, m):
    return (
        jnp.sum(jnp.broadcast_to(x[0, :3], (1000, 3)), axis=0),  # a dimension added
        jnp.sum(jnp.broadcast_to(m, (5, 999, 3)), axis=1),  # spread from size 1
        jnp.sum(jnp.broadcast_to(m[:, :, :, None], (5, 300, 3, 7)), axis=(1, 3)),  # both
        jnp.mean(jnp.broadcast_to(x[0, :3], (777, 3)), axis=0),
    )


def bias_gradient(x, w, b):
    return jax.grad(lambda b: jnp.mean(x @ w + b))(b)


def test_sums_of_spread_dimensions_only():
    def with_own_values(x, m):  # dimension 0 holds m's own values: a sum of them stays
        return *sums(x, m), jnp.sum(jnp.broadcast_to(m, (5, 999, 3)), axis=(0, 1))

    changed, text = applied(broadcast_sums, with_own_values, X, M)
    assert changed == 4
    assert text.count("stablehlo.reduce(") == 1


@on_both_paths
def test_sums_of_broadcasts_are_jax_jits_bits(path, tmp_path):
    assert_jax_jits_bits(path, sums, tmp_path, X, M)


@on_both_paths
@pytest.mark.parametrize("x64", [False, True], ids=["f32", "f64"])
def test_the_gradient_of_a_bias_is_jax_jits(path, x64, tmp_path):
    kind = np.float64 if x64 else np.float32
    arguments = (X.astype(kind), W.astype(kind), np.zeros(4, kind))
    assert_jax_jits_bits(path, bias_gradient, tmp_path, *arguments, x64=x64)
