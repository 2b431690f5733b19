"""Reductions over outer dimensions get a contiguous innermost loop
(rewriter/compile/loop_order.py), without changing the order in which any output element
is summed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rewriter.compile import compile_module, load
from rewriter.compile.loop_order import contiguous_innermost

# The mean over height and width of an NHWC image, as bufferized: loops (n, c, h, w).
SPATIAL_SUM = """\
func.func @f(%x: memref<2x3x4x5xf32>, %out: memref<2x5xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>,
                                   affine_map<(d0, d1, d2, d3) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x : memref<2x3x4x5xf32>) outs(%out : memref<2x5xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  return
}
"""

# A sum over the last dimension: already contiguous, stays as it is.
ROW_SUM = """\
func.func @f(%x: memref<2x3xf32>, %out: memref<2xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2x3xf32>) outs(%out : memref<2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  return
}
"""


def test_the_parallel_contiguous_dimension_moves_innermost():
    text = contiguous_innermost(SPATIAL_SUM)
    assert 'iterator_types = ["parallel", "reduction", "reduction", "parallel"]' in text
    # old (n, c, h, w) is new (n, h, w, c): x[n, h, w, c] and out[n, c]
    assert "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>" in text
    assert "affine_map<(d0, d1, d2, d3) -> (d0, d3)>" in text


def test_a_reduction_over_the_last_dimension_is_left_alone():
    assert contiguous_innermost(ROW_SUM) == ROW_SUM


# A 0-d operation (a scalar computed as a linalg.generic without dimensions).
SCALAR = """\
func.func @f(%x: memref<f32>, %out: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>],
                  iterator_types = []}
      ins(%x : memref<f32>) outs(%out : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  return
}
"""


def test_an_operation_without_dimensions_is_left_alone():
    assert contiguous_innermost(SCALAR) == SCALAR


def test_a_body_that_reads_its_indices_is_left_alone():
    with_index = SPATIAL_SUM.replace(
        "    %s = arith.addf %acc, %in : f32\n",
        "    %i = linalg.index 1 : index\n    %s = arith.addf %acc, %in : f32\n",
    )
    assert contiguous_innermost(with_index) == with_index


@pytest.mark.toolchain
def test_pooling_after_relu_sums_in_the_same_order(tmp_path: Path):
    """jax's relu and mean over (h, w) of NHWC images, compiled: equal bit for bit to a sum
    over h, then w, in f32 (the loops' order for every output element), then times
    1 / (h * w), as jax.jit divides by a broadcast value (broadcast_divisors.py)."""
    import jax

    import rewriter

    def pool(x):
        return jax.nn.relu(x).mean((1, 2))

    x = np.random.default_rng(0).normal(size=(3, 6, 7, 16)).astype(np.float32)
    temps = tmp_path / "temps"
    compile_module(rewriter.export(pool, x).text, tmp_path / "lib.so", keep_temps=temps)
    assert '"reduction", "reduction", "parallel"]' in (temps / "3-library-calls.mlir").read_text()
    total = np.zeros((3, 16), np.float32)
    for h in range(6):
        for w in range(7):
            total += np.maximum(x[:, h, w, :], np.float32(0))
    expected = total * (np.float32(1) / np.float32(6 * 7))
    np.testing.assert_array_equal(load(tmp_path / "lib.so").main(x), expected)
