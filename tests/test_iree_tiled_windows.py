"""Sums over windows that tile the operand, on the IREE path, as a reshape and a reduce
(rewriter/iree/tiled_windows.py): which reduce_windows change, that compile_module changes
them, and that programs keep jax.jit's sums within the rounding any order allows (integers
exactly)."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from iree_fixes import applied, counts_in_compile_module, run_with_fix

from rewriter.iree.tiled_windows import tiled_windows

pytestmark = [pytest.mark.iree, pytest.mark.jax]


def window_sum(dims, strides, padding="VALID", dilation=None):
    def function(x):
        zero = np.zeros((), x.dtype)
        return jax.lax.reduce_window(
            x, zero, jax.lax.add, dims, strides, padding, window_dilation=dilation
        )

    return function


IMAGE = np.zeros((9, 11), np.float32)
TILED_WINDOWS = {
    "2x2_stride_2": (2, 2),  # the last row and column left out
    "3x1_stride_3x1": (3, 1),
    "1x11_whole_rows": (1, 11),
}
TILED = {name: window_sum(dims, dims) for name, dims in TILED_WINDOWS.items()}
NOT_TILED = {
    "overlapping": window_sum((2, 2), (1, 1)),
    "padded": window_sum((2, 2), (2, 2), "SAME"),
    "dilated": window_sum((2, 2), (2, 2), "VALID", (2, 2)),
}


def test_sums_over_tiles_become_a_reduce():
    for name, function in TILED.items():
        changed, text = applied(tiled_windows, function, IMAGE)
        assert changed == 1, name
        assert "stablehlo.reduce_window" not in text and "stablehlo.reduce(" in text


def test_other_windows_stay():
    for name, function in NOT_TILED.items():
        changed, text = applied(tiled_windows, function, IMAGE)
        assert changed == 0 and "stablehlo.reduce_window" in text, name
    maximum = lambda x: jax.lax.reduce_window(x, -np.inf, jax.lax.max, (2, 2), (2, 2), "VALID")  # noqa: E731
    assert applied(tiled_windows, maximum, IMAGE)[0] == 0  # window_extrema.py's


@pytest.mark.toolchain
def test_compile_module_rewrites_them(tmp_path, monkeypatch):
    from rewriter.iree import tiled_windows as module

    function = TILED["2x2_stride_2"]
    counts = counts_in_compile_module(
        monkeypatch, module, "tiled_windows", function, IMAGE, folder=tmp_path
    )
    assert counts == [1]


def gamma(terms: int, dtype) -> float:
    """gamma_n = n u / (1 - n u): a sum of n + 1 terms in any order is within gamma_n of
    the sum of their absolute values (Higham, Accuracy and Stability of Numerical
    Algorithms, 3.1)."""
    u = {np.dtype(np.float32): 2.0**-24, np.dtype(np.float64): 2.0**-53}[np.dtype(dtype)]
    return terms * u / (1 - terms * u)


@pytest.mark.toolchain
@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("name", sorted(TILED))
def test_tiled_sums_keep_jax_sums(name, dtype, tmp_path):
    rng = np.random.default_rng(3)
    x = (rng.normal(size=(37, 44)) * 100).astype(dtype)
    function = TILED[name]
    got, expected = run_with_fix(tiled_windows, function, x, tmp_path / "window.mlir")
    if np.dtype(dtype).kind == "i":
        np.testing.assert_array_equal(got, expected)
        return
    with jax.enable_x64(True):
        magnitudes = np.asarray(function(np.abs(x).astype(np.float64)))
    terms = int(np.prod(TILED_WINDOWS[name]))  # and the initial value: gamma_terms
    bound = 2 * gamma(terms, dtype) * magnitudes  # both sides' rounding
    assert np.all(np.abs(got.astype(np.float64) - expected) <= bound)
