"""Cumulative sums of floats start from their initial value on both paths, as XLA's do
(rewriter/compile/started_sums.py): ``jax.jit`` computes ``0 + x[0]`` first, which makes
-0.0 +0.0 and flushes a denormal; IREE's scan started from ``x[0]``, which both paths
kept."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, assert_jax_jits_bits, assert_symbolic_batch_bits, on_both_paths
from jax import lax

from rewriter.compile.started_sums import started_sums

pytestmark = [pytest.mark.iree, pytest.mark.jax]


# Columns that start with -0.0, with a denormal of f32, with -0.0 twice, and with a number
STARTS = np.array(
    [[-0.0, 1e-40, -0.0, 1.5], [2.0, 3.0, -0.0, -0.0], [-0.0, -2.0, 4.0, 0.5]], np.float32
)


def cumulative_sums(x):
    return (
        jnp.cumsum(x, axis=0),
        jnp.cumsum(x, axis=1),
        jnp.cumsum(-x[:, ::-1], axis=1),
        lax.cumsum(x, axis=0, reverse=True),
    )


def test_cumulative_sums_get_one_add_each():
    changed, text = applied(started_sums, cumulative_sums, STARTS)
    assert changed == 3  # jax writes one function for the two sums along axis 1
    applied_again, _ = applied(
        started_sums, lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1), "SAME"), STARTS
    )
    assert applied_again == 0  # a sum pool starts from its initial value already


@on_both_paths
def test_cumulative_sums_start_from_zero_as_xla_s(path, tmp_path):
    """``0 + x[0]`` first: -0.0 and denormals there become +0.0, as under ``jax.jit``."""
    assert_jax_jits_bits(path, cumulative_sums, tmp_path, STARTS)


@on_both_paths
def test_cumulative_sums_of_a_symbolic_batch_start_from_zero(path, tmp_path):
    assert_symbolic_batch_bits(path, cumulative_sums, tmp_path, STARTS[:1], STARTS)
