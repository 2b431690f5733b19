"""Indexing an array of a symbolic batch size along its other dimensions runs on both paths
and gives ``jax.jit``'s elements (rewriter/compile/dynamic_gathers.py): jax writes each such
index as a ``stablehlo.dynamic_gather``, which IREE does not lower."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths
from jax import export

import rewriter
from rewriter.compile.dynamic_gathers import batched_dynamic_gathers

ROWS = jax.ShapeDtypeStruct(export.symbolic_shape("b, 10"), np.float32)
CUBES = jax.ShapeDtypeStruct(export.symbolic_shape("b, 4, 6"), np.float32)
COLUMN = jax.ShapeDtypeStruct((), np.int32)
# sequences of two symbolic sizes: a batch b of t steps, and their lengths
B, T = export.symbolic_shape("b, t")
STEPS = jax.ShapeDtypeStruct((B, T, 4), np.float32)
LENGTHS = jax.ShapeDtypeStruct((B, T, 1), np.int32)


def one_column(x):
    return x[:, 3]


def a_range(x):
    return x[:, 1:5]


def a_negative_step(x):
    return x[:, ::-2]


def chosen_columns(x):
    return x[:, jnp.array([0, 2, 7])]


def a_column_given(x, column):
    """An index the caller gives: out of range it is clamped, as jax's gather clamps."""
    return x[:, column]


def last_step(x):
    return x[:, -1]


def step_three(x):
    """Past the end of a sequence shorter than 4 steps: clamped, as jax's gather clamps."""
    return x[:, 3]


def length_mask(x, lengths):
    """The steps before each sequence's length, a mask read from ``lengths[:, :1, :1]`` (it
    failed on IREE as a ``real_dynamic_slice``: the module's doc)."""
    return jnp.where(jnp.arange(x.shape[1])[None, :, None] < lengths[:, :1, :1], x, 0.0)


def of_a_cube(x):
    return x[:, 1, ::2] * x[:, 2:, 5].sum(1)[0] - x[:, 3, 1:4]


CASES = {  # name: (program, what it is exported at, its inputs at batch size b)
    "one_column": (one_column, [ROWS], lambda b: [rows(b)]),
    "a_range": (a_range, [ROWS], lambda b: [rows(b)]),
    "a_negative_step": (a_negative_step, [ROWS], lambda b: [rows(b)]),
    "chosen_columns": (chosen_columns, [ROWS], lambda b: [rows(b)]),
    "a_column_in_range": (a_column_given, [ROWS, COLUMN], lambda b: [rows(b), np.int32(4)]),
    "a_column_past_the_end": (
        a_column_given,
        [ROWS, COLUMN],
        lambda b: [rows(b), np.int32(12)],
    ),
    "last_step": (last_step, [STEPS], lambda b: [steps(b)]),
    "step_three": (step_three, [STEPS], lambda b: [steps(b)]),
    "length_mask": (length_mask, [STEPS, LENGTHS], lambda b: [steps(b), lengths(b)]),
    "of_a_cube": (
        of_a_cube,
        [CUBES],
        lambda b: [np.arange(b * 24, dtype=np.float32).reshape(b, 4, 6)],
    ),
}


def rows(batch: int) -> np.ndarray:
    return np.random.default_rng(batch).normal(size=(batch, 10)).astype(np.float32)


def steps(batch: int) -> np.ndarray:
    length = STEP_COUNTS[batch]
    return np.random.default_rng(batch).normal(size=(batch, length, 4)).astype(np.float32)


def lengths(batch: int) -> np.ndarray:
    shape = (batch, STEP_COUNTS[batch], 1)
    return np.random.default_rng(batch + 1).integers(0, 9, shape).astype(np.int32)


STEP_COUNTS = {1: 1, 3: 7}  # the sequences' length t at each batch size b


def test_dynamic_gathers_along_static_dimensions_change_and_no_others():
    changed, text = applied(batched_dynamic_gathers, one_column, ROWS)
    assert changed == 1 and "dynamic_gather" not in text and "operand_batching_dims" in text
    assert applied(batched_dynamic_gathers, of_a_cube, CUBES)[0] == 3  # three indexes
    assert applied(batched_dynamic_gathers, one_column, np.zeros((3, 10), np.float32))[0] == 0
    # along a symbolic dimension, by a slice of a constant size there
    assert applied(batched_dynamic_gathers, last_step, STEPS)[0] == 1
    assert applied(batched_dynamic_gathers, length_mask, STEPS, LENGTHS)[0] == 1


@on_both_paths
@pytest.mark.parametrize("name", list(CASES))
def test_indexing_a_symbolic_batch_gives_jax_jits_elements(name, path, tmp_path):
    program, specs, inputs = CASES[name]
    main = main_on(path, rewriter.export(program, *specs).text, tmp_path)
    for batch in (1, 3):
        arguments = inputs(batch)
        expected = np.asarray(jax.jit(program)(*arguments))
        copies = [np.copy(argument) for argument in arguments]
        np.testing.assert_array_equal(main(*arguments), expected)
        for argument, copy in zip(arguments, copies, strict=True):
            np.testing.assert_array_equal(argument, copy)
