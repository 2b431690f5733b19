"""Long float sums in blocks, then the blocks' sums (rewriter/compile/two_level_sums.py):
down the columns on both paths, along rows and over a whole tensor on the IREE path, of
static shapes and of symbolic sizes (``jax.export.symbolic_shape``); on the compiled path
along rows, over a whole tensor and over several adjacent dimensions, of static shapes
(``expanded_whole_and_trailing``).

The bound a result is held to: summing n terms in blocks of b, then the n / b block sums
(plus the leftover elements, one more term), errs by at most ``gamma_(b + n/b + 1) * S``,
``S`` the sum of the terms' magnitudes, ``gamma_k = k u / (1 - k u)`` (Higham, "Accuracy
and Stability of Numerical Algorithms", 4.2: each term goes through at most that many
additions). A running sum is held to ``gamma_n`` only: IREE's sum of the squares of
1,048,576 normal floats was 467 off, past the blocked bound (273). ``one_large`` is where a
running sum fails most: 1 and then 2^-25 many times, each under half an ulp of 1, so that
a running sum that holds the 1 loses every one of them (262,143 of them: 7.8e-3 off, 30
times the blocked bound), and a block loses only its own.
"""

from __future__ import annotations

from math import prod

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, main_on
from jax import export, lax

import rewriter
from rewriter.compile.two_level_sums import (
    ROW,
    SMALLEST,
    across_rows,
    expanded_whole_and_trailing,
    whole_and_trailing,
)


def squares(axis):
    """The sum of the squares over ``axis``; its terms are ``x * x``."""

    def sum_of_squares(x):
        return (x * x).sum(axis)

    return sum_of_squares


def normal(*shape, dtype=np.float32):
    return np.random.default_rng(0).normal(size=shape).astype(dtype)


def one_large(*shape):
    """1 first along the first dimension, then 2^-25 everywhere else."""
    x = np.full(shape, 2.0**-25, np.float32)
    x[0] = 1.0
    return x


def bound(terms: np.ndarray, axis) -> np.ndarray:
    """``gamma_(b + n/b + 1) * S`` of the module docstring, for the sums of ``terms``."""
    u = np.finfo(terms.dtype).eps / 2
    n = terms.size if axis is None else prod(terms.shape[a] for a in np.atleast_1d(axis))
    k = ROW + n // ROW + 1
    return k * u / (1 - k * u) * np.sum(np.abs(terms.astype(np.float64)), axis=axis)


@pytest.mark.parametrize(
    ("function", "x", "rows", "others", "expanded"),
    [
        (jnp.sum, normal(SMALLEST), 0, 1, 1),  # whole
        (jnp.sum, normal(SMALLEST - 1), 0, 0, 0),  # too short
        (jnp.sum, normal(64, 300), 0, 1, 1),  # every dimension, 19,200 elements
        (lambda x: x.sum(0), normal(SMALLEST, 3), 1, 0, 0),  # down the columns
        (lambda x: x.sum(1), normal(3, SMALLEST), 0, 1, 1),  # along the rows
        (lambda x: x.sum(1), normal(64, 300), 0, 0, 0),  # rows too short
        (lambda x: x.sum((0, 1)), normal(SMALLEST, 2, 3), 0, 0, 1),  # two of three dimensions
        (lambda x: x.sum((0, 2)), normal(SMALLEST, 2, 3), 0, 0, 0),  # two apart
        (jnp.max, normal(SMALLEST), 0, 0, 0),  # not a sum
        (jnp.sum, np.arange(SMALLEST, dtype=np.int32), 0, 0, 0),  # integers: exact in any order
        (lambda x: lax.reduce(x, np.float32(1), lax.add, (0,)), normal(SMALLEST), 0, 0, 0),
    ],
)
def test_which_sums_change(function, x, rows, others, expanded):
    assert applied(across_rows, function, x)[0] == rows
    assert applied(whole_and_trailing, function, x)[0] == others
    assert applied(expanded_whole_and_trailing, function, x)[0] == expanded


def symbolic(spec: str) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(export.symbolic_shape(spec), np.float32)


