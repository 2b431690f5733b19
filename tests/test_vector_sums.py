"""Sums along the innermost loop are marked reassociable, so that LLVM vectorizes them, and
stay within the error bound of any summation order (rewriter/compile/vector_sums.py)."""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np
import pytest

import rewriter
from rewriter.compile import compile_module, load
from rewriter.compile.vector_sums import reassociable_sums

pytestmark = [pytest.mark.jax]

# A row sum (innermost reduction), a column sum (outer reduction) and an integer row sum.
SUMS = """\
func.func @f(%x: memref<4x8xf32>, %rows: memref<4xf32>, %columns: memref<8xf32>,
             %i: memref<4x8xi32>, %irows: memref<4xi32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%rows : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %in, %acc : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%columns : memref<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %acc, %in : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%i : memref<4x8xi32>) outs(%irows : memref<4xi32>) {
  ^bb0(%in: i32, %acc: i32):
    %0 = arith.addi %in, %acc : i32
    linalg.yield %0 : i32
  }
  return
}
"""


def test_the_add_into_an_innermost_reduction_is_marked_reassoc():
    text = reassociable_sums(SUMS)
    assert text.count("fastmath<reassoc>") == 1
    marked = next(line for line in text.splitlines() if "reassoc" in line)
    assert "arith.addf %in, %out" in marked  # the row sum's (printed with the names MLIR
    # gives block arguments), not the column sum's (%out, %in)


def test_a_module_without_one_is_left_alone():
    start = SUMS.index("  linalg.generic")
    without = SUMS[:start] + SUMS[SUMS.index("  linalg.generic", start + 1) :]
    assert reassociable_sums(without) == without


def _sums(x):
    return x.sum(-1), x.mean(-1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_sums_are_vectorizable_and_within_the_bound_of_any_order(dtype, tmp_path: Path):
    """|computed - exact| <= (n - 1) u sum |x| for a sum of n terms in any order (Higham,
    "Accuracy and Stability of Numerical Algorithms", 4.2), on rows of every length from
    1 to 300; the LLVM IR's additions into the sums are ``reassoc``."""
    from mlir_tools import LLVM_TOOLS, require_tool

    for tool in LLVM_TOOLS:
        require_tool(tool)
    rng = np.random.default_rng(0)
    unit = 2.0**-24 if dtype == np.float32 else 2.0**-53
    for n in (1, 7, 8, 33, 128, 300):
        x = (rng.normal(size=(64, n)) * 10.0 ** rng.uniform(-3, 3, (64, 1))).astype(dtype)
        with jax.enable_x64(dtype == np.float64):
            text = rewriter.export(_sums, x).text
        stages = tmp_path / f"stages{n}"
        library = tmp_path / f"sums{n}.so"
        compile_module(rewriter.rewrite(text).text, library, keep_temps=stages)
        sums, means = load(library).main(x)
        exact = x.astype(np.longdouble).sum(-1)
        bound = max(n - 1, 1) * unit * np.abs(x).astype(np.longdouble).sum(-1)
        assert np.all(np.abs(np.asarray(sums) - exact) <= bound)
        assert np.all(np.abs(np.asarray(means) - exact / n) <= bound / n * (1 + 2 * unit))
        llvm_ir = next(stages.glob("*.ll")).read_text(encoding="utf-8")
        if n > 1:
            assert "fadd reassoc" in llvm_ir
