"""Products with booleans converted to numbers on both paths
(rewriter/compile/bool_converts.py): IREE folded the conversion into the product, whose
loops on the compiled path read true as -1 (``x @ jnp.eye(6)`` was ``-x``) and which IREE
itself could not build ("failed to legalize unresolved target materialization ...
element_types = [f32, i1, f32]")."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths

import rewriter
from rewriter.compile.bool_converts import bool_converts

pytestmark = [pytest.mark.iree, pytest.mark.jax]


def products(x, mask):
    """Products by a boolean mask and by ``eye``, in f32 and f64, through int8 too."""
    return (
        x @ mask.astype(jnp.float32),
        x @ jnp.eye(6, dtype=jnp.float32),
        x.astype(jnp.float64) @ mask.astype(jnp.float64),
        x @ mask.astype(jnp.int8).astype(jnp.float32),
        mask.astype(jnp.int32) * 3,
        mask.astype(jnp.uint8),
        mask.astype(jnp.float16),
        mask.astype(ml_dtypes.bfloat16),
    )


def inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(9)
    return rng.standard_normal((5, 6)).astype(np.float32), rng.random((6, 3)) > 0.5


def test_each_conversion_of_booleans_becomes_a_select():
    x, mask = inputs()
    changed, text = applied(
        bool_converts, lambda m: (m.astype(jnp.float32), m, m.astype(jnp.int8)), mask
    )
    assert changed == 2  # the booleans returned as they are stay
    assert text.count("stablehlo.select") == 2
    assert "(tensor<6x3xi1>) -> tensor<6x3xf32>" not in text


@on_both_paths
def test_products_with_booleans_are_jax_jits(path, tmp_path):
    x, mask = inputs()
    with jax.enable_x64(True):
        text = rewriter.export(products, x, mask).text
        expected = [np.asarray(r) for r in jax.jit(products)(x, mask)]
    got = main_on(path, text, tmp_path)(x, mask)
    for mine, theirs in zip(got, expected, strict=True):
        assert mine.dtype == theirs.dtype
        np.testing.assert_allclose(mine, theirs, rtol=1e-6)  # sums of products by 0 and 1


@on_both_paths
def test_a_product_with_eye_of_a_symbolic_size(path, tmp_path):
    def by_eye(x):
        return x @ jnp.eye(x.shape[1], dtype=x.dtype)

    spec = jax.ShapeDtypeStruct(jax.export.symbolic_shape("b, n"), np.float32)
    main = main_on(path, jax.export.export(jax.jit(by_eye))(spec).mlir_module(), tmp_path)
    for shape in ((1, 1), (3, 5)):
        x = np.random.default_rng(shape[1]).standard_normal(shape).astype(np.float32)
        np.testing.assert_array_equal(main(x), x)
