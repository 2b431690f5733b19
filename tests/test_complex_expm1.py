"""``expm1`` of complex numbers on both paths (rewriter/compile/complex_expm1.py): near 0,
where IREE's ``exp(z) - 1`` cancelled (thousands of ulp), within a few ulp of the exact
value as ``jax.jit``'s is, and jax.jit's special values."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import main_on, on_both_paths

import rewriter

pytestmark = [pytest.mark.iree, pytest.mark.jax]

SPECIAL = [0j, complex(-0.0, 0.0), 1e-30j, complex(np.inf, 0.0), complex(-np.inf, 1.0)]
SPECIAL += [complex(np.nan, 0.0), complex(0.0, np.inf), complex(2.0, -3.0)]


def exact_expm1(z: np.ndarray) -> np.ndarray:
    """expm1 of ``z`` in f64 (the cancelling term as a sine squared): exact enough for
    complex64, within a few f64 ulp for complex128."""
    w = z.astype(np.complex128)
    real = np.expm1(w.real) * np.cos(w.imag) - 2 * np.sin(w.imag / 2) ** 2
    return real + 1j * np.exp(w.real) * np.sin(w.imag)


@on_both_paths
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_expm1_near_zero_and_at_special_values(dtype, path, tmp_path):
    rng = np.random.default_rng(6)
    scale = 10.0 ** rng.uniform(-8, 0, 400)
    small = ((rng.standard_normal(400) + 1j * rng.standard_normal(400)) * scale).astype(dtype)
    z = np.concatenate([small, np.array(SPECIAL, dtype)])
    with jax.enable_x64(dtype == np.complex128):
        text = rewriter.export(jnp.expm1, z).text
        expected = np.asarray(jax.jit(jnp.expm1)(z))
    got = main_on(path, text, tmp_path)(z)
    assert got.dtype == expected.dtype
    exact = exact_expm1(small)
    eps = np.finfo(got.real.dtype).eps
    mine = np.abs(got[:400] - exact) / np.abs(exact)
    theirs = np.abs(expected[:400] - exact) / np.abs(exact)
    assert mine.max() <= max(4 * eps, 2 * theirs.max())
    np.testing.assert_array_equal(got[400:], expected[400:])
