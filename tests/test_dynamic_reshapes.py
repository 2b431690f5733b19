"""Reshapes of a symbolic batch, products of ``(b, tokens, width)`` arrays with a matrix and
products of arrays of a symbolic batch with a vector run on both paths and give
``jax.jit``'s numbers (rewriter/compile/dynamic_reshapes.py): IREE lowers no
``stablehlo.dynamic_reshape``, which jax writes for the first and IREE's pipeline makes of
the second, and makes invalid ``stablehlo.reshape``s of the third."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths
from jax import export

import rewriter
from rewriter.compile.dynamic_reshapes import groups, symbolic_reshapes

TOKENS = jax.ShapeDtypeStruct(export.symbolic_shape("b, 6, 8"), np.float32)
ROWS = jax.ShapeDtypeStruct(export.symbolic_shape("b, 8"), np.float32)
WEIGHTS = jnp.linspace(-1.0, 1.0, 32).reshape(8, 4)
VECTOR = np.linspace(-1.0, 1.0, 8, dtype=np.float32)


@pytest.mark.parametrize(
    ("given", "wanted", "expected"),
    [
        ([None, 6, 8], [None, 8], [[0, 1], [2]]),  # x.reshape(-1, 8)
        ([None, 6, 8], [None, 48], [[0], [1, 2]]),  # x.reshape(b, 48)
        ([None, 6, 2, 4], [None, 6, 8], [[0], [1], [2, 3]]),
        ([2, None, 3], [None, 3], [[0, 1], [2]]),
        ([None, 6, 8], [None, 16, 3], None),  # 8 is not 3, nor 6 x 8 a multiple of 16 x 3
        ([None, 8], [None, 6, 8], None),  # an expansion: groups of the other way round
        ([4, None], [2, None], None),  # 2 takes no whole static dimension
    ],
)
def test_the_groups_of_a_collapse(given, wanted, expected):
    assert groups(given, wanted) == expected


def rows_of_width(x):
    return x.reshape(-1, 8).sum(1)


def one_row_each(x):
    return x.reshape(x.shape[0], 48) * 2


def split_width(x):
    return x.reshape(x.shape[0], 6, 2, 4).sum(2)


def times_weights(x):
    return x @ WEIGHTS


def a_layer(x):
    """A layer norm, a projection, attention over the tokens and one more projection."""
    normed = (x - x.mean(-1, keepdims=True)) / jnp.sqrt(x.var(-1, keepdims=True) + 1e-5)
    keys = normed @ jnp.linspace(-0.5, 0.5, 64).reshape(8, 8)
    scores = jnp.einsum("btd,bsd->bts", keys, normed) / jnp.sqrt(8.0)
    return (jax.nn.softmax(scores, axis=-1) @ normed) @ WEIGHTS


def weight_gradient(x):
    """The gradient of ``sum((x @ w) ** 2)`` by ``w``: a product contracting the batch and
    the tokens, ``einsum("btd,bte->de")``."""
    return jax.grad(lambda w: jnp.sum((x @ w) ** 2))(WEIGHTS)


PROGRAMS = [rows_of_width, one_row_each, split_width, times_weights, a_layer, weight_gradient]


def test_reshapes_and_products_of_a_symbolic_batch_change_and_no_others():
    changed, text = applied(symbolic_reshapes, rows_of_width, TOKENS)
    assert changed == 1 and "stablehlo.dynamic_reshape" not in text
    assert "tensor.collapse_shape" in text
    assert applied(symbolic_reshapes, split_width, TOKENS)[0] == 1  # an expansion
    changed, text = applied(symbolic_reshapes, times_weights, TOKENS)
    assert changed == 1 and "tensor.expand_shape" in text
    assert applied(symbolic_reshapes, times_weights, np.zeros((2, 6, 8), np.float32))[0] == 0
    rows = jax.ShapeDtypeStruct(export.symbolic_shape("b, 8"), np.float32)
    assert applied(symbolic_reshapes, times_weights, rows)[0] == 0  # a matrix already
    changed, text = applied(symbolic_reshapes, weight_gradient, TOKENS)
    assert changed == 2 and text.count("tensor.collapse_shape") == 3  # and x @ w's


@on_both_paths
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda program: program.__name__)
def test_reshapes_and_products_of_a_symbolic_batch_give_jax_jits_numbers(program, path, tmp_path):
    main = main_on(path, rewriter.export(program, TOKENS).text, tmp_path)
    for batch in (1, 3):
        x = np.random.default_rng(batch).normal(size=(batch, 6, 8)).astype(np.float32)
        copy = x.copy()
        # sums of at most 8 terms of size about 1, in another order: a few f32 ulps
        np.testing.assert_allclose(main(x), jax.jit(program)(x), rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(x, copy)


def rows_times_vector(x):
    return x @ VECTOR


def logistic_regression(x):
    return jax.nn.sigmoid(x @ VECTOR + 0.5)


def vector_times_rows(x):
    """``VECTOR @ x.T``: the vector on the left, the rows' width contracted."""
    return VECTOR @ x.T


