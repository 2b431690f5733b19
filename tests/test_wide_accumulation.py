"""Products, convolutions and sums of f16 and bf16 are summed in f32 on both paths, as
under ``jax.jit`` (rewriter/compile/wide_accumulation.py).

The bound each result is held to: ``r`` is the f32 sum ``s`` of the K products of an
output, in some order, rounded once to the element type. The products are exact in f32
(two 8- or 11-bit significands), so ``|s - exact| <= gamma_K * S`` with ``S`` the sum of
the products' magnitudes and ``gamma_K = K u / (1 - K u)``, ``u = 2^-24`` (Higham,
"Accuracy and Stability of Numerical Algorithms", 3.1); rounding to the element type adds
at most ``u_e |s|`` (``u_e`` = 2^-8 for bf16, 2^-11 for f16). So
``|r - exact| <= u_e (|exact| + gamma_K S) + gamma_K S``. ``exact`` and ``S`` are computed
in f64 (their own error is some 2^-40 of that bound). XLA's products are held to it too;
its sums are not: on this machine its cumulative sum of 4,096 bf16 was 1.0 off the exact
one (ours 0.25), its ``lax.reduce`` of 1,024 0.52 (ours 0.12). Summed in the element type
instead, each addition rounds to ``u_e`` of a partial sum (3.8 and 3.4 off).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from iree_fixes import applied, main_on
from jax import lax

import rewriter
from rewriter.compile.wide_accumulation import wide_accumulation

UNIT = {np.dtype(ml_dtypes.bfloat16): 2.0**-8, np.dtype(np.float16): 2.0**-11}


def product(a, b):
    return a @ b


def batched(a, b):
    return jnp.einsum("bij,bjk->bik", a, b)


def convolution(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME")


def row_sums(x):
    return lax.reduce(x, np.array(0, x.dtype), lax.add, (1,))


def window_sums(x):
    return lax.reduce_window(x, np.array(0, x.dtype), lax.add, (1, 4, 4, 1), (1, 2, 2, 1), "SAME")


def normal(dtype, *shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


BF16, F16 = jnp.bfloat16, np.float16
CASES = {  # name: (function, its inputs, the number of products each output sums)
    "product_bf16": (product, [normal(BF16, 8, 512), normal(BF16, 512, 4, seed=1)], 512),
    "product_f16": (product, [normal(F16, 8, 256), normal(F16, 256, 4, seed=1)], 256),
    "batched_bf16": (batched, [normal(BF16, 2, 4, 256), normal(BF16, 2, 256, 3, seed=1)], 256),
    "convolution_bf16": (
        convolution,
        [normal(BF16, 1, 64, 8, 8), normal(BF16, 4, 64, 3, 3, seed=1)],
        576,
    ),
}
SUMS = {
    "row_sums_bf16": (row_sums, [normal(BF16, 8, 1024)], 1024),
    "cumsum_bf16": (jnp.cumsum, [normal(BF16, 4096)], 4096),
    "cumsum_f16": (jnp.cumsum, [normal(F16, 2048)], 2048),
    "window_sums_bf16": (window_sums, [normal(BF16, 1, 32, 32, 8)], 16),
}


def exact_and_magnitudes(function, inputs) -> tuple[np.ndarray, np.ndarray]:
    """``function`` of the inputs in f64, and of their magnitudes: ``exact`` and ``S``."""
    wide = [np.asarray(x, np.float64) for x in inputs]
    with jax.enable_x64(True):
        exact = np.asarray(jax.jit(function)(*wide))
        magnitudes = np.asarray(jax.jit(function)(*[np.abs(x) for x in wide]))
    return exact, magnitudes


def within_bound(result, inputs, function, terms) -> float:
    """The largest ratio of an output's error to its bound (module docstring): at most 1."""
    exact, magnitudes = exact_and_magnitudes(function, inputs)
    u = 2.0**-24
    gamma = terms * u / (1 - terms * u)
    unit = UNIT[np.dtype(inputs[0].dtype)]
    bound = unit * (np.abs(exact) + gamma * magnitudes) + gamma * magnitudes
    error = np.abs(np.asarray(result, np.float64) - exact)
    return float(np.max(error / bound))


def test_the_narrow_products_and_sums_change_and_no_other():
    def mixed(a16, b16, a32, b32):
        wider = jnp.dot(a16, b16, preferred_element_type=jnp.float32)
        maximum = lax.reduce(a16, np.array(-np.inf, a16.dtype), lax.max, (1,))
        return (
            *(a16 @ b16, a32 @ b32, wider, convolution(a16[None, None], b16[None, None])),
            *(row_sums(a16), row_sums(a32), maximum, jnp.argmax(a16, 1)),
        )

    a16, b16 = normal(jnp.bfloat16, 4, 4), normal(jnp.bfloat16, 4, 4)
    a32, b32 = normal(np.float32, 4, 4), normal(np.float32, 4, 4)
    changed, text = applied(wide_accumulation, mixed, a16, b16, a32, b32)
    assert changed == 3  # the bf16 product, convolution and sum
    assert "-> tensor<4x4xf32>" in text and "tensor<1x1x4x4xf32>" in text
    assert "-> tensor<4xf32>" in text  # the sum's (and the f32 row sums')


@pytest.mark.parametrize("name", list(CASES))
def test_xla_is_within_the_bound(name):
    function, inputs, terms = CASES[name]
    assert within_bound(jax.jit(function)(*inputs), inputs, function, terms) <= 1


@pytest.mark.toolchain
@pytest.mark.slow
@pytest.mark.parametrize("path", ["compile", "iree"])
@pytest.mark.parametrize("name", [*CASES, *SUMS])
def test_narrow_products_and_sums_are_summed_in_f32(name, path, tmp_path):
    function, inputs, terms = {**CASES, **SUMS}[name]
    text = rewriter.export(function, *inputs).text
    main = main_on(path, text, tmp_path)
    result = main(*inputs)
    assert result.dtype == inputs[0].dtype
    assert within_bound(result, inputs, function, terms) <= 1
