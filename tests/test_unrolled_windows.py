"""Windows IREE lowers wrong or not at all run on both paths and give ``jax.jit``'s numbers,
bit for bit (rewriter/compile/unrolled_windows.py): over several operands of dynamic shape
(argmax pools of a symbolic batch or length), over one of dynamic shape that is no pool of
NHWC images (moving sums along a symbolic axis), and padded with an initial value that is
not the body's identity (XLA skips the padding; IREE combines it)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths
from jax import export, lax

import rewriter
from rewriter.compile.unrolled_windows import MOST_POSITIONS, unrolled_windows

BATCH = jax.ShapeDtypeStruct(export.symbolic_shape("b, 9, 9, 3"), np.float32)
LENGTH = jax.ShapeDtypeStruct(export.symbolic_shape("n"), np.float32)


def _greatest_first(a, b):
    """The greater value and its index; of equal values the lesser index."""
    (av, ai), (bv, bi) = a, b
    pick = (av > bv) | ((av == bv) & (ai < bi))
    return jnp.where(pick, av, bv), jnp.where(pick, ai, bi)


def _argmax_pool(x, padding):
    """A 3x3 pool of stride 2 of the greatest element and where it is (row * 9 + column)."""
    rows = lax.broadcasted_iota(jnp.int32, x.shape, 1)
    index = rows * 9 + lax.broadcasted_iota(jnp.int32, x.shape, 2)
    return lax.reduce_window(
        (x, index), (-jnp.inf, jnp.int32(0)), _greatest_first, (1, 3, 3, 1), (1, 2, 2, 1), padding
    )


def argmax_pool_valid(x):
    return _argmax_pool(x, "VALID")


def argmax_pool_same(x):
    return _argmax_pool(x, "SAME")


def argmax_1d(x):
    """A pool of 3 of stride 2 along the one (symbolic) axis: ``(n - 3) // 2 + 1`` outputs,
    none for ``n < 3``."""
    index = lax.broadcasted_iota(jnp.int32, x.shape, 0)
    return lax.reduce_window((x, index), (-jnp.inf, 0), _greatest_first, (3,), (2,), "VALID")


def argmax_1d_padded(x):
    """The same, padded by one on each side."""
    index = lax.broadcasted_iota(jnp.int32, x.shape, 0)
    return lax.reduce_window((x, index), (-jnp.inf, 0), _greatest_first, (3,), (2,), [(1, 1)])


def sum_and_more(x):
    """A body that is not commutative and initial values that are not its identity, padded:
    XLA combines the operand's elements only (a window's padding is skipped)."""

    def body(a, b):
        return a[0] + b[0], a[1] - b[1] * 2.0 + a[0] * 0.5

    ones = jnp.ones_like(x)
    return lax.reduce_window((x, ones), (10.0, 3.0), body, (1, 3, 3, 1), (1, 2, 1, 1), "SAME")


def sum_pool_from_ten(x):
    """A 3x3 sum pool, ``SAME``, from 10: ``jax.jit`` adds the elements alone to the 10 (14
    in a corner of ones), IREE the padding's 10s too (64)."""
    return lax.reduce_window(x, 10.0, lax.add, (3, 3), (1, 1), "SAME")


def product_pool_from_two(x):
    """A 2x2 product pool of stride 2 of NHWC images, ``SAME``, from 2 (not the identity:
    ``padded_windows`` leaves it)."""
    return lax.reduce_window(x, 2.0, lax.mul, (1, 2, 2, 1), (1, 2, 2, 1), "SAME")


def int_max_pool_from_zero(x):
    """A max pool of 3 of the integer parts, ``SAME``, from 0: not the least i32."""
    return lax.reduce_window(x.astype(jnp.int32), 0, lax.max, (3,), (2,), "SAME")


def strided_max_pool(x):
    """A max pool of 3 of stride 2, ``SAME``, along the one axis (a
    ``@stablehlo.dynamic_reduce_window`` of a symbolic length)."""
    return lax.reduce_window(x, -jnp.inf, lax.max, (3,), (2,), "SAME")


def strided_sum_pool(x):
    """A sum pool of 4 of stride 3, ``SAME``, along the one axis."""
    return lax.reduce_window(x, 0.0, lax.add, (4,), (3,), "SAME")


def strided_max_over_time(x):
    """A max pool of 3 of stride 2, ``SAME``, along the first axis of ``(t, 3)``."""
    return lax.reduce_window(x, -jnp.inf, lax.max, (3, 1), (2, 1), "SAME")


def moving_sum(x):
    """A moving sum of 3 along the one axis."""
    return lax.reduce_window(x, 0.0, lax.add, (3,), (1,), "VALID")


