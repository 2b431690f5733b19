"""Integer-to-f64 conversions of scalars on both paths (rewriter/compile/host_converts.py):
with x64 on, ``jnp.median``, ``quantile`` and ``percentile`` of a symbolic batch convert the
batch size to f64, which IREE's VM could not ("failed to legalize operation 'arith.sitofp'
... (i32) -> f64"); and the conversion through 64 bits keeps every integer's value."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths

from rewriter.compile.host_converts import host_converts

pytestmark = [pytest.mark.iree, pytest.mark.jax]

OF_THE_BATCH = {
    "median": (lambda a: jnp.median(a, axis=0), np.float64),
    "percentile": (lambda a: jnp.percentile(a, 30.0, axis=0), np.float32),
    "middle row": (lambda a: a[jnp.int32(jnp.floor(a.shape[0] * 0.5))], np.float64),
}


def test_each_scalar_integer_to_f64_convert_goes_through_64_bits_and_a_barrier():
    def scalars(i, u, flag, v):
        return (i.astype(jnp.float64), u.astype(jnp.float64), flag.astype(jnp.float64), v * 2.0)

    with jax.enable_x64(True):
        inputs = (np.int32(-7), np.uint32(7), np.bool_(True), np.arange(3.0))
        changed, text = applied(host_converts, scalars, *inputs)
    assert changed == 3  # not the convert of a vector
    assert text.count("stablehlo.optimization_barrier") == 3
    assert "(tensor<ui32>) -> tensor<ui64>" in text
    assert "(tensor<i32>) -> tensor<i64>" in text
    assert "(tensor<i1>) -> tensor<i64>" in text


@on_both_paths
@pytest.mark.parametrize("name", OF_THE_BATCH)
def test_statistics_of_a_symbolic_batch_with_x64(name, path, tmp_path):
    function, dtype = OF_THE_BATCH[name]
    (batch,) = jax.export.symbolic_shape("b")
    x = np.random.default_rng(3).standard_normal((7, 5)).astype(dtype)
    with jax.enable_x64(True):
        spec = jax.ShapeDtypeStruct((batch, 5), dtype)
        text = jax.export.export(jax.jit(function))(spec).mlir_module()
        expected = np.asarray(jax.jit(function)(x))
    got = main_on(path, text, tmp_path)(x)
    np.testing.assert_array_equal(got, expected)


@on_both_paths
def test_scalar_integers_of_every_width_convert_to_f64_exactly(path, tmp_path):
    values = {
        np.int8: -128,
        np.int16: 32767,
        np.int32: -(2**31),
        np.int64: 2**53 + 1,  # rounds to 2^53 as a float, as numpy's
        np.uint8: 255,
        np.uint16: 65535,
        np.uint32: 2**32 - 1,
        np.uint64: 2**64 - 1,
        np.bool_: True,
    }
    arguments = [np.asarray(value, dtype) for dtype, value in values.items()]

    def to_f64(*scalars):
        return jnp.stack([s.astype(jnp.float64) for s in scalars])

    with jax.enable_x64(True):
        text = jax.export.export(jax.jit(to_f64))(*arguments).mlir_module()
        expected = np.asarray(jax.jit(to_f64)(*arguments))
    np.testing.assert_array_equal(expected, [float(a) for a in arguments])
    got = main_on(path, text, tmp_path)(*arguments)
    np.testing.assert_array_equal(got, expected)
