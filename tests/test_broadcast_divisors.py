"""``a / broadcast(b)`` of f32 and f64 is ``a * broadcast(1 / b)``, as jax.jit computes it
(rewriter/compile/broadcast_divisors.py)."""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np
import pytest

import rewriter
from rewriter.compile import compile_module, contexts, load
from rewriter.compile.broadcast_divisors import multiply_by_reciprocals

pytestmark = [pytest.mark.jax]

# A row division in f64, one by a broadcast constant dividend, one in f16, and one of a
# full-size divisor.
MODULE = """\
func.func @f(%a: tensor<4x8xf64>, %s: tensor<4xf64>, %h: tensor<4x8xf16>, %t: tensor<4xf16>,
             %b: tensor<4x8xf64>) -> (tensor<4x8xf64>, tensor<4x8xf64>, tensor<4x8xf16>,
                                      tensor<4x8xf64>) {
  %bs = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<4xf64>) -> tensor<4x8xf64>
  %rows = stablehlo.divide %a, %bs : tensor<4x8xf64>
  %two = stablehlo.constant dense<2.0> : tensor<f64>
  %twos = stablehlo.broadcast_in_dim %two, dims = [] : (tensor<f64>) -> tensor<4x8xf64>
  %constant = stablehlo.divide %twos, %bs : tensor<4x8xf64>
  %bt = stablehlo.broadcast_in_dim %t, dims = [0] : (tensor<4xf16>) -> tensor<4x8xf16>
  %half = stablehlo.divide %h, %bt : tensor<4x8xf16>
  %full = stablehlo.divide %a, %b : tensor<4x8xf64>
  return %rows, %constant, %half, %full : tensor<4x8xf64>, tensor<4x8xf64>, tensor<4x8xf16>,
                                          tensor<4x8xf64>
}
"""


def _rewritten(text: str) -> tuple[int, str]:
    from iree.compiler import ir

    context = contexts.context()
    module = ir.Module.parse(text, context)
    with context:
        count = multiply_by_reciprocals(module)
    return count, str(module)


def test_only_a_float_division_by_a_broadcast_becomes_a_multiply():
    count, text = _rewritten(MODULE)
    assert count == 1
    assert text.count("stablehlo.multiply") == 1
    # the reciprocals of the 4 row values, then the untouched divisions
    assert "stablehlo.divide %cst, %arg1 : tensor<4xf64>" in text
    assert text.count("stablehlo.divide") == 4


def _rows(a, s):
    return a / s[:, None], a / s[0]


@pytest.mark.toolchain
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_division_by_a_broadcast_is_jax_jits_bit_for_bit(dtype, tmp_path: Path):
    """Where ``a / b`` and ``a * (1 / b)`` round apart (most of these elements), the
    compiled results are jax.jit's."""
    rng = np.random.default_rng(3)
    a = rng.uniform(1, 2, (16, 64)).astype(dtype)
    s = rng.uniform(1, 2, 16).astype(dtype)
    assert np.count_nonzero(a / s[:, None] != a * (1 / s[:, None])) > 100
    with jax.enable_x64(dtype == np.float64):
        text = rewriter.export(_rows, a, s).text
        expected = [np.asarray(e) for e in jax.jit(_rows)(a, s)]
    library = tmp_path / "rows.so"
    compile_module(rewriter.rewrite(text).text, library)
    got = load(library).main(a, s)
    for one, other in zip(got, expected, strict=True):
        assert np.asarray(one).dtype == other.dtype
        assert np.array_equal(np.asarray(one), other)