@pytest.mark.parametrize(
    ("function", "shape", "rows", "others", "expanded"),
    [
        (jnp.sum, "b", 0, 1, 1),  # whole, of a length known at run time
        (jnp.sum, "b, 4", 0, 1, 1),  # every dimension
        (lambda x: x.sum(0), "b, 3", 1, 0, 0),  # down the columns
        (lambda x: x.sum(1), "4, b", 0, 1, 0),  # along the rows: the compiled path's lanes
        (lambda x: x.sum(1), "b, 300", 0, 0, 0),  # rows of a static length, too short
        (lambda x: x.sum(0), "300, b", 0, 0, 0),  # columns too short
        (jnp.max, "b", 0, 0, 0),  # not a sum
    ],
)
def test_which_sums_of_a_symbolic_size_change(function, shape, rows, others, expanded):
    """A symbolic size may be long: its sums are made in blocks, whose number is read at run
    time; the compiled path takes the sums over every dimension (along rows of a symbolic
    length its blocks would not fuse with the operand's elementwise ops)."""
    assert applied(across_rows, function, symbolic(shape))[0] == rows
    assert applied(whole_and_trailing, function, symbolic(shape))[0] == others
    assert applied(expanded_whole_and_trailing, function, symbolic(shape))[0] == expanded


BOTH = ["compile", "iree"]
CASES = {  # name: (function, input, axis summed, paths)
    "whole_squares": (squares(None), normal(1 << 20), None, BOTH),
    "whole_offset": (jnp.sum, normal(1 << 20) + 3, None, BOTH),
    "whole_2d_left_over": (jnp.sum, normal(1000, 37), None, BOTH),  # 9 blocks, 136 over
    "whole_2d_squares": (squares(None), normal(1 << 20, 4), None, BOTH),
    "whole_3d_prime_rows": (squares(None), normal(1009, 9, 7), None, BOTH),  # a tail of rows
    "whole_f64": (squares(None), normal(300_001, dtype=np.float64), None, BOTH),
    "whole_one_large": (jnp.sum, one_large(1 << 18), None, BOTH),
    "whole_2d_one_large": (jnp.sum, one_large(1 << 16, 4), None, BOTH),
    "columns": (squares(0), normal(1 << 18, 4), 0, BOTH),
    "columns_left_over": (squares(0), normal(70_000, 3), 0, BOTH),
    "columns_one_large": (lambda x: x.sum(0), one_large(1 << 18, 4), 0, BOTH),
    "middle": (squares(1), normal(2, 50_000, 2), 1, BOTH),
    "rows": (squares(1), normal(8, 1 << 17), 1, BOTH),
    "rows_one_large": (lambda x: x.sum(1), one_large(1 << 18, 2).T.copy(), 1, BOTH),
    "two_leading": (squares((0, 1)), normal(4096, 64, 4), (0, 1), ["compile"]),
}
RUNS = [(name, path) for name, case in CASES.items() for path in case[3]]


@pytest.mark.toolchain
@pytest.mark.iree
@pytest.mark.slow
@pytest.mark.parametrize(("name", "path"), RUNS)
def test_a_long_sum_is_within_the_blocked_bound(name, path, tmp_path):
    function, x, axis, _ = CASES[name]
    with jax.enable_x64(x.dtype == np.float64):
        text = rewriter.export(function, x).text
        expected = np.asarray(jax.jit(function)(x), np.float64)
    got = main_on(path, text, tmp_path)(x)
    assert_within_bound(function, x, axis, got, expected)


def assert_within_bound(function, x, axis, got, expected) -> None:
    """``got``, and ``jax.jit``'s ``expected``, are each within ``bound`` of the exact sum
    of ``function``'s terms over ``axis``."""
    got = np.asarray(got, np.float64)
    assert got.shape == expected.shape
    terms = x * x if function.__name__ == "sum_of_squares" else x
    exact = np.sum(terms.astype(np.float64), axis=axis)
    limit = bound(terms, axis)
    assert np.all(np.abs(got - exact) <= limit)
    assert np.all(np.abs(expected - exact) <= limit)  # jax.jit's too


