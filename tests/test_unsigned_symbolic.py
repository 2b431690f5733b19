"""Unsigned integers of a symbolic shape on both paths: IREE makes unsigned tensors
signless in its StableHLO ops only, and reads some sizes of the unsigned tensors
themselves, so every export of ``symbolic_shape("b, 9")`` with a uint8 argument failed
("failed to legalize operation 'tensor.dim' ... (tensor<?x9xui8>, index)"): the shape
checks' sizes (``host_scalars``), the other sizes (``unsigned_sizes``), and gathers and
scatters (``unsigned_moves``) now read or move the bits."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import main_on, on_both_paths

pytestmark = [pytest.mark.iree, pytest.mark.jax]


def pixels(a):
    """Elementwise ops, conversions, reductions and a cumulative sum of uint8."""
    return (
        a + 1,
        a.astype(jnp.float32) * 0.5,
        a // 7,
        jnp.maximum(a, 100),
        a.max(1),
        a.sum(1, dtype=jnp.uint32),
        jnp.cumsum(a, 1, dtype=jnp.uint8),
        jax.lax.reduce_window(a, np.uint8(0), jax.lax.max, (1, 3), (1, 3), "VALID"),
    )


def moves(a, i):
    """Gathers and scatters of uint16: along the batch and across it."""
    rows = jnp.arange(a.shape[0])[:, None]
    return (
        a[::-1],
        jnp.take_along_axis(a, i % 9, axis=1),
        a.at[:, 4].set(7),
        jnp.zeros((a.shape[0], 5), a.dtype).at[rows, i % 5].add(a[:, :4]),
        jnp.zeros((a.shape[0], 5), a.dtype).at[rows, i % 5].max(a[:, :4]),
    )


PROGRAMS = {"pixels": (pixels, [np.uint8]), "moves": (moves, [np.uint16, np.int32])}
COLUMNS = {pixels: [9], moves: [9, 4]}


@on_both_paths
@pytest.mark.parametrize("name", PROGRAMS)
def test_unsigned_programs_of_a_symbolic_batch(name, path, tmp_path):
    function, dtypes = PROGRAMS[name]
    (batch,) = jax.export.symbolic_shape("b")
    specs = [
        jax.ShapeDtypeStruct((batch, columns), dtype)
        for columns, dtype in zip(COLUMNS[function], dtypes, strict=True)
    ]
    main = main_on(path, jax.export.export(jax.jit(function))(*specs).mlir_module(), tmp_path)
    for rows in (1, 5):
        rng = np.random.default_rng(rows)
        arguments = [
            rng.integers(0, np.iinfo(dtype).max, (rows, columns), endpoint=True).astype(dtype)
            for columns, dtype in zip(COLUMNS[function], dtypes, strict=True)
        ]
        expected = jax.jit(function)(*arguments)
        for mine, theirs in zip(main(*arguments), expected, strict=True):
            theirs = np.asarray(theirs)
            assert mine.dtype == theirs.dtype
            np.testing.assert_array_equal(mine, theirs)
