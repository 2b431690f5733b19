"""``jnp.pad`` of its array modes over an array of symbolic size runs on both paths
(rewriter/compile/empty_pieces.py): jax concatenates pieces of size 0 where a pad is 0,
which IREE put on the stack inside a loop ("'memref.alloca' op all stack allocations need
to be hoisted to the entry block of the function")."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths
from jax import export

import rewriter
from rewriter.compile.empty_pieces import empty_pieces

pytestmark = [pytest.mark.iree, pytest.mark.jax]

B, T = export.symbolic_shape("b, t")
SEQUENCES = jax.ShapeDtypeStruct((B, T, 4), np.float32)
SHAPES = [(1, 1, 4), (2, 5, 4), (3, 8, 4)]


def edge(x):
    return jnp.pad(x, ((0, 0), (1, 3), (0, 0)), mode="edge")


def edge_of_two_dimensions(x):
    return jnp.pad(x, ((0, 0), (2, 0), (1, 1)), mode="edge")


def maximum(x):
    return jnp.pad(x, ((0, 0), (1, 2), (0, 0)), mode="maximum")


def linear_ramp(x):
    return jnp.pad(x, ((0, 0), (2, 1), (0, 0)), mode="linear_ramp")


PROGRAMS = [edge, edge_of_two_dimensions, maximum, linear_ramp]


def test_only_empty_pieces_are_dropped():
    changed, text = applied(empty_pieces, edge, SEQUENCES)
    concatenations = [line for line in text.splitlines() if "stablehlo.concatenate" in line]
    assert changed == 2  # along the first and last dimensions: pads of 0 there
    assert not any("<0x" in line or "x0x" in line for line in concatenations)
    whole = jax.ShapeDtypeStruct((B, T, 4), np.float32)
    assert applied(empty_pieces, lambda x: jnp.concatenate([x, x], axis=1), whole)[0] == 0


@on_both_paths
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda program: program.__name__)
def test_pads_of_array_modes_give_jax_jits_elements(program, path, tmp_path):
    main = main_on(path, rewriter.export(program, SEQUENCES).text, tmp_path)
    for shape in SHAPES:
        x = np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)
        np.testing.assert_array_equal(main(x), jax.jit(program)(x))