def rows_weighted_by_their_sums(x):
    """``x.T @ y`` of a vector ``y`` of the batch's length: the symbolic size contracted."""
    return x.T @ x.sum(1)


def integer_rows_times_vector(x):
    return (x * 10).astype(jnp.int32) @ jnp.arange(-4, 4, dtype=jnp.int32)


def tokens_times_vector(x):
    return x @ VECTOR


VECTOR_PROGRAMS = [
    (rows_times_vector, ROWS),
    (logistic_regression, ROWS),
    (vector_times_rows, ROWS),
    (rows_weighted_by_their_sums, ROWS),
    (integer_rows_times_vector, ROWS),
    (tokens_times_vector, TOKENS),
]


def test_products_of_a_symbolic_batch_with_a_vector_change_and_no_others():
    for program, shape in VECTOR_PROGRAMS:
        changed, text = applied(symbolic_reshapes, program, shape)
        assert changed == 1 and ("linalg.matvec" in text or "linalg.vecmat" in text), program
    static = np.zeros((3, 8), np.float32)
    assert applied(symbolic_reshapes, rows_times_vector, static)[0] == 0


@on_both_paths
@pytest.mark.parametrize(
    ("program", "shape"), VECTOR_PROGRAMS, ids=[p.__name__ for p, _ in VECTOR_PROGRAMS]
)
def test_products_of_a_symbolic_batch_with_a_vector_give_jax_jits_numbers(
    program, shape, path, tmp_path
):
    main = main_on(path, rewriter.export(program, shape).text, tmp_path)
    for batch in (1, 3):
        x = np.random.default_rng(batch).normal(size=(batch, *shape.shape[1:]))
        x = x.astype(np.float32)
        # sums of at most 8 terms of size about 1, in another order: a few f32 ulps
        np.testing.assert_allclose(main(x), jax.jit(program)(x), rtol=1e-6, atol=1e-6)


PLANE = jax.ShapeDtypeStruct(export.symbolic_shape("b, n"), np.float32)
PAIRS = jax.ShapeDtypeStruct(export.symbolic_shape("b, 2*n"), np.float32)
CUBE = jax.ShapeDtypeStruct(export.symbolic_shape("b, n, m"), np.float32)


def flattened(x):
    return x.reshape(-1) * 2.0


def sums_of_pairs(x):
    """A split of a dynamic size into two, one of them dynamic: ``(b, 2n)`` to ``(b, n, 2)``."""
    return x.reshape(x.shape[0], -1, 2).sum(-1)


def rows_and_columns_swapped(x):
    """A reshape (not a transpose) of ``(b, n)`` to ``(n, b)``: the same elements in the same
    order, rows of another length."""
    return x.reshape(x.shape[1], x.shape[0]) + 1.0


def twice_the_rows(x):
    """A merge and a split at once: ``(b, 8)`` to ``(2b, 4)``."""
    return x.reshape(x.shape[0] * 2, 4) + 1.0


def rows_of_the_last_width(x):
    return x.reshape(-1, x.shape[2]) + 1.0


