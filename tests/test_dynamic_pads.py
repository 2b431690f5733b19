"""Pads by amounts of symbolic size, and cuts of arrays of symbolic size, on both paths
(rewriter/compile/dynamic_pads.py): jax writes ``jnp.pad`` and ``lax.pad`` by such amounts
as a ``stablehlo.dynamic_pad``, which IREE does not lower ("failed to legalize operation
'stablehlo.dynamic_pad'"), nor a ``stablehlo.pad`` of a negative amount of such arrays."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths
from jax import export, lax

import rewriter
from rewriter.compile.dynamic_pads import dynamic_pads

pytestmark = [pytest.mark.iree, pytest.mark.jax]

B, T = export.symbolic_shape("b, t")
ROWS = jax.ShapeDtypeStruct((B, T), np.float32)


def doubled(x):
    """Each row padded with as many zeros as it is long."""
    return jnp.pad(x, ((0, 0), (0, x.shape[1])))


def centered(x):
    """Half a row's length before it, one after, of another value than 0."""
    return jnp.pad(x, ((1, 0), (x.shape[1] // 2, 1)), constant_values=2.5)


def cut_and_padded(x):
    """A negative low amount cuts the first element; the high one adds a row's length."""
    return lax.pad(x, np.float32(0), [(0, 0, 0), (-1, x.shape[1], 0)])


def spread(x):
    """Zeros between the elements of each row (interior padding), then a symbolic edge."""
    return lax.pad(x, np.float32(-1), [(0, 0, 0), (x.shape[1], 2, 1)])


def cut(x):
    """Static amounts, one negative, of an array of symbolic length."""
    return lax.pad(x, np.float32(-1), [(0, 0, 0), (-1, 2, 0)])


def spread_and_cut(x):
    """Interior padding along both dimensions, and a negative amount."""
    return lax.pad(x, np.float32(-1), [(1, 0, 1), (-1, 2, 2)])


PROGRAMS = [doubled, centered, cut_and_padded, spread, cut, spread_and_cut]
SHAPES = [(1, 1), (2, 5), (3, 8)]


def test_only_pads_by_symbolic_amounts_change():
    changed, text = applied(dynamic_pads, doubled, ROWS)
    assert changed == 1 and "stablehlo.dynamic_pad" not in text and "tensor.pad" in text
    assert applied(dynamic_pads, doubled, np.zeros((2, 3), np.float32))[0] == 0
    assert applied(dynamic_pads, cut, ROWS)[0] == 1
    assert applied(dynamic_pads, cut, np.zeros((2, 3), np.float32))[0] == 0  # IREE's own


@on_both_paths
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda program: program.__name__)
def test_pads_by_symbolic_amounts_give_jax_jits_elements(program, path, tmp_path):
    main = main_on(path, rewriter.export(program, ROWS).text, tmp_path)
    for shape in SHAPES:
        x = np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)
        copy = x.copy()
        np.testing.assert_array_equal(main(x), jax.jit(program)(x))
        np.testing.assert_array_equal(x, copy)
