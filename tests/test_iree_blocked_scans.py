"""Cumulative sums and products of the IREE path in blocks (rewriter/iree/blocked_scans.py):
which reduce_windows change, that compile_module changes them, and that programs stay
within the rounding any order of the sum (product) allows of jax.jit's numbers, with
infinities and NaNs where jax.jit has them."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, counts_in_compile_module, run_with_fix

from rewriter.iree.blocked_scans import BLOCK, SMALLEST, blocked_scans

pytestmark = [pytest.mark.iree, pytest.mark.jax]

LONG = np.zeros(SMALLEST + 5, np.float32)  # the last block padded
ROWS = np.zeros((3, 2 * SMALLEST), np.float32)


def test_long_cumulative_sums_and_products_along_the_last_axis_change():
    for function, x in (
        (jnp.cumsum, LONG),
        (jnp.cumprod, LONG),
        (lambda x: jnp.cumsum(x, axis=1), ROWS),
        (lambda x: jnp.cumprod(x, axis=-1), ROWS),
    ):
        changed, text = applied(blocked_scans, function, x)
        assert changed == 1
        assert f"window_dimensions = array<i64: 1, {BLOCK}>" in text
        assert "_totals" not in text  # fewer than SMALLEST blocks: one level


def test_the_totals_of_many_blocks_are_scanned_in_blocks_too():
    x = np.zeros(BLOCK * SMALLEST, np.float32)
    changed, text = applied(blocked_scans, jnp.cumsum, x)
    assert changed == 1
    assert "call @rw_blocked_scan_0_totals(" in text
    assert "_totals_totals" not in text


def test_other_windows_stay():
    for function, x in (
        (jnp.cumsum, np.zeros(SMALLEST - 1, np.float32)),  # short: IREE's scan is as fast
        (lambda x: jnp.cumsum(x, axis=0), ROWS),  # not the last axis
        (jnp.cumsum, LONG.astype(np.int32)),  # integers
        (lambda x: jax.lax.cumsum(x, reverse=True), LONG),  # padded after
        (jax.lax.cummax, LONG),  # a maximum
        (lambda x: jax.lax.reduce_window(x, 0.0, jax.lax.add, (8,), (1,), "SAME"), LONG),
    ):
        changed, text = applied(blocked_scans, function, x)
        assert changed == 0 and "rw_blocked_scan" not in text


@pytest.mark.toolchain
def test_compile_module_rewrites_them(tmp_path, monkeypatch):
    from rewriter.iree import blocked_scans as module

    counts = counts_in_compile_module(
        monkeypatch, module, "blocked_scans", jnp.cumsum, LONG, folder=tmp_path
    )
    assert counts == [1]


def gamma(terms: int, dtype) -> float:
    """gamma_n = n u / (1 - n u) (Higham, Accuracy and Stability of Numerical Algorithms,
    3.1): a sum of n terms in any order is within gamma_(n-1) of the sum of their absolute
    values, a product of n factors within gamma_(n-1) of its own absolute value."""
    u = {np.dtype(np.float32): 2.0**-24, np.dtype(np.float64): 2.0**-53}[np.dtype(dtype)]
    return terms * u / (1 - terms * u)


def bound(name: str, x: np.ndarray) -> np.ndarray:
    """How far two orders of the same sums (products) along the last axis can be apart:
    twice the bound of one, with gamma at the axis' length (its largest)."""
    wide = np.abs(x.astype(np.float64))
    scan = np.cumsum if name == "cumsum" else np.cumprod
    return 2 * gamma(x.shape[-1], x.dtype) * scan(wide, axis=-1)


def inputs(name: str, shape: tuple[int, ...], dtype, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if name == "cumsum":
        return rng.normal(size=shape).astype(dtype)
    return rng.uniform(0.99, 1.01, size=shape).astype(dtype)  # products that stay finite


SHAPES = [(SMALLEST,), (SMALLEST + 5,), (2, 3 * SMALLEST + 7), (BLOCK * SMALLEST + 3,)]


@pytest.mark.toolchain
@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_scans_keep_jax_numbers_within_any_order_s_rounding(name, dtype, tmp_path):
    scan = jnp.cumsum if name == "cumsum" else jnp.cumprod

    def function(x):
        return scan(x, axis=-1)

    for number, shape in enumerate(SHAPES):
        x = inputs(name, shape, dtype, number)
        if number == 1:  # an infinity, then NaN where it meets the other one, in one line
            x[3], x[SMALLEST - 2] = np.inf, -np.inf
        got, expected = run_with_fix(blocked_scans, function, x, tmp_path / f"{number}.mlir")
        finite = np.isfinite(expected)
        np.testing.assert_array_equal(np.isfinite(got), finite)
        np.testing.assert_array_equal(got[~finite], expected[~finite])  # inf, -inf, NaN
        difference = np.abs(got[finite].astype(np.float64) - expected[finite])
        assert np.all(difference <= bound(name, x)[finite]), (name, shape)
