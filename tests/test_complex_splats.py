"""complex128 tensors of one value on both paths (rewriter/compile/complex_splats.py): IREE
could not fill one ("'stream.async.splat' op operand #0 must be ... 64-bit signless
integer, but got 'i128'"): a program that returns ``jnp.zeros((3, 3), jnp.complex128)`` or
updates a slice of one did not build."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths

import rewriter
from rewriter.compile.complex_splats import complex_splats

pytestmark = [pytest.mark.iree, pytest.mark.jax]

# Values whose parts print in every form: zeros, NaN and infinities (hex), -0.0, a denormal.
VALUES = [0j, complex(np.nan, -0.0), complex(np.inf, -np.inf), complex(1.5, 5e-324)]


def filled(z):
    results = [jnp.zeros((10,), jnp.complex128).at[2:8].set(z)]
    results += [jnp.full((3, 3), value, jnp.complex128) for value in VALUES]
    return tuple(results)


def test_splats_of_complex128_become_complex_ops():
    z = np.arange(6) * (1 + 2j)
    with jax.enable_x64(True):
        changed, text = applied(complex_splats, filled, z)
    assert changed == len(VALUES)  # the zeros of the update are the first value's splat
    assert "dense<(" not in text  # no complex splat left
    assert "0x7FF8000000000000" in text and "-0.000000e+00" in text


@on_both_paths
def test_tensors_of_one_complex128_value(path, tmp_path):
    z = np.arange(6) * (1 + 2j)
    with jax.enable_x64(True):
        text = rewriter.export(filled, z).text
        expected = [np.asarray(r) for r in jax.jit(filled)(z)]
    got = main_on(path, text, tmp_path)(z)
    for mine, theirs in zip(got, expected, strict=True):
        assert mine.dtype == theirs.dtype
        assert mine.tobytes() == theirs.tobytes()  # NaN and zeros with their signs