CLOSE_CASES = {  # name: (input, axis summed, symbolic shape or None): sums of squares
    "whole_2d": (normal(1 << 20, 4), None, None),
    "whole_square": (normal(2048, 2048), None, None),
    "whole_1d": (normal(1 << 21), None, None),
    "whole_3d_a_tail_of_rows": (normal(1009, 9, 7), None, None),
    "rows": (normal(4, 1 << 20), 1, None),
    "two_trailing": (normal(4, 4096, 256), (1, 2), None),
    "two_leading": (normal(4096, 256, 4), (0, 1), None),
    "whole_1d_symbolic": (normal(1 << 21), None, "b"),
    "whole_2d_symbolic": (normal(1 << 20, 4), None, "b, 4"),
}


@pytest.mark.toolchain
@pytest.mark.slow
@pytest.mark.parametrize("name", CLOSE_CASES)
def test_a_long_sum_of_squares_is_as_close_as_jax_jits(name, tmp_path):
    """Within 8 u S of the exact sum, ``S`` the sum itself (all terms are positive), as
    ``jax.jit``'s is (its errors: 0.2 to 1.6 u S; the compiled path's, blocked: 0.2 to 4.4).
    Without blocks, the compiled path's vector lanes are running sums of a million terms
    and more: 18 to 7,969 u S off (41 and 118 of a symbolic size)."""
    x, axis, shape = CLOSE_CASES[name]
    function = squares(axis)
    exact = np.sum(x.astype(np.float64) ** 2, axis=axis)
    limit = 8 * np.finfo(np.float32).eps / 2 * exact
    text = rewriter.export(function, x if shape is None else symbolic(shape)).text
    got = np.asarray(main_on("compile", text, tmp_path)(x))
    assert np.all(np.abs(got.astype(np.float64) - exact) <= limit)
    expected = np.asarray(jax.jit(function)(x), np.float64)
    assert np.all(np.abs(expected - exact) <= limit)


SYMBOLIC_CASES = {  # name: (function, its symbolic shape, an input, axis summed, paths)
    "whole_one_large": (jnp.sum, "b", one_large(1 << 18), None, BOTH),
    "whole_2d_left_over": (squares(None), "b, 37", normal(1000, 37), None, BOTH),
    "columns": (squares(0), "b, 4", normal(1 << 18, 4), 0, BOTH),
    "columns_left_over": (squares(0), "b, 3", normal(70_000, 3), 0, BOTH),
    "columns_one_large": (lambda x: x.sum(0), "b, 4", one_large(1 << 18, 4), 0, BOTH),
    "middle": (squares(1), "2, b, 2", normal(2, 50_000, 2), 1, BOTH),
    "rows_one_large": (lambda x: x.sum(1), "2, b", one_large(1 << 18, 2).T.copy(), 1, BOTH),
}
SYMBOLIC_RUNS = [(name, path) for name, case in SYMBOLIC_CASES.items() for path in case[4]]


@pytest.mark.toolchain
@pytest.mark.iree
@pytest.mark.slow
@pytest.mark.parametrize(("name", "path"), SYMBOLIC_RUNS)
def test_a_long_sum_of_a_symbolic_size_is_within_the_blocked_bound(name, path, tmp_path):
    """The input above, then a short one (7 along the symbolic size: no whole block, the
    running sum alone)."""
    function, shape, long, axis, _ = SYMBOLIC_CASES[name]
    main = main_on(path, rewriter.export(function, symbolic(shape)).text, tmp_path)
    dimension = shape.split(", ").index("b")
    for x in (long, np.take(long, np.arange(7), axis=dimension)):
        expected = np.asarray(jax.jit(function)(x), np.float64)
        assert_within_bound(function, x, axis, main(x), expected)


@pytest.mark.toolchain
@pytest.mark.iree
@pytest.mark.slow
@pytest.mark.parametrize("name", ["two_trailing", "two_leading"])
def test_a_sum_over_adjacent_dimensions_on_iree_is_summed_in_blocks(name, tmp_path):
    """Within 32 u S of the exact sum on the IREE path, whose vector lanes sum each block of
    about 4,096 one element after another (4.3 and 6.5 u S here); IREE's own sums over the
    two dimensions are 8,013 and 8,121 u S off."""
    x, axis, _ = CLOSE_CASES[name]
    function = squares(axis)
    exact = np.sum(x.astype(np.float64) ** 2, axis=axis)
    got = np.asarray(main_on("iree", rewriter.export(function, x).text, tmp_path)(x))
    assert np.all(
        np.abs(got.astype(np.float64) - exact) <= 32 * np.finfo(np.float32).eps / 2 * exact
    )
