"""Broadcasts of a symbolic batch size (``x + x.sum(1, keepdims=True)``, softmax, layer
norm) run on both paths and give ``jax.jit``'s numbers
(rewriter/compile/dynamic_broadcasts.py): IREE lowers no ``dynamic_broadcast_in_dim`` whose
expansion it does not know. On the IREE path an attention of a symbolic batch also needs
data tiling off (``rewriter.iree.build.layout_flags``): with it, IREE's product ran wrong."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths
from jax import export

import rewriter
from rewriter.compile.dynamic_broadcasts import jax_dynamic_broadcasts

ROWS = jax.ShapeDtypeStruct(export.symbolic_shape("b, 10"), np.float32)
TOKENS = jax.ShapeDtypeStruct(export.symbolic_shape("b, 6, 8"), np.float32)


def with_row_sums(x):
    return x + x.sum(1, keepdims=True)


def layer_norm(x):
    return (x - x.mean(1, keepdims=True)) / jnp.sqrt(x.var(1, keepdims=True) + 1e-5)


def row_sums_spread(x):
    return x.sum(1)[:, None] * jnp.arange(3.0)


def classifier(x):
    """A layer, a layer norm, a softmax over 4 classes, and a layer of its output."""
    weights = jnp.linspace(-1.0, 1.0, 40).reshape(10, 4)
    probabilities = jax.nn.softmax(layer_norm(jnp.tanh(x @ weights) + jnp.arange(4.0)))
    return probabilities @ jnp.linspace(0.0, 3.0, 8).reshape(4, 2), probabilities


def attention(x):
    """A softmax over each batch entry's scores, then a product with a batch dimension of
    the symbolic size: with data tiling, IREE's was 1.1 of the largest element off at a
    batch of 3."""
    return jax.nn.softmax(jnp.einsum("btd,bsd->bts", x, x), axis=-1) @ x


PROGRAMS = {
    "softmax": (jax.nn.softmax, ROWS),
    "with_row_sums": (with_row_sums, ROWS),
    "layer_norm": (layer_norm, ROWS),
    "row_sums_spread": (row_sums_spread, ROWS),
    "classifier": (classifier, ROWS),
    "attention": (attention, TOKENS),
}


def test_broadcasts_of_a_shape_polymorphic_export_change_and_no_others():
    changed, text = applied(jax_dynamic_broadcasts, jax.nn.softmax, ROWS)
    assert changed >= 1 and "dynamic_broadcast_in_dim" not in text
    assert "linalg.generic" in text and "jax.uses_shape_polymorphism = true" in text
    # without jax's word on its broadcasting rules, the expansion is not known
    exported = rewriter.rewrite(rewriter.export(jax.nn.softmax, ROWS).text, abi="iree").text
    assert "jax.uses_shape_polymorphism = true" in exported
    other = exported.replace(
        "jax.uses_shape_polymorphism = true", "jax.uses_shape_polymorphism = false"
    )
    from iree.compiler import ir

    with ir.Context() as context:
        context.allow_unregistered_dialects = True
        assert jax_dynamic_broadcasts(ir.Module.parse(other)) == 0


@on_both_paths
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_broadcasts_of_a_symbolic_batch_give_jax_jits_numbers(name, path, tmp_path):
    program, spec = PROGRAMS[name]
    main = main_on(path, rewriter.export(program, spec).text, tmp_path)
    for batch in (1, 3):
        shape = (batch, *spec.shape[1:])
        x = np.random.default_rng(batch).normal(size=shape).astype(np.float32)
        copy = x.copy()
        # sums of at most 10 terms of size about 1, in another order: a few f32 ulps
        got, expected = main(x), jax.jit(program)(x)
        for result, wanted in zip(jax.tree.leaves(got), jax.tree.leaves(expected), strict=True):
            np.testing.assert_allclose(result, wanted, rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(x, copy)


def test_a_module_of_dynamic_shape_goes_without_data_tiling():
    from rewriter.iree.build import DATA_TILING, layout_flags

    static = rewriter.export(attention, np.zeros((2, 6, 8), np.float32)).text
    dynamic = rewriter.export(attention, TOKENS).text
    assert DATA_TILING in layout_flags(static)
    assert DATA_TILING not in layout_flags(dynamic)
