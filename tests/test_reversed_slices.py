"""The reverse of a strided slice (``x[:, ::-2]``) runs on both paths and gives
``jax.jit``'s elements (rewriter/compile/reversed_slices.py): IREE fails to compile the
two fused in one dispatch."""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths
from jax import lax

import rewriter
from rewriter.compile.reversed_slices import reversed_bounds, slices_of_reverses


def test_the_bounds_keep_the_same_elements_last_to_first():
    """Every slice of every dimension up to 9 elements, against numpy's."""
    for size in range(1, 10):
        line = np.arange(size)
        for start, stride in itertools.product(range(size), range(1, size + 1)):
            for limit in range(start + 1, size + 1):
                kept = line[start:limit:stride]
                new_start, new_limit = reversed_bounds(size, start, len(kept), stride)
                assert 0 <= new_start < new_limit <= size
                np.testing.assert_array_equal(line[::-1][new_start:new_limit:stride], kept[::-1])


def negative_step(x):
    return x[:, ::-2]


def three_dimensions(x):
    return x.reshape(2, 3, 10)[:, ::-1, 1::-3]


def unsigned(x):
    return (x * 100).astype(jnp.uint32)[::-1, 1::3]


def gradient_of_a_padded_reverse(x):
    """jax's gradient of a pad (negative edges, interior) of a reverse: a strided slice,
    then a reverse."""
    return jax.grad(lambda y: jnp.sum(lax.pad(y[::-1], 0.0, ((-1, 2, 0), (1, -2, 1))) ** 2))(x)


PROGRAMS = [negative_step, three_dimensions, unsigned, gradient_of_a_padded_reverse]


def test_reverses_of_strided_slices_change_and_no_others():
    x = np.zeros((6, 10), np.float32)
    changed, text = applied(slices_of_reverses, negative_step, x)
    assert changed == 1 and "stablehlo.reverse %arg0" in text
    assert applied(slices_of_reverses, three_dimensions, x)[0] == 1

    def unit_steps(y):
        return y[1:5][::-1], jnp.exp(y[:, ::2])[::-1]

    assert applied(slices_of_reverses, unit_steps, x)[0] == 0


@on_both_paths
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda program: program.__name__)
def test_reverses_of_strided_slices_give_jax_jits_elements(program, path, tmp_path):
    x = np.random.default_rng(0).normal(size=(6, 10)).astype(np.float32)
    text = rewriter.export(program, x).text
    expected = np.asarray(jax.jit(program)(x))
    copy = x.copy()
    got = main_on(path, text, tmp_path)(x)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(x, copy)
