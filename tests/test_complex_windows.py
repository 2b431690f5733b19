"""Cumulative sums and products and scatters of complex numbers on both paths: the input
fixes read the constants of windows and scatters, and MLIR's Python bindings raise
TypeError ("Can't cast unknown element type") on a dense attribute of complex elements, so
``jnp.cumsum`` of a complex64 array and ``x.at[i].add(v)`` with indices out of range
crashed both compiles with a Python traceback (``mlir_walk.constant_attribute``,
``scatter_bounds``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import main_on, on_both_paths
from jax import lax

import rewriter

pytestmark = [pytest.mark.iree, pytest.mark.jax]

PROGRAMS = {
    "cumsum": lambda z: jnp.cumsum(z, dtype=z.dtype),
    "cumprod": lambda z: jnp.cumprod(z[:20], dtype=z.dtype),
    "cumsum_reversed_rows": lambda z: lax.cumsum(z.reshape(10, 20), axis=1, reverse=True),
    "scatter_add_out_of_range": lambda z, i: z.at[i].add(z[:50]),
    "scatter_set_dropped": lambda z, i: z.at[i].set(z[:50], mode="drop"),
}


@on_both_paths
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_complex_windows_and_scatters_are_jax_jits(name, dtype, path, tmp_path):
    rng = np.random.default_rng(4)
    z = (rng.standard_normal(200) + 1j * rng.standard_normal(200)).astype(dtype)
    indices = rng.integers(-10, 210, 50).astype(np.int32)  # some out of range: dropped
    function = PROGRAMS[name]
    arguments = [z, indices][: function.__code__.co_argcount]
    with jax.enable_x64(dtype == np.complex128):
        text = rewriter.export(function, *arguments).text
        expected = np.asarray(jax.jit(function)(*arguments))
    got = main_on(path, text, tmp_path)(*arguments)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    eps = np.finfo(expected.real.dtype).eps
    np.testing.assert_allclose(got, expected, rtol=64 * eps, atol=64 * eps)
