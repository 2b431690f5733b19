"""An argmax or argmin over a 1-D array is two vectorizable loops, with jax.jit's indices:
the first of equal extremes, the first NaN, and the initial value's own place in the fold
(rewriter/compile/index_extrema.py)."""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rewriter
from rewriter.compile import compile_module, load
from rewriter.compile.index_extrema import two_pass_arg_extrema

pytestmark = [pytest.mark.toolchain, pytest.mark.iree, pytest.mark.jax, pytest.mark.slow]

SIZE = 37


def _both(x):
    return jnp.argmax(x), jnp.argmin(x)


def _inputs(dtype) -> list[np.ndarray]:
    """Ties of the extremes, both zeros first, infinities only, NaNs at the ends and in
    the middle, and random values."""
    rng = np.random.default_rng(0)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.5, -1.5, 2.0], dtype)
    made = [rng.normal(size=SIZE).astype(dtype) for _ in range(4)]
    made += [rng.choice(special[[0, 1, 2, 3, 5, 6, 7]], size=SIZE) for _ in range(8)]
    made += [rng.choice(special, size=SIZE) for _ in range(8)]
    made += [rng.integers(0, 3, SIZE).astype(dtype) for _ in range(4)]
    for value in (0.0, -0.0, np.inf, -np.inf, np.nan):
        made.append(np.full(SIZE, value, dtype))
    signed = np.zeros(SIZE, dtype)
    signed[:5] = -0.0
    made.append(signed)
    for place in (0, 1, SIZE // 2, SIZE - 1):
        with_nan = rng.normal(size=SIZE).astype(dtype)
        with_nan[place] = np.nan
        with_nan[-1 if place != SIZE - 1 else 0] = np.nan
        made.append(with_nan)
    return made


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_argmax_and_argmin_are_jax_jits(tmp_path: Path, dtype):
    with jax.enable_x64(dtype == np.float64):
        text = jax.jit(_both).lower(np.zeros(SIZE, dtype)).as_text()
        library = tmp_path / "both.so"
        compile_module(rewriter.rewrite(text).text, library, keep_temps=tmp_path / "stages")
        stages = (tmp_path / "stages" / "3-library-calls.mlir").read_text(encoding="utf-8")
        # four loops, no reduction of two outputs left (the generic's body has linalg.index)
        assert stages.count("scf.for") == 4 and "linalg.index" not in stages
        assert stages.count("llvm.intr.maximum") == 1 and "llvm.intr.minimum" in stages
        main = load(library).main
        for x in _inputs(dtype):
            got = main(x)
            want = jax.jit(_both)(x)
            for g, w in zip(got, want, strict=True):
                assert g.dtype == np.asarray(w).dtype
                assert int(g) == int(w), x


# jax's argmax reduction with an initial value and index given by the caller: the fold of
# the body starts from them, so they win ties with later indices and lose to earlier ones.
WITH_START = """\
func.func public @main(%x: tensor<SIZExf32>, %v: tensor<f32>, %i: tensor<i32>)
    -> (tensor<f32>, tensor<i32>) {
  %iota = stablehlo.iota dim = 0 : tensor<SIZExi32>
  %r:2 = stablehlo.reduce(%x init: %v), (%iota init: %i) across dimensions = [0]
      : (tensor<SIZExf32>, tensor<SIZExi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)
   reducer(%a: tensor<f32>, %b: tensor<f32>) (%c: tensor<i32>, %d: tensor<i32>) {
    %2 = stablehlo.compare GT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %3 = stablehlo.compare NE, %a, %a, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %4 = stablehlo.or %2, %3 : tensor<i1>
    %5 = stablehlo.compare EQ, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %6 = stablehlo.compare LT, %c, %d, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %7 = stablehlo.and %5, %6 : tensor<i1>
    %8 = stablehlo.or %4, %7 : tensor<i1>
    %9 = stablehlo.select %4, %a, %b : tensor<i1>, tensor<f32>
    %10 = stablehlo.select %8, %c, %d : tensor<i1>, tensor<i32>
    stablehlo.return %9, %10 : tensor<f32>, tensor<i32>
  }
  return %r#0, %r#1 : tensor<f32>, tensor<i32>
}
""".replace("SIZE", str(SIZE))


def _fold(x: np.ndarray, value: np.float32, index: int) -> tuple[np.float32, int]:
    """The reduction's body applied element after element, from the initial value."""
    for position, element in enumerate(x):
        keep = value > element or value != value
        if not (keep or (value == element and index < position)):
            value, index = element, position
    return value, index


def test_the_initial_value_takes_its_place_in_the_fold(tmp_path: Path):
    library = tmp_path / "start.so"
    compile_module(WITH_START, library, keep_temps=tmp_path / "stages")
    stages = (tmp_path / "stages" / "3-library-calls.mlir").read_text(encoding="utf-8")
    assert "linalg.index" not in stages  # the two loops
    main = load(library).main
    rng = np.random.default_rng(1)
    x = rng.integers(0, 3, SIZE).astype(np.float32)  # maximum 2.0 at several places
    first = int(np.argmax(x))
    cases = [(2.0, 0), (2.0, first), (2.0, first + 1), (2.0, SIZE + 5), (3.0, 9), (1.0, 0)]
    cases += [(np.nan, 4), (-np.inf, 2)]
    with_nan = x.copy()
    with_nan[5] = np.nan
    for array in (x, with_nan):
        for value, index in cases:
            start = np.float32(value)
            got_value, got_index = main(array, start, np.int32(index))
            want_value, want_index = _fold(array, start, index)
            assert int(got_index) == want_index, (array, value, index)
            np.testing.assert_array_equal(got_value, np.float32(want_value))


def test_other_reductions_are_left_alone():
    text = """\
func.func @f(%x: memref<8xf32>, %m: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%x : memref<8xf32>) outs(%m : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.maximumf %acc, %in : f32
    linalg.yield %0 : f32
  }
  return
}
"""
    assert two_pass_arg_extrema(text) == text
