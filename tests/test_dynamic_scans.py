"""Cumulative sums, products, maxima and minima along a static axis of a symbolic batch run
on both paths and give ``jax.jit``'s bits (rewriter/compile/dynamic_scans.py): IREE
compiles none of the windows jax writes for them when their shape is dynamic."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths
from jax import export, lax

import rewriter
from rewriter.compile.dynamic_scans import dynamic_scans

ROWS = jax.ShapeDtypeStruct(export.symbolic_shape("b, 10"), np.float32)
TOKENS = jax.ShapeDtypeStruct(export.symbolic_shape("b, 6, 8"), np.float32)


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


PROGRAMS = [
    (cumsum_along_rows, ROWS),
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
    for program, shape in PROGRAMS:
        changed, text = applied(dynamic_scans, program, shape)
        assert changed == text.count("iree_linalg_ext.scan") >= 1, program
    static = np.zeros((3, 10), np.float32)
    assert applied(dynamic_scans, cumsum_along_rows, static)[0] == 0
    images = jax.ShapeDtypeStruct(export.symbolic_shape("b, 8, 8, 3"), np.float32)

    def pool(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    assert applied(dynamic_scans, pool, images)[0] == 0


@on_both_paths
@pytest.mark.parametrize(("program", "shape"), PROGRAMS, ids=[p.__name__ for p, _ in PROGRAMS])
def test_cumulative_ops_of_a_symbolic_batch_give_jax_jits_bits(program, shape, path, tmp_path):
    main = main_on(path, rewriter.export(program, shape).text, tmp_path)
    for batch in (1, 3):
        x = small_integers(batch, shape)
        if program is integer_cumsum:
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
