"""Windows of unsigned integers on both paths (rewriter/compile/unsigned_windows.py):
``jnp.cumsum``, ``cumprod``, ``lax.cummax`` and ``cummin`` of unsigned arrays failed to
compile on both; each is jax.jit's to the bit, the largest and smallest values of the type
included (sums and products wrap around)."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths
from jax import lax

import rewriter
from rewriter.compile.unsigned_windows import unsigned_windows

pytestmark = [pytest.mark.iree, pytest.mark.jax]

UNSIGNED = [np.uint8, np.uint16, np.uint32, np.uint64]


def values(dtype) -> np.ndarray:
    """100 of ``dtype``: random, every 7th the largest, one 0 (the tie-breaking and
    top-bit cases of the signed order)."""
    rng = np.random.default_rng(3)
    top = np.iinfo(dtype).max
    x = rng.integers(0, top, 100, dtype=np.uint64, endpoint=True).astype(dtype)
    x[::7], x[3] = top, 0
    return x


def pooled_minimum(x):
    top = np.iinfo(x.dtype).max
    return lax.reduce_window(x.reshape(10, 10), x.dtype.type(top), lax.min, (3, 2), (1, 1), "SAME")


PROGRAMS = {
    "cummax": lax.cummax,
    "cummin": lax.cummin,
    "cummax_reversed": lambda x: lax.cummax(x, reverse=True),
    "cumsum": lambda x: jax.numpy.cumsum(x, dtype=x.dtype),
    "cumprod_reversed": lambda x: lax.cumprod(x % x.dtype.type(5) + x.dtype.type(1), reverse=True),
    "cumulative_xor": lambda x: lax.associative_scan(lax.bitwise_xor, x),
    "pooled_minimum": pooled_minimum,
}


def test_unsigned_windows_become_windows_of_their_bits():
    x = values(np.uint16)
    changed, text = applied(unsigned_windows, lambda v: (lax.cummax(v), lax.cumsum(v)), x)
    assert changed == 2
    assert text.count("dense<-32768> : tensor<100xi16>") == 2  # the max's alone, in and out
    assert "}) : (tensor<100xui16>, tensor<ui16>) -> tensor<100xui16>" not in text  # a window
    assert text.count("}) : (tensor<100xi16>, tensor<i16>) -> tensor<100xi16>") == 2  # of bits


@on_both_paths
@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_unsigned_windows_are_jax_jits(name, dtype, path, tmp_path):
    x = values(dtype)
    function = PROGRAMS[name]
    with jax.enable_x64(dtype == np.uint64):
        text = rewriter.export(function, x).text
        expected = np.asarray(jax.jit(function)(x))
    got = main_on(path, text, tmp_path)(x)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