def moving_sum_over_time(x):
    """A moving sum of 4 along the first axis of ``(t, 3)``."""
    return lax.reduce_window(x, 0.0, lax.add, (4, 1), (1, 1), "VALID")


def max_over_rows(x):
    """A max pool of 3 of stride 2 along the middle axis of ``(b, 9, 3)``, ``SAME``."""
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 1), (1, 2, 1), "SAME")


def _levels(shape, seed=0):
    """Few distinct values (most windows hold equal greatest ones), a -inf and a NaN."""
    x = np.round(np.random.default_rng(seed).normal(size=shape)).astype(np.float32)
    x.flat[0], x.flat[x.size // 2] = -np.inf, np.nan
    return x


def test_windows_of_several_dynamic_operands_change_and_no_others():
    changed, text = applied(unrolled_windows, argmax_pool_same, BATCH)
    assert changed == 1 and "stablehlo.reduce_window" not in text
    assert text.count("stablehlo.real_dynamic_slice") == 27  # 9 positions: 2 operands, mask
    assert "stablehlo.pad" in text and "call @_where" not in text  # jax's where, lifted
    changed, text = applied(unrolled_windows, argmax_pool_valid, BATCH)
    assert changed == 1 and "stablehlo.pad" not in text  # no padding: no mask
    assert applied(unrolled_windows, argmax_1d, LENGTH)[0] == 1
    static = np.zeros((2, 9, 9, 3), np.float32)
    assert applied(unrolled_windows, argmax_pool_valid, static)[0] == 0  # IREE's, unpadded
    assert applied(unrolled_windows, argmax_pool_same, static)[0] == 1  # (-inf, 0) padding

    def max_pool(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")

    assert applied(unrolled_windows, max_pool, BATCH)[0] == 0  # padded_windows'
    assert applied(unrolled_windows, max_pool, static)[0] == 0  # -inf: the identity
    assert applied(unrolled_windows, sum_pool_from_ten, np.zeros((5, 7), np.float32))[0] == 1
    assert applied(unrolled_windows, moving_sum, LENGTH)[0] == 1  # no NHWC pool
    assert applied(unrolled_windows, moving_sum, np.zeros(9, np.float32))[0] == 0
    changed, text = applied(unrolled_windows, strided_max_pool, LENGTH)
    assert changed == 1 and "stablehlo.dynamic_reduce_window" not in text
    assert "tensor.pad" in text  # the padding read at run time

    def long_window(x):
        index = lax.broadcasted_iota(jnp.int32, x.shape, 0)
        width = MOST_POSITIONS + 1
        return lax.reduce_window((x, index), (-jnp.inf, 0), _greatest_first, (width,), (1,), "SAME")

    assert applied(unrolled_windows, long_window, LENGTH)[0] == 0


def _bits(x):
    return x > 0


# (a padded window of one operand of static shape, whether its initial value is not its
# body's identity): only those are taken
PADDED = {
    "sum_from_0": (lambda x: lax.reduce_window(x, 0.0, lax.add, (3,), (1,), "SAME"), False),
    "sum_from_10": (lambda x: lax.reduce_window(x, 10.0, lax.add, (3,), (1,), "SAME"), True),
    "product_from_1": (lambda x: lax.reduce_window(x, 1.0, lax.mul, (3,), (1,), "SAME"), False),
    "cumsum": (jnp.cumsum, False),
    "int_max_from_least": (
        lambda x: lax.reduce_window(
            x.astype(jnp.int32), jnp.iinfo(jnp.int32).min, lax.max, (3,), (1,), "SAME"
        ),
        False,
    ),
    "int_max_from_0": (int_max_pool_from_zero, True),
    "int_and_from_every_bit": (
        lambda x: lax.reduce_window(x.astype(jnp.int32), -1, lax.bitwise_and, (3,), (1,), "SAME"),
        False,
    ),
    "bool_or_from_false": (
        lambda x: lax.reduce_window(_bits(x), False, lax.bitwise_or, (3,), (1,), "SAME"),
        False,
    ),
    "bool_and_from_true": (
        lambda x: lax.reduce_window(_bits(x), True, lax.bitwise_and, (3,), (1,), "SAME"),
        False,
    ),
    "bool_and_from_false": (
        lambda x: lax.reduce_window(_bits(x), False, lax.bitwise_and, (3,), (1,), "SAME"),
        True,
    ),
    "bool_max_from_false": (
        lambda x: lax.reduce_window(_bits(x), False, lax.max, (3,), (1,), "SAME"),
        False,
    ),
}


@pytest.mark.parametrize("case", PADDED)
def test_padded_windows_are_taken_when_their_initial_value_is_not_the_identity(case):
    window, taken = PADDED[case]
    assert applied(unrolled_windows, window, np.zeros(12, np.float32))[0] == int(taken)


@on_both_paths
@pytest.mark.parametrize(
    "pool", [argmax_pool_valid, argmax_pool_same, sum_and_more], ids=lambda f: f.__name__
)
def test_argmax_pools_of_a_symbolic_batch_give_jax_jits_numbers(pool, path, tmp_path):
    main = main_on(path, rewriter.export(pool, BATCH).text, tmp_path)
    for batch in (1, 3):
        x = _levels((batch, 9, 9, 3), seed=batch)
        expected = jax.jit(pool)(x)
        copy = x.copy()
        got = main(x)
        assert len(got) == 2
        for mine, theirs in zip(got, expected, strict=True):
            assert mine.dtype == theirs.dtype
            np.testing.assert_array_equal(mine, np.asarray(theirs))  # the same elements
        np.testing.assert_array_equal(x, copy)


@on_both_paths
@pytest.mark.parametrize("pool", [argmax_1d, argmax_1d_padded], ids=lambda f: f.__name__)
def test_argmax_pools_along_a_symbolic_length_give_jax_jits_numbers(pool, path, tmp_path):
    main = main_on(path, rewriter.export(pool, LENGTH).text, tmp_path)
    for length in (1, 2, 7, 8, 13):
        x = _levels((length,), seed=length)
        expected = jax.jit(pool)(x)
        got = main(x)
        for mine, theirs in zip(got, expected, strict=True):
            assert mine.shape == theirs.shape
            np.testing.assert_array_equal(mine, np.asarray(theirs))


@on_both_paths
@pytest.mark.parametrize("pool", [argmax_pool_valid, argmax_pool_same], ids=lambda f: f.__name__)
def test_argmax_pools_of_static_shape_give_jax_jits_numbers(pool, path, tmp_path):
    x = _levels((2, 9, 9, 3))
    got = main_on(path, rewriter.export(pool, x).text, tmp_path)(x)
    for mine, theirs in zip(got, jax.jit(pool)(x), strict=True):
        np.testing.assert_array_equal(mine, np.asarray(theirs))


# (a window, its input's symbolic shape or None, the shapes it is called with)
ONE_OPERAND = {
    "sum_pool_from_ten": (sum_pool_from_ten, None, [(5, 7)]),
    "sum_pool_from_ten_of_b_rows": (sum_pool_from_ten, "b, 7", [(1, 7), (5, 7)]),
    "product_pool_from_two": (product_pool_from_two, "b, 5, 5, 2", [(1, 5, 5, 2), (3, 5, 5, 2)]),
    "moving_sum": (moving_sum, "n", [(1,), (3,), (10,)]),
    "moving_sum_over_time": (moving_sum_over_time, "t, 3", [(4, 3), (11, 3)]),
    "max_over_rows": (max_over_rows, "b, 9, 3", [(1, 9, 3), (2, 9, 3)]),
    "int_max_pool_from_zero": (int_max_pool_from_zero, None, [(9,)]),
    "strided_max_pool": (strided_max_pool, "n", [(1,), (2,), (7,), (10,)]),
    "strided_sum_pool": (strided_sum_pool, "n", [(1,), (5,), (11,)]),
    "strided_max_over_time": (strided_max_over_time, "t, 3", [(1, 3), (8, 3)]),
}


@on_both_paths
@pytest.mark.parametrize("case", ONE_OPERAND)
def test_windows_of_one_operand_give_jax_jits_numbers(case, path, tmp_path):
    """Each output combines the same elements as ``jax.jit``'s, from the initial value: the
    same bits where XLA's loop takes them in the same order. XLA writes a window as long as
    its stride as a reduce, in an order of its own: a product of 4 factors and the initial
    value rounds 4 times either way, so the two are within 8 units of roundoff."""
    window, symbolic, shapes = ONE_OPERAND[case]
    spec = np.zeros(shapes[0], np.float32) if symbolic is None else jax.ShapeDtypeStruct(
        export.symbolic_shape(symbolic), np.float32
    )  # fmt: skip
    main = main_on(path, rewriter.export(window, spec).text, tmp_path)
    for number, shape in enumerate(shapes):
        x = np.random.default_rng(number).normal(size=shape).astype(np.float32)
        x *= 1 if window is not int_max_pool_from_zero else -3  # mostly under 0
        expected = np.asarray(jax.jit(window)(x))
        got = main(x)
        assert got.shape == expected.shape
        if window is product_pool_from_two:
            np.testing.assert_allclose(got, expected, rtol=8 * 2.0**-24)
        else:
            np.testing.assert_array_equal(got, expected)
