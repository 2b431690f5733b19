"""Cumulative sums, products, maxima and minima along a static axis of a symbolic batch
(rewriter/compile/dynamic_scans.py), and along the symbolic axis itself, forward and
reversed (rewriter/compile/dynamic_window_scans.py), run on both paths and give
``jax.jit``'s bits: IREE compiles none of the windows jax writes for them when their shape
is dynamic. A window of a length only known at run time runs as StableHLO defines it.
``lax.cumlogsumexp``, whose window body is several ops (rewriter/compile/scalar_bodies.py),
runs too, within the rounding of its steps."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths
from jax import export, lax

import rewriter
from rewriter.compile.dynamic_scans import dynamic_scans
from rewriter.compile.dynamic_window_scans import dynamic_window_scans

ROWS = jax.ShapeDtypeStruct(export.symbolic_shape("b, 10"), np.float32)
TOKENS = jax.ShapeDtypeStruct(export.symbolic_shape("b, 6, 8"), np.float32)
SERIES = jax.ShapeDtypeStruct(export.symbolic_shape("b"), np.float32)
ONE_COLUMN = jax.ShapeDtypeStruct(export.symbolic_shape("b, 1"), np.float32)
BATCH = jax.ShapeDtypeStruct(export.symbolic_shape("b, 4"), np.float32)


def cumsum_along_rows(x):
    return jnp.cumsum(x, axis=1)


def cumprod_along_rows(x):
    return jnp.cumprod(x, axis=1)


def running_maximum_and_minimum(x):
    return lax.cummax(x, axis=1), lax.cummin(x, axis=1)


def integer_cumsum(x):
    return jnp.cumsum(x.astype(jnp.int32), axis=1)


def cumsum_along_tokens_and_width(x):
    return jnp.cumsum(x, axis=1), jnp.cumsum(x, axis=2)


def cumsum_of_a_series(x):
    return jnp.cumsum(x)


def cumulative_ops_along_the_batch(x):
    return jnp.cumsum(x, 0), jnp.cumprod(x, 0), lax.cummax(x, 0), lax.cummin(x, 0)


def reversed_cumulative_ops_along_the_batch(x):
    return lax.cumsum(x, 0, reverse=True), lax.cummax(x, 0, reverse=True)


def integer_cumsum_of_a_series(x):
    return jnp.cumsum(x.astype(jnp.int32))


def cumlogsumexp_both_ways(x):
    return lax.cumlogsumexp(x, 0), lax.cumlogsumexp(x, 0, reverse=True)


def cumlogsumexp_along_rows(x):
    return lax.cumlogsumexp(x, 1)


ALONG_THE_SYMBOLIC_AXIS = [
    (cumsum_of_a_series, SERIES),
    (cumulative_ops_along_the_batch, BATCH),
    (reversed_cumulative_ops_along_the_batch, BATCH),
    (integer_cumsum_of_a_series, SERIES),
]
PROGRAMS = [
    (cumsum_along_rows, ROWS),
    (cumsum_along_rows, ONE_COLUMN),  # XLA drops a window of one element: -0.0 stays
    (cumprod_along_rows, ROWS),
    (running_maximum_and_minimum, ROWS),
    (integer_cumsum, ROWS),
    (cumsum_along_tokens_and_width, TOKENS),
]


def small_integers(batch: int, shape) -> np.ndarray:
    """Whole numbers from -3 to 3 with -0.0 and a NaN among them: every sum and product
    exact, so that any order gives the same bits, and the signs of zeros and NaNs show."""
    x = np.random.default_rng(batch).integers(-3, 4, size=(batch, *shape.shape[1:]))
    x = x.astype(np.float32)
    x.flat[0] = -0.0
    x.flat[x.size // 2] = np.nan
    return x


def test_only_cumulative_windows_of_dynamic_shape_change():
    for program, shape in [*PROGRAMS, (cumlogsumexp_along_rows, ROWS)]:
        changed, text = applied(dynamic_scans, program, shape)
        assert changed == text.count("iree_linalg_ext.scan") >= 1, program
    static = np.zeros((3, 10), np.float32)
    assert applied(dynamic_scans, cumsum_along_rows, static)[0] == 0
    images = jax.ShapeDtypeStruct(export.symbolic_shape("b, 8, 8, 3"), np.float32)

    def pool(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    assert applied(dynamic_scans, pool, images)[0] == 0


def test_only_windows_along_a_symbolic_axis_change():
    for program, shape in [*ALONG_THE_SYMBOLIC_AXIS, (cumlogsumexp_both_ways, BATCH)]:
        changed, text = applied(dynamic_window_scans, program, shape)
        assert changed >= 1 and "dynamic_reduce_window" not in text, program
    assert applied(dynamic_window_scans, cumsum_along_rows, ROWS)[0] == 0


@on_both_paths
@pytest.mark.parametrize(
    ("program", "shape"),
    PROGRAMS + ALONG_THE_SYMBOLIC_AXIS,
    ids=[
        f"{p.__name__}-{'x'.join(map(str, s.shape))}" for p, s in PROGRAMS + ALONG_THE_SYMBOLIC_AXIS
    ],
)
def test_cumulative_ops_of_a_symbolic_batch_give_jax_jits_bits(program, shape, path, tmp_path):
    main = main_on(path, rewriter.export(program, shape).text, tmp_path)
    for batch in (1, 3, 6):
        x = small_integers(batch, shape)
        if program in (integer_cumsum, integer_cumsum_of_a_series):
            x = np.nan_to_num(x)
        got, expected = main(x), jax.jit(program)(x)
        for one, reference in zip(jax.tree.leaves(got), jax.tree.leaves(expected), strict=True):
            one, reference = np.asarray(one), np.asarray(reference)
            assert one.dtype == reference.dtype and one.shape == reference.shape
            # Bits, zeros' signs included; a NaN's sign and payload are the max op's own
            # (XLA's is negative, the compile path's positive): NaN where jax has NaN.
            np.testing.assert_array_equal(np.isnan(one), np.isnan(reference))
            kept = ~np.isnan(reference)
            width = f"u{one.itemsize}"
            np.testing.assert_array_equal(one[kept].view(width), reference[kept].view(width))


WINDOW_GIVEN = """
module @window_given {
  func.func private @sum(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
    %s = stablehlo.add %a, %b : tensor<f32>
    return %s : tensor<f32>
  }
  func.func public @main(%x: tensor<?xf32>, %window: tensor<1xi32>, %padding: tensor<1x2xi32>)
      -> tensor<?xf32> {
    %zero = stablehlo.constant dense<0.0> : tensor<f32>
    %one = stablehlo.constant dense<1> : tensor<1xi32>
    %sums = stablehlo.custom_call @stablehlo.dynamic_reduce_window(
        %x, %zero, %window, %one, %one, %one, %padding) {called_computations = [@sum]}
      : (tensor<?xf32>, tensor<f32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>,
         tensor<1xi32>, tensor<1x2xi32>) -> tensor<?xf32>
    return %sums : tensor<?xf32>
  }
}
"""


@on_both_paths
def test_a_window_given_at_run_time_is_summed_as_defined(path, tmp_path):
    """Windows of a length and padding the caller gives: cumulative forward and backward
    (the scans), and moving windows of 1 to 4 elements (the loop). Output ``i`` sums the
    elements ``i - low`` to ``i - low + width - 1`` that are inside ``x``, and there are
    ``n + low + high - width + 1`` outputs (summed by hand below)."""
    main = main_on(path, WINDOW_GIVEN, tmp_path)
    x = np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0], np.float32)
    for width, low, high in [
        (6, 5, 0),
        (6, 0, 5),
        (9, 8, 0),
        (2, 0, 0),
        (3, 2, 0),
        (4, 1, 2),
        (1, 0, 0),
    ]:
        expected = [
            sum(x[j] for j in range(i - low, i - low + width) if 0 <= j < len(x))
            for i in range(len(x) + low + high - width + 1)
        ]
        got = main(x, np.array([width], np.int32), np.array([[low, high]], np.int32))
        np.testing.assert_array_equal(
            got, np.array(expected, np.float32), err_msg=str((width, low, high))
        )


@on_both_paths
@pytest.mark.parametrize(
    ("program", "shape", "axis"),
    [
        (cumlogsumexp_both_ways, SERIES, 0),
        (cumlogsumexp_both_ways, BATCH, 0),
        (cumlogsumexp_along_rows, ROWS, 1),
    ],
    ids=["series", "batch", "rows"],
)
def test_a_cumulative_logsumexp_of_a_symbolic_batch_is_within_its_rounding(
    program, shape, axis, path, tmp_path
):
    """Each output within ``4 k u (|y| + 1)`` of the exact one in f64, ``k`` the elements
    it combines: a step of logaddexp (``max(a, b) + log1p(exp(-|a - b|))``) rounds its
    four ops once each, the sum's error by at most ``u (|y| + 1)``; so is jax.jit's."""
    main = main_on(path, rewriter.export(program, shape).text, tmp_path)
    for batch in (1, 3, 200):
        x = np.random.default_rng(batch).normal(size=(batch, *shape.shape[1:]))
        x = (x * 4).astype(np.float32)
        wide = x.astype(np.float64)
        exact = [np.logaddexp.accumulate(wide, axis=axis)]
        if program is cumlogsumexp_both_ways:
            reversed_ = np.flip(np.logaddexp.accumulate(np.flip(wide, axis), axis=axis), axis)
            exact.append(reversed_)
        steps = np.arange(1, x.shape[axis] + 1).reshape([-1 if d == axis else 1 for d in
                                                           range(x.ndim)])  # fmt: skip
        got = jax.tree.leaves(main(x))
        expected = jax.tree.leaves(jax.jit(program)(x))
        for one, reference, truth in zip(got, expected, exact, strict=True):
            count = steps if truth is exact[0] else np.flip(steps, axis)
            limit = 4 * count * np.finfo(np.float32).eps / 2 * (np.abs(truth) + 1)
            assert np.asarray(one).dtype == np.float32
            assert np.all(np.abs(np.asarray(one, np.float64) - truth) <= limit)
            assert np.all(np.abs(np.asarray(reference, np.float64) - truth) <= limit)
