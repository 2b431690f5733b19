"""``abs`` of complex numbers on both paths (rewriter/compile/complex_abs.py): jax.jit's
numbers where the squares of the parts overflow or underflow, and at zeros, infinities
and NaN."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths

import rewriter
from rewriter.compile.complex_abs import complex_abs

pytestmark = [pytest.mark.iree, pytest.mark.jax]

INF, NAN = np.inf, np.nan
SPECIAL = [
    (0.0, 0.0),
    (-0.0, 0.0),
    (3.0, -4.0),
    (INF, 3.0),
    (-2.0, -INF),
    (INF, INF),
    (INF, NAN),
    (NAN, -INF),
    (NAN, 0.0),
]


def numbers(dtype) -> np.ndarray:
    """Parts of every size the type holds, as complex numbers of ``dtype``, and SPECIAL."""
    real = np.finfo(np.complex64(0).real.dtype if dtype == np.complex64 else np.float64)
    rng = np.random.default_rng(5)
    exponents = rng.uniform(np.log10(real.tiny) + 2, np.log10(real.max) - 1, (2, 200))
    signs = rng.choice([-1.0, 1.0], (2, 200))
    parts = signs * 10.0**exponents
    parts[1, :50] = parts[0, :50] * rng.uniform(0.5, 2, 50)  # parts of one size
    z = (parts[0] + 1j * parts[1]).astype(dtype)
    special = np.array([complex(a, b) for a, b in SPECIAL], dtype)
    return np.concatenate([z, special])


def test_every_abs_of_complex_elements_is_written_with_real_ops():
    z = numbers(np.complex64)
    changed, text = applied(complex_abs, lambda v: jnp.abs(v) + jnp.abs(v.real), z)
    assert changed == 1  # the abs of the real part stays
    assert "stablehlo.maximum" in text and "stablehlo.sqrt" in text
    assert text.count("stablehlo.abs") == 3  # of the parts, and of the real part


@on_both_paths
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_abs_of_complex_numbers_is_jax_jits(dtype, path, tmp_path):
    """The large ones were inf (a square overflowed); the specials as XLA gives them."""
    z = numbers(dtype)
    with jax.enable_x64(dtype == np.complex128):
        text = rewriter.export(jnp.abs, z).text
        expected = np.asarray(jax.jit(jnp.abs)(z))
    got = main_on(path, text, tmp_path)(z)
    assert got.dtype == expected.dtype
    assert np.isfinite(expected[:200]).all()
    np.testing.assert_array_equal(got[200:], expected[200:])  # SPECIAL, exactly
    eps = np.finfo(expected.dtype).eps
    np.testing.assert_allclose(got[:200], expected[:200], rtol=2 * eps, atol=0)


@on_both_paths
def test_abs_of_a_symbolic_shape(path, tmp_path):
    z = numbers(np.complex64)
    (shape,) = jax.export.symbolic_shape("n")
    spec = jax.ShapeDtypeStruct((shape,), z.dtype)
    text = jax.export.export(jax.jit(jnp.abs))(spec).mlir_module()
    expected = np.asarray(jax.jit(jnp.abs)(z))
    got = main_on(path, text, tmp_path)(z)
    np.testing.assert_array_equal(got[200:], expected[200:])
    np.testing.assert_allclose(got[:200], expected[:200], rtol=2e-7, atol=0)
