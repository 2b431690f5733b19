"""A cheap elementwise loop that several loops read is recomputed in each of them, not
written to a buffer of its own (rewriter/compile/producer_copies.py)."""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np
import pytest

import rewriter
from rewriter.compile import compile_module, contexts, load
from rewriter.compile.producer_copies import copy_per_user

pytestmark = [pytest.mark.jax]

# x * 0.25 read by a row maximum and by an exp; x + 1 read by one loop only.
MODULE = """\
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @f(%x: tensor<4x8xf64>, %m: tensor<4xf64>) -> (tensor<4xf64>, tensor<4x8xf64>,
                                                         tensor<4x8xf64>) {
  %quarter = arith.constant 0.25 : f64
  %one = arith.constant 1.0 : f64
  %empty = tensor.empty() : tensor<4x8xf64>
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf64>) outs(%empty : tensor<4x8xf64>) {
  ^bb0(%in: f64, %out: f64):
    %0 = arith.mulf %in, %quarter : f64
    linalg.yield %0 : f64
  } -> tensor<4x8xf64>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%scaled : tensor<4x8xf64>) outs(%m : tensor<4xf64>) {
  ^bb0(%in: f64, %out: f64):
    %0 = arith.maximumf %out, %in : f64
    linalg.yield %0 : f64
  } -> tensor<4xf64>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%scaled : tensor<4x8xf64>) outs(%empty : tensor<4x8xf64>) {
  ^bb0(%in: f64, %out: f64):
    %0 = math.exp %in : f64
    linalg.yield %0 : f64
  } -> tensor<4x8xf64>
  %plus = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf64>) outs(%empty : tensor<4x8xf64>) {
  ^bb0(%in: f64, %out: f64):
    %0 = arith.addf %in, %one : f64
    linalg.yield %0 : f64
  } -> tensor<4x8xf64>
  return %max, %exp, %plus : tensor<4xf64>, tensor<4x8xf64>, tensor<4x8xf64>
}
"""


def test_the_second_reader_of_a_scaling_gets_a_copy_of_it():
    from iree.compiler import ir

    context = contexts.context()
    module = ir.Module.parse(MODULE, context)
    with context:
        assert copy_per_user(module) == 1  # not the exp's loop, nor x + 1 (one reader)
    text = str(module)
    assert text.count("arith.mulf") == 2
    assert text.count("arith.addf") == 1
    assert text.count("math.exp") == 1


def _softmax(x):
    return jax.nn.softmax(x * 0.25, axis=-1)


@pytest.mark.toolchain
def test_scaled_scores_are_not_written_out_before_the_softmax(tmp_path: Path):
    """Bufferized, a softmax of scaled scores allocates two buffers of the scores' size
    (the exps and the result), not a third for the scaled scores; its results are
    jax.jit's to the rounding of its exp."""
    x = np.random.default_rng(5).standard_normal((8, 64))
    with jax.enable_x64(True):
        text = rewriter.export(_softmax, x).text
        expected = np.asarray(jax.jit(_softmax)(x))
    library = tmp_path / "softmax.so"
    stages = tmp_path / "stages"
    compile_module(rewriter.rewrite(text).text, library, keep_temps=stages)
    bufferized = next(stages.glob("*-bufferize.mlir")).read_text(encoding="utf-8")
    assert bufferized.count("memref.alloc() alignment = 64 : memref<8x64xf64>") == 2
    got = np.asarray(load(library).main(x))
    np.testing.assert_allclose(got, expected, rtol=1e-14, atol=0)
