"""``tanh`` and ``tan`` of complex numbers on both paths (rewriter/compile/complex_tanh.py):
near 0, where IREE's formulas lost a part (millions of ulp, ``tan(1e-30j)`` was ``-0j``),
within a few ulp of the exact value as ``jax.jit``'s is, and every combination of zeros,
infinities and NaN in the two parts as ``jax.jit`` gives it."""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths

import rewriter
from rewriter.compile.complex_tanh import complex_tanh

pytestmark = [pytest.mark.iree, pytest.mark.jax]

PARTS = [0.0, -0.0, 1e-30, -2.5, 30.0, -400.0, np.inf, -np.inf, np.nan]
FUNCTIONS = {"tanh": (jnp.tanh, np.tanh), "tan": (jnp.tan, np.tan)}


def arguments(dtype) -> np.ndarray:
    """400 numbers of sizes from 1e-9 to 10, then every combination of PARTS."""
    rng = np.random.default_rng(11)
    scale = 10.0 ** rng.uniform(-9, 1, 400)
    near = (rng.standard_normal(400) + 1j * rng.standard_normal(400)) * scale
    grid = np.array(list(itertools.product(PARTS, repeat=2))).T
    z = np.empty(400 + grid.shape[1], dtype)
    z.real = np.concatenate([near.real, grid[0]])
    z.imag = np.concatenate([near.imag, grid[1]])
    return z


def relative_errors(got: np.ndarray, z: np.ndarray, exact_function) -> np.ndarray:
    """|got - f(z)| / |f(z)|, ``f`` in long double (exact enough for complex128)."""
    exact = exact_function(z.astype(np.clongdouble))
    return (np.abs(got - exact) / np.abs(exact)).astype(np.float64)


def test_every_tanh_and_tan_of_complex_elements_is_written_with_real_ops():
    z = arguments(np.complex64)
    changed, text = applied(complex_tanh, lambda u: (jnp.tanh(u), jnp.tan(u), jnp.tanh(u.real)), z)
    assert changed == 2  # the real tanh stays
    assert "stablehlo.exponential_minus_one" in text
    complex_lines = [line for line in text.splitlines() if "complex<f32>" in line]
    assert not any("tanh" in line or "stablehlo.tan " in line for line in complex_lines)


@on_both_paths
@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_tanh_and_tan_near_zero_and_at_special_values(name, dtype, path, tmp_path):
    function, exact_function = FUNCTIONS[name]
    z = arguments(dtype)
    with jax.enable_x64(dtype == np.complex128):
        text = rewriter.export(function, z).text
        expected = np.asarray(jax.jit(function)(z))
    got = main_on(path, text, tmp_path)(z)
    assert got.dtype == expected.dtype
    eps = np.finfo(got.real.dtype).eps
    mine = relative_errors(got[:400], z[:400], exact_function)
    theirs = relative_errors(expected[:400], z[:400], exact_function)
    assert mine.max() <= max(4 * eps, 2 * theirs.max())
    np.testing.assert_array_equal(got[400:], expected[400:])  # NaN where jax.jit's is


@on_both_paths
def test_complex_tanh_of_a_symbolic_shape(path, tmp_path):
    z = arguments(np.complex64)
    (size,) = jax.export.symbolic_shape("n")
    spec = jax.ShapeDtypeStruct((size,), z.dtype)
    text = jax.export.export(jax.jit(jnp.tanh))(spec).mlir_module()
    expected = np.asarray(jax.jit(jnp.tanh)(z))
    got = main_on(path, text, tmp_path)(z)
    mine = relative_errors(got[:400], z[:400], np.tanh)
    assert mine.max() <= 4 * np.finfo(np.float32).eps
    np.testing.assert_array_equal(got[400:], expected[400:])
