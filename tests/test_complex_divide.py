"""Division of complex numbers on both paths (rewriter/compile/complex_divide.py): jax.jit's
numbers where the divisor's squares overflow or underflow, and at every combination of
zeros, infinities and NaN in the four parts."""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths

import rewriter
from rewriter.compile.complex_divide import complex_divide

pytestmark = [pytest.mark.iree, pytest.mark.jax]

PARTS = [0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan]


def operands(dtype) -> tuple[np.ndarray, np.ndarray]:
    """Numerators and divisors: 400 of parts of every size the type holds, each numerator's
    within 10^4 of its divisor's (the quotient is finite, and not 0), the last 100 divisors'
    two parts of one size; then every combination of PARTS."""
    real = np.float32 if dtype == np.complex64 else np.float64
    tiny, huge = np.log10(np.finfo(real).tiny) + 5, np.log10(np.finfo(real).max) - 5
    rng = np.random.default_rng(9)
    sizes = rng.uniform(tiny, huge, 400)
    spread = sizes + rng.uniform(-4, 4, (4, 400))
    parts = rng.choice([-1.0, 1.0], (4, 400)) * 10.0**spread
    parts[3, 300:] = parts[2, 300:] * rng.uniform(0.5, 2, 100)
    grid = np.array(list(itertools.product(PARTS, repeat=4))).T
    a, b, c, d = np.concatenate([parts, grid], axis=1)
    return joined(a, b, dtype), joined(c, d, dtype)


def joined(real: np.ndarray, imaginary: np.ndarray, dtype) -> np.ndarray:
    """The complex numbers of these parts (``real + 1j * imaginary`` makes an infinite
    imaginary part's real part NaN: ``1j * inf`` is ``nan + inf j``)."""
    z = np.empty(real.shape, dtype)
    z.real, z.imag = real, imaginary
    return z


def test_every_divide_of_complex_elements_is_written_with_real_ops():
    x, y = operands(np.complex64)
    changed, text = applied(complex_divide, lambda u, v: (u / v, u.real / v.real), x, y)
    assert changed == 1  # the real divide stays
    assert "stablehlo.bitcast_convert" in text
    assert not any("complex<f32>" in line for line in text.splitlines() if "divide" in line)


@on_both_paths
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_quotients_are_jax_jits(dtype, path, tmp_path):
    """Of large and small parts they were 0 and inf; the corner cases as XLA gives them."""
    x, y = operands(dtype)
    with jax.enable_x64(dtype == np.complex128):
        text = rewriter.export(jnp.divide, x, y).text
        expected = np.asarray(jax.jit(jnp.divide)(x, y))
    got = main_on(path, text, tmp_path)(x, y)
    assert got.dtype == expected.dtype
    for part in (np.real, np.imag):
        mine, theirs = part(got), part(expected)
        np.testing.assert_array_equal(np.isnan(mine), np.isnan(theirs))
        np.testing.assert_array_equal(mine[400:], theirs[400:])  # the corner cases, exactly
        eps = np.finfo(theirs.dtype).eps
        scale = np.abs(expected[:400])  # each part within a few ulp of the quotient's size
        assert np.all(np.abs(mine[:400] - theirs[:400]) <= 4 * eps * scale)
    assert np.isfinite(expected[:400]).all() and (expected[:400] != 0).all()


@on_both_paths
def test_complex_quotients_of_a_symbolic_shape(path, tmp_path):
    x, y = operands(np.complex64)
    (size,) = jax.export.symbolic_shape("n")
    spec = jax.ShapeDtypeStruct((size,), x.dtype)
    text = jax.export.export(jax.jit(jnp.divide))(spec, spec).mlir_module()
    expected = np.asarray(jax.jit(jnp.divide)(x, y))
    got = main_on(path, text, tmp_path)(x, y)
    for part in (np.real, np.imag):
        np.testing.assert_array_equal(part(got)[400:], part(expected)[400:])
        mine, theirs = part(got)[:400], part(expected)[:400]
        assert np.all(np.abs(mine - theirs) <= 4 * 1.2e-7 * np.abs(expected[:400]))
