"""Two constants in a row of adds or of multiplies are combined first on both paths, as
XLA's simplifier combines them (rewriter/compile/constant_chains.py): ``jax.jit`` of
``x * 3.0 * 7.1`` is ``x * 21.3``; both paths rounded twice, 1 unit of roundoff off."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, assert_jax_jits_bits, assert_symbolic_batch_bits, on_both_paths

from rewriter.compile.constant_chains import constant_chains

pytestmark = [pytest.mark.iree, pytest.mark.jax]

X = (np.random.default_rng(3).standard_normal(4096) * 3).astype(np.float32)


def reused(x):
    """A product by a constant read twice: its next product is folded all the same."""
    y = x * 3.0
    return y, y * 7.1


def chains(x):
    return (
        x * 3.0 * 7.1,
        2.5 * (x * 3.1),
        x * 3.0 * 7.1 * 1.3,  # three constants: folded from the start
        x + 3.3 + 7.1,
        (x - 1.5) - 2.25,
        (x + 3.3) - 7.1,
        (x - 2.0) / 3.0 * 0.5,  # a division by a constant is a product by its reciprocal
        x * 777.0 / 777.0,  # a product by one: x
        (x + 1.5) - 1.5,  # a sum of zero: x
        (2.0 - x) + 3.0,  # 5.0 - x
        3.3 + (2.0 - x),
        jnp.mean(jnp.broadcast_to(x[:3], (777, 3)), axis=0),  # x * 777 * (1 / 777)
        *reused(x),
        3.0 - (x + 2.0),  # not folded by XLA
        (2.0 - x) * 3.0,  # not folded by XLA
    )


def test_the_chains_xla_folds_and_no_others():
    changed, text = applied(constant_chains, chains, X)
    # Alone, the fix sees the divisions as divisions (``broadcast_divisors`` runs first in
    # a build) and the mean as a sum: the chains of products and of sums, the three
    # constants' twice, and the reused product's, but not the last two.
    assert changed == 11
    assert "2.130000e+01" in text  # x * 3.0 * 7.1 is x * 21.3, reused or not


@on_both_paths
@pytest.mark.parametrize("x64", [False, True], ids=["f32", "f64"])
def test_folded_chains_are_jax_jits_bits(path, x64, tmp_path):
    x = X.astype(np.float64) if x64 else X
    assert_jax_jits_bits(path, chains, tmp_path, x, x64=x64)


@on_both_paths
def test_chains_of_a_symbolic_batch_are_folded(path, tmp_path):
    def function(x):
        return x * 3.0 * 7.1, x + 3.3 + 7.1, (2.0 - x) + 3.0

    assert_symbolic_batch_bits(path, function, tmp_path, X[:8].reshape(1, 8), X[:48].reshape(6, 8))
