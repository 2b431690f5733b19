"""A strided slice read by a gather or a reverse runs on the IREE path
(rewriter/iree/strided_views.py): IREE fused the slice into the gather's dispatch as a
strided view, and failed to compile the gather from it."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths

import rewriter
from rewriter.iree.strided_views import strided_slices_apart

ROWS = np.array([4, 0, 2], np.int32)


def rows_of_every_other_column(x, rows):
    return x[:, ::2][rows]


def rows_of_a_transposed_strided_slice(x, rows):
    return x[:, ::2].T[rows]


def reversed_transposed_strided_slice(x, rows):
    return x[:, 1:9:3].T[::-1] * rows[0]


def along_axis_of_every_other_column(x, rows):
    """jax's ``take_along_axis`` is a private function the slice is passed to."""
    return jnp.take_along_axis(x[:, ::2], jnp.zeros((6, 3), jnp.int32) + rows, 1)


def rows_of_a_negative_step(x, rows):
    return x[:, ::-2][rows]


PROGRAMS = [
    rows_of_every_other_column,
    rows_of_a_transposed_strided_slice,
    reversed_transposed_strided_slice,
    along_axis_of_every_other_column,
    rows_of_a_negative_step,
]


def test_strided_slices_read_by_index_get_a_barrier_and_no_others():
    x = np.zeros((6, 10), np.float32)
    changed, text = applied(strided_slices_apart, rows_of_every_other_column, x, ROWS)
    assert changed == 1 and text.count("stablehlo.optimization_barrier") == 1
    assert applied(strided_slices_apart, along_axis_of_every_other_column, x, ROWS)[0] == 1

    def not_by_index(y, rows):
        return y[:, 1:4][rows], y[:, ::2] * 2, jnp.exp(y[::3]).T

    assert applied(strided_slices_apart, not_by_index, x, ROWS)[0] == 0


@on_both_paths
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda program: program.__name__)
def test_strided_slices_read_by_index_give_jax_jits_elements(program, path, tmp_path):
    x = np.random.default_rng(0).normal(size=(6, 10)).astype(np.float32)
    text = rewriter.export(program, x, ROWS).text
    expected = np.asarray(jax.jit(program)(x, ROWS))
    copy = x.copy()
    got = main_on(path, text, tmp_path)(x, ROWS)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(x, copy)
