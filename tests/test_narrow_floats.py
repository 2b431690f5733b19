"""8- and 4-bit floats on both paths: conversions to and from f32, f16 and f64, arithmetic
and products in those types equal jax.jit's bit for bit. On the compiled path their
conversions reached LLVM, which has no such type (the loops stage now emulates them:
``iree-convert-unsupported-float-arith`` in ``toolchain.LOOPS``); on both paths a
conversion from f16 or f64, or to f64, did not build (``narrow_float_converts``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths

import rewriter
from rewriter.compile.narrow_float_converts import narrow_float_converts

pytestmark = [pytest.mark.iree, pytest.mark.jax]

# The types whose conversions IREE emulates right; float8_e3m4 and float8_e8m0fnu are not
# among them, and float4_e2m1fn runs on the compiled path only (README, "Running with IREE").
TYPES = [
    "float8_e4m3fn",
    "float8_e5m2",
    "float8_e4m3fnuz",
    "float8_e5m2fnuz",
    "float8_e4m3b11fnuz",
    "float8_e4m3",
]
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 448.0, 449.0, 464.0, 500.0, 1e-3, 2**-9]
SPECIAL += [2**-10, 57344.0, 61440.0, 1e6, -1e6, 0.25, -0.375, 6.5, -7.0]  # 84 in all: IREE
# packs 4-bit tensors into bytes, and refuses an odd length ("unable to pack to bytes")


def values() -> np.ndarray:
    rng = np.random.default_rng(3)
    return np.concatenate([rng.standard_normal(64) * 8, SPECIAL]).astype(np.float32)


def uses(name: str):
    """A program of every conversion, some arithmetic and (but in 4 bits, which XLA's CPU
    cannot multiply) a product in the type ``name``."""
    kind = getattr(jnp, name)

    def program(x):
        narrow = x.astype(kind)
        results = [
            narrow.astype(jnp.float32),
            (narrow * narrow[::-1]).astype(jnp.float32),  # one op: XLA keeps a chain's
            (narrow + narrow[::-1]).astype(jnp.float32),  # intermediates in f32
            x.astype(jnp.float16).astype(kind).astype(jnp.float32),
            x.astype(jnp.float64).astype(kind).astype(jnp.float64),
            narrow.astype(jnp.float16),
        ]
        if name != "float4_e2m1fn":
            square = narrow[:64].reshape(8, 8)
            results.append(jnp.matmul(square, square.T, preferred_element_type=jnp.float32))
        return tuple(results)

    return program


def test_conversions_of_narrow_floats_but_to_f32_go_through_f32():
    def program(x):
        narrow = x.astype(jnp.float8_e4m3fn)
        return narrow.astype(jnp.float32), narrow.astype(jnp.float16), x.astype(jnp.float8_e5m2)

    changed, text = applied(narrow_float_converts, program, values().astype(np.float16))
    assert changed == 3  # f16 -> f8 twice, f8 -> f16; f8 -> f32 stays
    assert "(tensor<84xf16>) -> tensor<84xf8E4M3FN>" not in text
    assert "(tensor<84xf8E4M3FN>) -> tensor<84xf16>" not in text
    assert "(tensor<84xf8E4M3FN>) -> tensor<84xf32>" in text


@on_both_paths
@pytest.mark.parametrize("name", TYPES)
def test_narrow_floats_are_jax_jits(name, path, tmp_path):
    x = values()
    with jax.enable_x64(True):
        text = rewriter.export(uses(name), x).text
        expected = [np.asarray(r) for r in jax.jit(uses(name))(x)]
    got = main_on(path, text, tmp_path)(x)
    assert len(got) == len(expected)
    for mine, theirs in zip(got, expected, strict=True):
        assert mine.dtype == theirs.dtype
        np.testing.assert_array_equal(mine, theirs)


@pytest.mark.slow
@pytest.mark.toolchain
def test_four_bit_floats_on_the_compiled_path(tmp_path):
    x = values()
    with jax.enable_x64(True):
        text = rewriter.export(uses("float4_e2m1fn"), x).text
        expected = [np.asarray(r) for r in jax.jit(uses("float4_e2m1fn"))(x)]
    got = main_on("compile", text, tmp_path)(x)
    for mine, theirs in zip(got, expected, strict=True):
        assert mine.dtype == theirs.dtype
        np.testing.assert_array_equal(mine, theirs)
