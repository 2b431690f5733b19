"""Updates of slices of arrays of a symbolic batch (an RNN's ``lax.scan`` over time steps,
a scan over the batch itself, ``lax.dynamic_update_slice`` with starts out of range) run on
both paths and give ``jax.jit``'s numbers (rewriter/compile/dynamic_update_slices.py):
IREE lowers no ``dynamic_update_slice`` of dynamic shape."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths
from jax import export, lax

import rewriter
from rewriter.compile.dynamic_update_slices import dynamic_update_slices

STEPS = jax.ShapeDtypeStruct(export.symbolic_shape("b, 6, 16"), np.float32)
ROWS = jax.ShapeDtypeStruct(export.symbolic_shape("b, 10"), np.float32)
RECURRENT = jnp.linspace(-0.2, 0.2, 256, dtype=jnp.float32).reshape(16, 16)


def recurrent_network(x):
    """tanh(h W + x_t) over the 6 steps: the last state and every step's."""

    def step(state, inputs):
        state = jnp.tanh(state @ RECURRENT + inputs)
        return state, state

    last, states = lax.scan(step, jnp.zeros((x.shape[0], 16)), jnp.swapaxes(x, 0, 1))
    return last, jnp.swapaxes(states, 0, 1)


def scan_over_the_batch(x):
    """A running sum and product over the rows, whose number is the symbolic size."""
    return lax.scan(lambda total, row: (total + row, total * row), jnp.zeros(10), x)[1]


def updates_with_starts_out_of_range(x):
    """Starts past the end (the batch size + 2, column 8 for 3 columns) and before it:
    clamped into the array, as StableHLO defines them."""
    patch = jnp.full((1, 3), 7.0)
    past = lax.dynamic_update_slice(x, patch, (x.shape[0] + 2, 8))
    return lax.dynamic_update_slice(past, patch * 2, (-1, -5))


PROGRAMS = [
    (recurrent_network, STEPS),
    (scan_over_the_batch, ROWS),
    (updates_with_starts_out_of_range, ROWS),
]


def test_only_updates_of_dynamic_shape_change():
    changed, text = applied(dynamic_update_slices, updates_with_starts_out_of_range, ROWS)
    assert changed == 2 and text.count("tensor.insert_slice") == 2
    static = np.zeros((3, 10), np.float32)
    assert applied(dynamic_update_slices, updates_with_starts_out_of_range, static)[0] == 0


@on_both_paths
@pytest.mark.parametrize(("program", "shape"), PROGRAMS, ids=[p.__name__ for p, _ in PROGRAMS])
def test_updates_of_a_symbolic_batch_give_jax_jits_numbers(program, shape, path, tmp_path):
    main = main_on(path, rewriter.export(program, shape).text, tmp_path)
    for batch in (1, 3):
        x = np.random.default_rng(batch).normal(size=(batch, *shape.shape[1:]))
        x = x.astype(np.float32)
        got, expected = main(x), jax.jit(program)(x)
        for one, reference in zip(jax.tree.leaves(got), jax.tree.leaves(expected), strict=True):
            assert np.shape(one) == np.shape(reference)
            # the same operations in the same order, but for the products in the RNN's
            # steps (16 terms each, of a BLAS or IREE's loops): a few f32 ulps
            np.testing.assert_allclose(one, reference, rtol=1e-6, atol=1e-6)
