"""Quotients of quotients and of roots written as XLA's simplifier writes them, on both
paths (rewriter/compile/quotient_folds.py): ``(a / b) / c`` is ``a / (b * c)`` under
``jax.jit``, ``a / (b / c)`` is ``(a * c) / b``, ``(a / b) / (c / d)`` is
``(a * d) / (b * c)``; both paths divided as written, a unit in the last place off in
about one value of 5."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, assert_jax_jits_bits, on_both_paths
from jax import lax

from rewriter.compile.quotient_folds import quotient_folds

pytestmark = [pytest.mark.iree, pytest.mark.jax]

RNG = np.random.default_rng(5)


def quotients(a, b, c, s):
    """What XLA folds (each at least once), what it leaves, and a softmax-like division
    by a broadcast, which XLA makes a product first."""
    q = a / b
    return (
        q / c,  # a / (b * c), the quotient read on its own too
        q,
        ((a / b) / c) / b,  # a / ((b * c) * b): a fold of a fold
        (a / b) / (c / a),  # (a * a) / (b * c)
        a / (b / c),  # (a * c) / b
        (a / 2.0) / c,  # (a * 0.5) / c: the constant's reciprocal first
        a / (b / 3.0),  # a / (b * (1 / 3))
        a * (b / c),  # left as it is
        (a / b) / s[:, None],  # (a / b) * broadcast(1 / s)
    )


def operands(dtype):
    a, b, c = (RNG.uniform(0.1, 3.0, (64, 32)).astype(dtype) for _ in range(3))
    return a, b, c, RNG.uniform(1.0, 2.0, 64).astype(dtype)


def test_each_rule_folds_and_roots_by_their_reads():
    changed, text = applied(quotient_folds, quotients, *operands(np.float32))
    # q / c, the two of the nested one, (a / b) / (c / a), a / (b / c), a / (b * (1 / 3))
    # is no quotient of quotients once its constant is a reciprocal: 5 in all
    assert changed == 5

    def roots(a, b, c, s):
        once = jnp.sqrt(b)
        twice = jnp.sqrt(c)
        return a / once, a / twice, twice, a / lax.rsqrt(s[:, None] + b)

    changed, text = applied(quotient_folds, roots, *operands(np.float32))
    # a / sqrt(b) => a * rsqrt(b); a root read elsewhere too is divided by, as XLA's;
    # a / rsqrt(x) => a * sqrt(x)
    assert changed == 2 and text.count("stablehlo.divide") == 1


@on_both_paths
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_quotients_are_jax_jits_bits(path, dtype, tmp_path):
    assert_jax_jits_bits(path, quotients, tmp_path, *operands(dtype), x64=dtype == np.float64)


@on_both_paths
def test_a_quotient_by_a_root_read_elsewhere_is_jax_jits_bits(path, tmp_path):
    """``log(z) / z`` of a root ``z`` read elsewhere stays a division under ``jax.jit``
    (``jax.scipy.special.ndtri``'s first term)."""

    def first_term(p):
        z = lax.sqrt(-2.0 * jnp.log(p))
        return z - jnp.log(z) / z, 1 / z

    p = RNG.uniform(1e-6, 1.0, 100_000).astype(np.float32)
    assert_jax_jits_bits(path, first_term, tmp_path, p)
