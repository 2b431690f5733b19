"""A product whose large operand would be transposed into a copy is computed with its
operands swapped, the small result transposed back (rewriter/compile/product_order.py)."""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rewriter
from rewriter.compile import compile_module, contexts, load
from rewriter.compile.product_order import swap_products

pytestmark = [pytest.mark.jax]

# The second product of self-attention as jax writes it (v first, the softmax p second,
# contracting p's last dimension), and a plain matrix product.
MODULE = """\
func.func @f(%v: tensor<2x64x4x16xf64>, %p: tensor<2x4x64x64xf64>, %x: tensor<8x16xf64>,
             %w: tensor<16x4xf64>) -> (tensor<2x4x16x64xf64>, tensor<8x4xf64>) {
  %0 = stablehlo.dot_general %v, %p, batching_dims = [0, 2] x [0, 1],
       contracting_dims = [1] x [3],
       precision = [DEFAULT, HIGHEST]
     : (tensor<2x64x4x16xf64>, tensor<2x4x64x64xf64>) -> tensor<2x4x16x64xf64>
  %1 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0]
     : (tensor<8x16xf64>, tensor<16x4xf64>) -> tensor<8x4xf64>
  return %0, %1 : tensor<2x4x16x64xf64>, tensor<8x4xf64>
}
"""


def test_the_softmax_becomes_the_left_operand_and_the_result_is_transposed_back():
    from iree.compiler import ir

    context = contexts.context()
    module = ir.Module.parse(MODULE, context)
    with context:
        assert swap_products(module) == 1
    text = str(module)
    assert "stablehlo.dot_general %arg1, %arg0, batching_dims = [0, 1] x [0, 2]" in text
    assert "contracting_dims = [3] x [1], precision = [HIGHEST, DEFAULT]" in text
    assert "(tensor<2x4x64x64xf64>, tensor<2x64x4x16xf64>) -> tensor<2x4x64x16xf64>" in text
    assert "dims = [0, 1, 3, 2] : (tensor<2x4x64x16xf64>) -> tensor<2x4x16x64xf64>" in text
    assert "stablehlo.dot_general %arg2, %arg3" in text  # in place already: left alone


def _mix(p, v):
    return jnp.einsum("bhqk,bkhd->bqhd", p, v)


@pytest.mark.toolchain
def test_attentions_second_product_copies_no_softmax_sized_buffer(tmp_path: Path):
    """Bufferized, the module allocates nothing of p's size (p was transposed into a
    copy before the product), and its results are jax.jit's to the rounding of a sum."""
    rng = np.random.default_rng(4)
    p = rng.uniform(0, 1, (2, 4, 64, 64))
    v = rng.standard_normal((2, 64, 4, 16))
    with jax.enable_x64(True):
        text = rewriter.export(_mix, p, v).text
        expected = np.asarray(jax.jit(_mix)(p, v))
    library = tmp_path / "mix.so"
    stages = tmp_path / "stages"
    compile_module(rewriter.rewrite(text).text, library, keep_temps=stages)
    bufferized = next(stages.glob("*-bufferize.mlir")).read_text(encoding="utf-8")
    assert "linalg.batch_matmul" in bufferized
    assert "memref.alloc() alignment = 64 : memref<2x4x64x64xf64>" not in bufferized
    got = np.asarray(load(library).main(p, v))
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13)