# Divisions by jax's broadcasts of a symbolic batch: by a constant, by row sums (a static
# dimension spread from 1 to 8), and by a column (only the dynamic batch spreads).
DYNAMIC_MODULE = """\
func.func @f(%a: tensor<?x8xf32>, %rows: tensor<?x1xf32>, %column: tensor<1x8xf32>,
             %shape: tensor<2xi32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %c = stablehlo.constant dense<255.0> : tensor<f32>
  %cs = stablehlo.dynamic_broadcast_in_dim %c, %shape, dims = []
      : (tensor<f32>, tensor<2xi32>) -> tensor<?x8xf32>
  %by_constant = stablehlo.divide %a, %cs : tensor<?x8xf32>
  %rs = stablehlo.dynamic_broadcast_in_dim %rows, %shape, dims = [0, 1]
      : (tensor<?x1xf32>, tensor<2xi32>) -> tensor<?x8xf32>
  %by_rows = stablehlo.divide %a, %rs : tensor<?x8xf32>
  %ks = stablehlo.dynamic_broadcast_in_dim %column, %shape, dims = [0, 1]
      : (tensor<1x8xf32>, tensor<2xi32>) -> tensor<?x8xf32>
  %by_column = stablehlo.divide %a, %ks : tensor<?x8xf32>
  return %by_constant, %by_rows, %by_column : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}
"""


def test_a_division_by_a_dynamic_broadcast_that_surely_spreads_becomes_a_multiply():
    from iree.compiler import ir

    from rewriter.compile.broadcast_divisors import multiply_by_dynamic_reciprocals

    context = contexts.context()
    module = ir.Module.parse(DYNAMIC_MODULE, context)
    with context:
        assert multiply_by_dynamic_reciprocals(module) == 2
        assert module.operation.verify()
    text = str(module)
    assert text.count("stablehlo.multiply") == 2
    assert "stablehlo.divide %arg0, %" in text  # the column's: it may copy one to one


def _of_a_symbolic_batch(a, pixels):
    return a / a.sum(1, keepdims=True), pixels.astype(np.float32) / 255


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.iree
@pytest.mark.parametrize("path", ["compile", "iree"])
def test_divisions_of_a_symbolic_batch_are_jax_jits_bit_for_bit(path, tmp_path: Path):
    from iree_fixes import main_on

    (batch,) = jax.export.symbolic_shape("b")
    specs = [jax.ShapeDtypeStruct((batch, 8), np.float32)]
    specs.append(jax.ShapeDtypeStruct((batch, 8), np.uint8))
    text = jax.export.export(jax.jit(_of_a_symbolic_batch))(*specs).mlir_module()
    main = main_on(path, text, tmp_path)
    for rows in (1, 5):
        rng = np.random.default_rng(rows)
        a = rng.uniform(1, 2, (rows, 8)).astype(np.float32)
        pixels = rng.integers(0, 256, (rows, 8)).astype(np.uint8)
        expected = jax.jit(_of_a_symbolic_batch)(a, pixels)
        for one, other in zip(main(a, pixels), expected, strict=True):
            assert np.array_equal(one, np.asarray(other))


def _by_constants(mask, x):
    return mask.mean(), x.sum() / 30.0, x.mean(0)


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.iree
@pytest.mark.parametrize("path", ["compile", "iree"])
def test_divisions_by_a_constant_are_jax_jits_bit_for_bit(path, tmp_path: Path):
    """``a / c`` of a 0-d ``a`` (a mean of everything): XLA multiplies by ``1 / c``, rounded
    once; ``13 / 30`` is 0.43333334 in f32, ``13 * (1 / 30)`` 0.43333337."""
    from iree_fixes import main_on

    mask = np.isin(np.arange(30), [0, 2, 3, 7, 8, 11, 13, 17, 19, 22, 23, 26, 29]).reshape(5, 6)
    assert mask.sum() == 13 and np.float32(13) / 30 != np.float32(13) * (np.float32(1) / 30)
    x = np.random.default_rng(13).standard_normal((5, 6)).astype(np.float32)
    main = main_on(path, rewriter.export(_by_constants, mask, x).text, tmp_path)
    for one, other in zip(main(mask, x), jax.jit(_by_constants)(mask, x), strict=True):
        assert np.array_equal(one, np.asarray(other))
