"""Convolutions over spatial dimensions of symbolic size on both paths
(rewriter/compile/dynamic_convolutions.py): IREE lowers none ("failed to legalize operation
'stablehlo.convolution'"); written as a product per kernel position, they give jax.jit's
numbers within the rounding of a sum in another order."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths
from jax import export, lax

from rewriter.compile.dynamic_convolutions import dynamic_convolutions

pytestmark = [pytest.mark.iree, pytest.mark.jax]

KERNEL_1D = np.random.default_rng(0).standard_normal((3, 4, 2))
KERNEL_2D = np.random.default_rng(1).standard_normal((3, 2, 4, 5))


def along_a_sequence(x):
    """1-D convolutions of a sequence of symbolic length: SAME, VALID, explicit padding."""
    kernel = KERNEL_1D.astype(x.dtype)
    numbers = ("NWC", "WIO", "NWC")
    return tuple(
        lax.conv_general_dilated(x, kernel, (1,), padding, dimension_numbers=numbers)
        for padding in ("SAME", "VALID", [(2, 0)])
    )


def over_an_image(x):
    """A 2-D convolution of an image of symbolic height and width."""
    kernel = KERNEL_2D.astype(x.dtype)
    numbers = ("NHWC", "HWIO", "NHWC")
    return lax.conv_general_dilated(x, kernel, (1, 1), "SAME", dimension_numbers=numbers)


# name: (program, its symbolic shape, the shapes of its inputs)
PROGRAMS = {
    "along_a_sequence": (along_a_sequence, "b, t, 4", [(1, 1, 4), (2, 7, 4), (3, 16, 4)]),
    "over_an_image": (over_an_image, "b, h, w, 4", [(1, 2, 3, 4), (2, 5, 4, 4)]),
}


def test_only_a_convolution_of_symbolic_spatial_sizes_changes():
    sequences = jax.ShapeDtypeStruct(export.symbolic_shape("b, t, 4"), np.float32)
    changed, text = applied(dynamic_convolutions, along_a_sequence, sequences)
    assert changed == 3 and "stablehlo.convolution" not in text
    batches = jax.ShapeDtypeStruct(export.symbolic_shape("b, 9, 4"), np.float32)
    assert applied(dynamic_convolutions, along_a_sequence, batches)[0] == 0


@on_both_paths
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", PROGRAMS)
def test_convolutions_of_symbolic_spatial_sizes(name, dtype, path, tmp_path):
    program, shape, sizes = PROGRAMS[name]
    with jax.enable_x64(dtype == np.float64):
        spec = jax.ShapeDtypeStruct(export.symbolic_shape(shape), dtype)
        main = main_on(path, jax.export.export(jax.jit(program))(spec).mlir_module(), tmp_path)
        for size in sizes:
            x = np.random.default_rng(sum(size)).standard_normal(size).astype(dtype)
            got, expected = main(x), jax.jit(program)(x)
            got = got if isinstance(got, tuple) else (got,)
            expected = expected if isinstance(expected, tuple) else (expected,)
            eps = np.finfo(dtype).eps
            for mine, theirs in zip(got, expected, strict=True):
                assert mine.shape == theirs.shape and mine.dtype == theirs.dtype
                # sums of at most 24 products of normal numbers, in another order
                np.testing.assert_allclose(mine, theirs, rtol=0, atol=64 * eps)
