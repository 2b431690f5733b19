"""f64 tanh of the IREE path from exp and Cephes's rational function
(rewriter/iree/fast_tanh.py): within 2 units in the last place of numpy's tanh, the signs of
zeros, subnormals, infinities and NaN kept, and compile_module applies it."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rewriter
from rewriter.iree import compile_module, fast_tanh, load

pytestmark = [pytest.mark.iree, pytest.mark.jax, pytest.mark.slow]

SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 2.0**-27, 0.625, -0.625, 19.0]


def rewritten(function, x, folder):
    with jax.enable_x64(True):
        text = rewriter.export(function, x).text
    path = folder / "program.iree.mlir"
    path.write_text(rewriter.rewrite(text, abi="iree").text)
    return path


def test_f64_tanh_is_within_two_ulp_of_numpy(tmp_path):
    rng = np.random.default_rng(0)
    scales = (1e-300, 1e-20, 1e-8, 1e-3, 0.1, 0.6, 1, 3, 10, 30, 1e300)
    x = np.concatenate([rng.standard_normal(20000) * s for s in scales] + [np.array(SPECIAL)])
    got = load(rewritten(jnp.tanh, x, tmp_path), imports={}).main(x)
    expected = np.tanh(x)
    assert np.array_equal(np.isnan(got), np.isnan(expected))
    assert np.array_equal(np.signbit(got), np.signbit(expected))
    finite = np.isfinite(expected)
    ulps = np.abs(got[finite] - expected[finite]) / np.spacing(np.abs(expected[finite]))
    assert ulps.max() <= 2
    tail = got[-len(SPECIAL) :]
    assert tail[5] == 5e-324 and tail[6] == -5e-324 and tail[2] == 1 and tail[3] == -1


def test_compile_module_rewrites_static_f64_tanh_only(tmp_path, monkeypatch):
    counts: list[int] = []
    original = fast_tanh.fast_f64_tanh

    def counting(module):
        counts.append(original(module))
        return counts[-1]

    monkeypatch.setattr(fast_tanh, "fast_f64_tanh", counting)

    def program(x):
        return jnp.tanh(x) + jnp.tanh(x.astype(np.float32)).astype(np.float64)

    compile_module(rewritten(program, np.zeros((3, 4)), tmp_path), cache=False)
    assert counts == [1]  # the f32 tanh stays IREE's (vectorized already)
