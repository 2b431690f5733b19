"""Cumulative sums, products and extrema of floats start from their initial value on both
paths, as XLA's do (rewriter/compile/started_scans.py): ``jax.jit`` computes ``0 + x[0]``
first, which makes -0.0 +0.0 and flushes a denormal, and ``1 * x[0]``, ``max(-inf, x[0])``,
which make a denormal a zero of its sign; IREE's scan started from ``x[0]``, which both
paths kept."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, assert_jax_jits_bits, assert_symbolic_batch_bits, on_both_paths
from jax import lax

from rewriter.compile.started_scans import started_scans

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
    changed, text = applied(started_scans, cumulative_sums, STARTS)
    assert changed == 3  # jax writes one function for the two sums along axis 1
    applied_again, _ = applied(
        started_scans, lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1), "SAME"), STARTS
    )
    assert applied_again == 0  # a sum pool starts from its initial value already


# Rows that start with denormals of both signs, in the middle too, and with numbers
DENORMAL_STARTS = np.array(
    [[1e-40, 2.0, 3.0, -1e-39], [-1e-40, 0.5, 1e-41, 4.0], [-0.0, -3.0, 1e-39, 2.0]],
    np.float32,
)


def cumulative_products_and_extrema(x):
    return (
        jnp.cumprod(x, axis=1),
        lax.cumprod(x, axis=1, reverse=True),
        jnp.cumprod(x, axis=0),
        lax.cummax(x, axis=1),
        lax.cummin(x, axis=1, reverse=True),
        lax.cummax(jnp.abs(x), axis=0),
    )


def test_cumulative_products_and_extrema_get_their_zeros_signed():
    changed, _ = applied(started_scans, cumulative_products_and_extrema, DENORMAL_STARTS)
    assert changed == 6
    a_product_pool = applied(
        started_scans,
        lambda x: lax.reduce_window(x, 1.0, lax.mul, (1, 2), (1, 1), "VALID"),
        DENORMAL_STARTS,
    )
    assert a_product_pool[0] == 0


@on_both_paths
def test_cumulative_products_and_extrema_start_from_their_identity(path, tmp_path):
    """``1 * x[0]`` and ``max(-inf, x[0])`` first: a denormal there is a zero of its sign,
    as under ``jax.jit``."""
    assert_jax_jits_bits(path, cumulative_products_and_extrema, tmp_path, DENORMAL_STARTS)


def along_rows(x):
    """Those along the rows: of a symbolic batch, a static axis (along the batch's own axis
    jax writes a ``dynamic_reduce_window`` call, which this fix does not take)."""
    return (
        jnp.cumprod(x, axis=1),
        lax.cumprod(x, axis=1, reverse=True),
        lax.cummax(x, axis=1),
        lax.cummin(x, axis=1, reverse=True),
    )


@on_both_paths
def test_cumulative_products_of_a_symbolic_batch_start_from_one(path, tmp_path):
    assert_symbolic_batch_bits(path, along_rows, tmp_path, DENORMAL_STARTS[:1], DENORMAL_STARTS)


@on_both_paths
def test_cumulative_sums_start_from_zero_as_xla_s(path, tmp_path):
    """``0 + x[0]`` first: -0.0 and denormals there become +0.0, as under ``jax.jit``."""
    assert_jax_jits_bits(path, cumulative_sums, tmp_path, STARTS)


@on_both_paths
def test_cumulative_sums_of_a_symbolic_batch_start_from_zero(path, tmp_path):
    assert_symbolic_batch_bits(path, cumulative_sums, tmp_path, STARTS[:1], STARTS)
