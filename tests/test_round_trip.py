"""The round trip: one kernel library, two paths, the same numbers.

JAX runs each sample's own Python function with the kernel library's FFI handlers; the
sample's rewritten module is compiled by ``rewriter.compile`` (iree-opt, mlir-opt-22,
clang-22), loaded with the same kernel library, and run on the same inputs. Floats agree
to rtol 1e-6, integers exactly.
"""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest
from kernel_library import (
    ROUND_TRIP,
    RTOL,
    SAMPLES,
    assert_agree,
    assert_all_agree,
    load_kernels,
    sample,
)

from rewriter.compile import compile_module, load

pytestmark = [
    pytest.mark.toolchain,
    pytest.mark.toolchain("gcc", "g++"),
    pytest.mark.jax,
    pytest.mark.slow,
]


@pytest.fixture(scope="session")
def compiled(tmp_path_factory, kernel_library):
    """Compile a sample's rewritten module once per session; load it with the kernels."""
    cache = {}

    def get(name: str):
        if name not in cache:
            output = tmp_path_factory.mktemp("compiled") / f"lib{name}.so"
            compile_module(SAMPLES / name / f"{name}.rewritten.mlir", output)
            cache[name] = load(output, kernels=[kernel_library])
        return cache[name]

    return get


def random_input(shape, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


@pytest.mark.parametrize("name", sorted(ROUND_TRIP))
def test_compiled_module_matches_jax(name, compiled):
    function_name, shapes = ROUND_TRIP[name]
    function = getattr(sample(name), function_name)
    for seed in range(3):
        inputs = [random_input(shape, seed) for shape in shapes]
        expected = jax.jit(function)(*inputs)
        got = compiled(name).main(*inputs)
        assert_all_agree(got, expected)


def test_attribute_kernel_round_trip(compiled):
    """Every attribute kind reaches the kernel with the same value on both paths.

    XLA (jaxlib 0.10.2) cannot run f16/bf16 scalar attributes, so the JAX side passes
    their bits as uint16 (XLA_ATTRIBUTES); the compiled side runs the real export, whose
    f16/bf16 constants are bitcast to the same bits by the rewrite.
    """
    module = sample("attribute_kernel")
    x = np.array([0.1, -3.75], np.float32)
    with jax.enable_x64(True):
        run = jax.jit(functools.partial(module.attr_kernel, attributes=module.XLA_ATTRIBUTES))
        expected = np.asarray(run(x))
    got = compiled("attribute_kernel").main(x)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, expected)  # decoded values: exact


def test_side_effect_runs_once_per_call(compiled, kernel_library):
    module = sample("side_effect")
    counter = load_kernels(kernel_library).lib
    x = np.array([1.0, -2.5, 4.0], np.float32)
    counter.count_calls_reset()
    expected = jax.jit(module.count_and_double)(x)
    expected.block_until_ready()
    assert counter.count_calls_value() == 3
    program = compiled("side_effect")
    for _ in range(4):
        assert_agree(program.main(x), expected)
    assert counter.count_calls_value() == 3 + 4 * 3


@pytest.mark.parametrize("batch", [1, 3, 7, 64])
def test_dynamic_shape_round_trip(compiled, batch):
    module = sample("dynamic_shape")
    x = random_input((batch, 8), seed=batch)
    expected = jax.jit(module.row_scale)(x)
    assert_agree(compiled("dynamic_shape").main(x), expected)


def test_column_major_kernel_sees_the_declared_layout(compiled):
    """Both paths compute out[i, j] = x[i, j] * (i + 1) + j on the logical matrix, although
    the kernel indexes column-major storage: the layout reached it on both paths."""
    x = random_input((3, 5), seed=11)
    i, j = np.indices(x.shape, dtype=np.float32)
    tanh = np.asarray(jax.jit(jax.numpy.tanh)(x))  # XLA's tanh, as in the program
    reference = (tanh * (i + 1) + j) + np.float32(1)
    np.testing.assert_allclose(jax.jit(sample("column_major").f)(x), reference, rtol=RTOL)
    np.testing.assert_allclose(compiled("column_major").main(x), reference, rtol=RTOL)
