"""The round trip at model size: samples/mlp_model (three dense layers, gelu, softmax, two
``rms_norm`` FFI calls of different shapes, weights both as arguments and as constants).

JAX runs ``mlp`` with the kernel library's FFI handlers; the rewritten module is compiled by
``rewriter.compile`` and loaded with the same library. Both get the same random inputs
(3 seeds) and agree to rtol 1e-6, atol 0. Run with ``-s`` to see the compile time and the
largest differences.

The model is compiled with ``blas=None``: its products stay in compiled loops, which add
in the order XLA does closely enough for rtol 1e-6. A BLAS adds in another order, which
moves results by up to 1.3e-6 relative here; the products' bound on that path is checked
op by op in test_op_coverage.py (docs/paths.md).
"""

from __future__ import annotations

import time
import types

import jax
import numpy as np
import pytest
from kernel_library import SAMPLES, sample

from rewriter.compile import compile_module, load

MODEL = SAMPLES / "mlp_model"
RTOL = 1e-6


@pytest.fixture(scope="module")
def model() -> types.SimpleNamespace:
    return sample("mlp_model")


@pytest.fixture(scope="module")
def compiled(tmp_path_factory, kernel_library):
    output = tmp_path_factory.mktemp("mlp_model") / "libmlp_model.so"
    start = time.perf_counter()
    entries = compile_module(MODEL / "mlp_model.rewritten.mlir", output, blas=None)
    print(f"\nmlp_model: compiled in {time.perf_counter() - start:.2f} s")
    assert [entry.name for entry in entries] == ["main"]
    return load(output, kernels=[kernel_library])


def random_arguments(shapes, seed: int) -> list[np.ndarray]:
    """x ~ N(0, 1); weights and biases scaled like the captured layers (1/sqrt(fan_in), 0.1)."""
    rng = np.random.default_rng(seed)
    x, w1, b1 = (rng.normal(size=shape).astype(np.float32) for shape in shapes)
    return [x, w1 / np.float32(np.sqrt(shapes[1][0])), b1 * np.float32(0.1)]


@pytest.mark.parametrize("seed", range(3))
def test_mlp_model_matches_jax(seed, model, compiled):
    arguments = random_arguments(model.argument_shapes(), seed)
    expected = np.asarray(jax.jit(model.mlp)(*arguments))
    got = compiled.main(*arguments)
    assert got.dtype == expected.dtype == np.float32
    assert got.shape == expected.shape == (model.BATCH, model.WIDTHS[-1])
    difference = np.abs(got.astype(np.float64) - expected)
    print(
        f"\nmlp_model seed {seed}: max abs error {difference.max():.3g}, "
        f"max rel error {(difference / np.abs(expected)).max():.3g}"
    )
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=0)
