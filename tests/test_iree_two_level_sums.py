"""A whole float tensor's sum on the IREE path, by rows and then the rows' sums
(rewriter/iree/two_level_sums.py).

The bound a result is held to: summing n terms in blocks of b, then the n / b block sums
(plus the leftover elements, one more term), errs by at most ``gamma_(b + n/b + 1) * S``,
``S`` the sum of the terms' magnitudes, ``gamma_k = k u / (1 - k u)`` (Higham, "Accuracy
and Stability of Numerical Algorithms", 4.2: each term goes through at most that many
additions). IREE's own order, one running sum per vector lane, is held to
``gamma_n`` only: on the squares of 1,048,576 normal floats it was 467 off, past the
blocked bound (273).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, run_with_fix
from jax import lax

from rewriter.iree.two_level_sums import ROW, SMALLEST, two_level_sums


def sum_of_squares(x):
    return (x * x).sum()


def normal(*shape, dtype=np.float32):
    return np.random.default_rng(0).normal(size=shape).astype(dtype)


def bound(x: np.ndarray, terms: np.ndarray) -> float:
    """``gamma_(b + n/b + 1) * S`` of the module docstring, for the sum of ``terms``."""
    u = np.finfo(x.dtype).eps / 2
    k = ROW + terms.size // ROW + 1
    return k * u / (1 - k * u) * float(np.sum(np.abs(terms.astype(np.float64))))


@pytest.mark.parametrize(
    ("function", "x", "changed"),
    [
        (jnp.sum, normal(SMALLEST), 1),
        (jnp.sum, normal(SMALLEST - 1), 0),  # too short
        (jnp.sum, normal(64, 300), 1),  # every dimension, 19,200 elements
        (lambda x: x.sum(1), normal(64, 300), 0),  # not to a scalar
        (jnp.max, normal(SMALLEST), 0),  # not a sum
        (jnp.sum, np.arange(SMALLEST, dtype=np.int32), 0),  # integers: exact in any order
        (lambda x: lax.reduce(x, np.float32(1), lax.add, (0,)), normal(SMALLEST), 0),  # init 1
    ],
)
def test_which_sums_change(function, x, changed):
    assert applied(two_level_sums, function, x)[0] == changed


@pytest.mark.toolchain
@pytest.mark.iree
@pytest.mark.slow
@pytest.mark.parametrize(
    ("function", "x"),
    [
        (sum_of_squares, normal(1 << 20)),
        (jnp.sum, normal(1 << 20) + 3),
        (jnp.sum, normal(1000, 37)),  # 37,000: 9 rows and 136 left over
        (sum_of_squares, normal(300_001, dtype=np.float64)),
    ],
)
def test_a_whole_sum_is_within_the_blocked_bound(function, x, tmp_path):
    got, expected = run_with_fix(two_level_sums, function, x, tmp_path / "sum.iree.mlir")
    terms = x * x if function is sum_of_squares else x
    exact = float(np.sum(terms.astype(np.float64)))
    assert abs(float(got) - exact) <= bound(x, terms)
    assert abs(float(expected) - exact) <= bound(x, terms)  # jax.jit's too
