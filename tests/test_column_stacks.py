"""Stacks of index columns of a symbolic batch on both paths
(rewriter/compile/column_stacks.py): with x64 on, IREE could not build
``zeros.at[jnp.arange(b)[:, None], i].add(a)`` ("exceeded stack allocation limit"); the
scatters and gathers whose indices jax concatenates from columns equal jax.jit's."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths

from rewriter.compile.column_stacks import column_stacks

pytestmark = [pytest.mark.iree, pytest.mark.jax]


def scatter_add(a, i):
    rows = jnp.arange(a.shape[0])[:, None]
    return jnp.zeros((a.shape[0], 8), a.dtype).at[rows, i].add(a)


def scatter_add_3d(a, i, j):
    rows = jnp.arange(a.shape[0])[:, None]
    return jnp.zeros((a.shape[0], 4, 8), a.dtype).at[rows, j, i].add(a)


def gather(a, i):
    return jnp.cumsum(a, axis=1)[jnp.arange(a.shape[0])[:, None], i % 3]


PROGRAMS = {"scatter-add": scatter_add, "scatter-add of 3 indices": scatter_add_3d}
PROGRAMS["gather"] = gather


def exported(function, x64: bool) -> str:
    (batch,) = jax.export.symbolic_shape("b")
    specs = [jax.ShapeDtypeStruct((batch, 3), jnp.float32)]
    specs += [jax.ShapeDtypeStruct((batch, 3), jnp.int32)] * (function.__code__.co_argcount - 1)
    with jax.enable_x64(x64):
        return jax.export.export(jax.jit(function))(*specs).mlir_module()


def arguments(function, batch: int) -> list[np.ndarray]:
    rng = np.random.default_rng(batch)
    values = [rng.standard_normal((batch, 3)).astype(np.float32)]
    values += [rng.integers(0, 4, (batch, 3)).astype(np.int32)]
    if function is scatter_add_3d:
        values.append(rng.integers(0, 4, (batch, 3)).astype(np.int32))
    return values


def test_a_stack_of_columns_of_dynamic_shape_becomes_selects():
    from iree.compiler import ir

    import rewriter

    text = rewriter.rewrite(exported(scatter_add_3d, x64=True), abi="iree").text
    with ir.Context() as context:
        context.allow_unregistered_dialects = True
        module = ir.Module.parse(text)
        selects = str(module).count("stablehlo.select")
        assert column_stacks(module) == 1
        assert module.operation.verify()
        fixed = str(module)
    assert "x1xi64>, tensor<?x3x1xi64>" not in fixed  # the concatenation is gone
    assert fixed.count("stablehlo.select") == selects + 2  # three columns
    # and a concatenation of static shape stays
    assert applied(column_stacks, lambda x: jnp.stack([x, x], 1), np.zeros(3, np.float32))[0] == 0


@on_both_paths
@pytest.mark.parametrize("x64", [True, False])
@pytest.mark.parametrize("name", PROGRAMS)
def test_stacked_indices_of_a_symbolic_batch(name, x64, path, tmp_path):
    function = PROGRAMS[name]
    main = main_on(path, exported(function, x64), tmp_path)
    for batch in (1, 6):
        values = arguments(function, batch)
        with jax.enable_x64(x64):
            expected = np.asarray(jax.jit(function)(*values))
        np.testing.assert_array_equal(main(*values), expected)