# name: (program, its shape, the shape of its input at sizes b and n = b + 1, m = 3)
SEVERAL_DYNAMIC_SIZES = {
    "flattened": (flattened, PLANE, lambda b: (b, b + 1)),
    "sums_of_pairs": (sums_of_pairs, PAIRS, lambda b: (b, 2 * (b + 1))),
    "rows_and_columns_swapped": (rows_and_columns_swapped, PLANE, lambda b: (b, b + 1)),
    "twice_the_rows": (twice_the_rows, ROWS, lambda b: (b, 8)),
    "rows_of_the_last_width": (rows_of_the_last_width, CUBE, lambda b: (b, b + 1, 3)),
}


@on_both_paths
@pytest.mark.parametrize("name", SEVERAL_DYNAMIC_SIZES)
def test_reshapes_of_several_dynamic_sizes_give_jax_jits_elements(name, path, tmp_path):
    """Reshapes that no grouping of one dynamic size explains: a ``tensor.reshape`` to the
    sizes the program computes (a collapse into one dimension for a 1-D result)."""
    program, shape, size = SEVERAL_DYNAMIC_SIZES[name]
    main = main_on(path, rewriter.export(program, shape).text, tmp_path)
    for b in (1, 2, 5):
        x = np.random.default_rng(b).normal(size=size(b)).astype(np.float32)
        got, expected = np.asarray(main(x)), np.asarray(jax.jit(program)(x))
        assert got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)  # elements moved, pairs summed alike


SEQUENCES = jax.ShapeDtypeStruct(export.symbolic_shape("b, t, 8"), np.float32)


@on_both_paths
def test_a_product_of_a_symbolic_batch_and_length_with_a_matrix(path, tmp_path):
    """``x @ w`` of ``(b, t, 8)``: the rows collapsed, and the product reshaped back to two
    dynamic sizes (its expansion crashed mlir-opt-22's ``expand-strided-metadata``)."""
    main = main_on(path, rewriter.export(times_weights, SEQUENCES).text, tmp_path)
    # sums of 8 terms of size about 1, in another order: a few f32 ulps
    assert_close_on_sequences(main, times_weights, atol=1e-6)


def assert_close_on_sequences(main, program, atol: float) -> None:
    """``main`` gives ``jax.jit(program)``'s shapes and numbers within ``atol`` on
    ``(b, t, 8)`` arrays of a few batch sizes and lengths."""
    for batch, length in ((1, 1), (2, 5), (3, 7)):
        x = np.random.default_rng(batch).normal(size=(batch, length, 8)).astype(np.float32)
        got, expected = main(x), jax.jit(program)(x)
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=atol)


def mixed_along_time(x):
    """``einsum("st,bsk->btk")``: a matrix of the sequence's own length times the sequence,
    contracted along its middle dimension (the product of ``jax.image.resize``)."""
    length = x.shape[1]
    mixing = jnp.cumsum(jnp.ones((length, length), x.dtype), axis=0) / length
    return jnp.einsum("st,bsk->btk", mixing, x)


def resized(x):
    return jax.image.resize(x, (x.shape[0], 2 * x.shape[1], 8), "linear")


def tokens_times_features(x):
    """``einsum("bkt,kj->bjt")``: contracted along the middle dimension, the matrix on the
    right."""
    return jnp.einsum("bkt,kj->bjt", x.transpose(0, 2, 1), WEIGHTS)


TURNED = {"mixed_along_time": mixed_along_time, "resized": resized}
TURNED["tokens_times_features"] = tokens_times_features


@on_both_paths
@pytest.mark.parametrize("name", TURNED)
def test_products_contracting_another_dimension_give_jax_jits_numbers(name, path, tmp_path):
    """Products of a ``(b, t, 8)`` array and a matrix (of dynamic sizes too) contracted along
    a dimension not its last, or with the matrix on the left: transposed to the form of
    ``x @ w`` (IREE's pipeline made them a ``dynamic_reshape`` it could not lower)."""
    program = TURNED[name]
    main = main_on(path, rewriter.export(program, SEQUENCES).text, tmp_path)
    # sums of at most 14 terms of size about 1, in another order: a few f32 ulps
    assert_close_on_sequences(main, program, atol=2e-6)
