"""f32 and f64 maximum and minimum are LLVM's intrinsics, whose reductions LLVM vectorizes,
and agree with jax.jit on NaN and signed zeros (rewriter/compile/float_extrema.py)."""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rewriter
from rewriter.compile import compile_module, load
from rewriter.compile.float_extrema import intrinsic_extrema

pytestmark = [pytest.mark.jax]

# A row maximum (a softmax's) in f32, a minimum in f64 and one in f16, as bufferized.
REDUCTIONS = """\
func.func @f(%x: memref<4x8xf32>, %m: memref<4xf32>, %y: memref<4xf64>, %n: memref<f64>,
             %h: memref<4xf16>, %k: memref<f16>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.maximumf %acc, %in : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%y : memref<4xf64>) outs(%n : memref<f64>) {
  ^bb0(%in: f64, %acc: f64):
    %0 = arith.minimumf %in, %acc : f64
    linalg.yield %0 : f64
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%h : memref<4xf16>) outs(%k : memref<f16>) {
  ^bb0(%in: f16, %acc: f16):
    %0 = arith.maximumf %in, %acc : f16
    linalg.yield %0 : f16
  }
  return
}
"""


def test_f32_and_f64_extrema_become_llvm_intrinsics():
    text = intrinsic_extrema(REDUCTIONS)
    assert "llvm.intr.maximum" in text and "llvm.intr.minimum" in text
    assert "arith.minimumf" not in text
    assert text.count("arith.maximumf") == 1 and "f16" in text  # f16 is left alone


def test_a_module_without_them_is_left_alone():
    without = REDUCTIONS.replace("arith.maximumf", "arith.addf").replace(
        "arith.minimumf", "arith.addf"
    )
    assert intrinsic_extrema(without) == without


def _extrema(a, b):
    return jnp.maximum(a, b), jnp.minimum(a, b), a.max(-1), a.min(-1), b.max(0)


def _signed_zeros_and_nan(dtype) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of equal zeros of both signs in both orders, NaN on either side, and numbers,
    in rows long enough for a vectorized reduction."""
    rng = np.random.default_rng(0)
    a = rng.choice(np.array([0.0, -0.0, 1.5, -2.0]), (6, 64))
    b = rng.choice(np.array([0.0, -0.0, 1.5, -2.0]), (6, 64))
    a[0], b[0] = 0.0, -0.0
    a[1], b[1] = -0.0, 0.0
    a[2], b[2] = -0.0, -0.0
    a[3, 5], b[4, 7] = np.nan, np.nan
    return a.astype(dtype), b.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_maximum_and_minimum_agree_with_jax_jit_on_signed_zeros_and_nan(dtype, tmp_path: Path):
    """``maximum(+0.0, -0.0)`` is ``+0.0`` and ``minimum`` of them ``-0.0`` in either order,
    elementwise and in reductions, as under jax.jit; NaN wins."""
    from mlir_tools import LLVM_TOOLS, require_tool

    for tool in LLVM_TOOLS:
        require_tool(tool)
    a, b = _signed_zeros_and_nan(dtype)
    with jax.enable_x64(dtype == np.float64):
        text = rewriter.export(_extrema, a, b).text
        expected = [np.asarray(e) for e in jax.jit(_extrema)(a, b)]
    library = tmp_path / "extrema.so"
    compile_module(rewriter.rewrite(text).text, library, keep_temps=tmp_path / "stages")
    got = load(library).main(a, b)
    for one, other in zip(got, expected, strict=True):
        one = np.asarray(one)
        assert one.dtype == other.dtype
        nan = np.isnan(other)
        assert np.array_equal(np.isnan(one), nan)
        assert np.array_equal(one[~nan], other[~nan])
        assert np.array_equal(np.signbit(one[~nan]), np.signbit(other[~nan]))
    llvm_ir = next((tmp_path / "stages").glob("*.ll")).read_text(encoding="utf-8")
    suffix = "f32" if dtype == np.float32 else "f64"
    assert f"@llvm.maximum.{suffix}" in llvm_ir and f"@llvm.minimum.{suffix}" in llvm_ir
