"""Cumulative sums and products of floats give jax.jit's bits on both paths
(rewriter/compile/xla_scans.py): XLA:CPU scans an axis longer than 16 in blocks of 16 and
each window from the left, reversed ones too; both paths made each window one running
scan, which differed from ``jax.jit`` in one value of 8 of 64-long rows (a reversed one
in 4 of 10 at 10 values)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, assert_jax_jits_bits, on_both_paths
from jax import lax

from rewriter.compile.xla_scans import xla_scans

pytestmark = [pytest.mark.iree, pytest.mark.jax]

RNG = np.random.default_rng(11)


def scans(x):
    """Forward and reversed sums and products along the last axis."""
    return (
        jnp.cumsum(x, -1),
        lax.cumsum(x, x.ndim - 1, reverse=True),
        jnp.cumprod(1 + 1e-3 * x, -1),
        lax.cumprod(1 + 1e-3 * x, x.ndim - 1, reverse=True),
    )


def test_float_sums_and_products_of_static_shape_are_taken():
    x = jax.ShapeDtypeStruct((4, 40), np.float32)
    changed, text = applied(xla_scans, scans, x)
    assert changed == 4 and text.count("call @rw_xla_scan_") == 4
    # forward over 16 or fewer: IREE's running scan is XLA's loop; reversed: taken
    assert applied(xla_scans, scans, jax.ShapeDtypeStruct((4, 16), np.float32))[0] == 2

    def others(x, i):
        return lax.cummax(x, 1), jnp.cumsum(i, 1), jnp.cumsum(x.astype(jnp.bfloat16), 1)

    i = jax.ShapeDtypeStruct((4, 40), np.int32)
    assert applied(xla_scans, others, x, i)[0] == 0  # exact in any order, or widened


@on_both_paths
@pytest.mark.parametrize("length", [10, 16, 18, 64, 1000, 5000])
def test_scans_along_rows_are_jax_jits_bits(path, length, tmp_path):
    """Of 10 and 16 (XLA's window loop alone), 18 and 64 (blocks), 1,000 (63 blocks, whose
    prefixes are blocked again) and 5,000 (three levels)."""
    rows = 3 if length > 100 else 16
    x = RNG.standard_normal((rows, length)).astype(np.float32)
    assert_jax_jits_bits(path, scans, tmp_path, x)


@on_both_paths
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scans_along_each_axis_with_special_values_are_jax_jits_bits(path, dtype, tmp_path):
    """Along the first, middle and last axis of a 3-D array, starting with -0.0, a
    denormal, and a NaN inside (f64 too)."""
    x = RNG.standard_normal((20, 33, 7)).astype(dtype)
    x[0, 0, 0], x[1, 0, 1], x[2, 5, 3] = -0.0, 1e-40 if dtype == np.float32 else 1e-310, np.nan

    def along_each_axis(x):
        return (
            jnp.cumsum(x, 0),
            lax.cumsum(x, 1, reverse=True),
            jnp.cumsum(x, 1),
            jnp.cumprod(x, 1),
            lax.cumprod(x, 0, reverse=True),
            jnp.cumsum(x, 2),
        )

    assert_jax_jits_bits(path, along_each_axis, tmp_path, x, x64=dtype == np.float64)
