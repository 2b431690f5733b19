"""Convolutions over spatial dimensions of symbolic size on both paths
(rewriter/compile/dynamic_convolutions.py), of any strides, dilations and feature groups:
IREE lowers none ("failed to legalize operation 'stablehlo.convolution'"); written as a
product per kernel position, they give jax.jit's numbers within the rounding of a sum in
another order."""

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
KERNEL_GROUPED = np.random.default_rng(2).standard_normal((3, 2, 6))  # 2 groups of 2 -> 3
KERNEL_DEPTHWISE = np.random.default_rng(3).standard_normal((3, 3, 1, 8))  # 4 groups of 1 -> 2


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


def strided_and_dilated(x):
    """1-D convolutions of a sequence with strides 2 and 3, a kernel dilated by 2, both, and
    padding of each kind (the output shorter than the input, or empty, at some lengths)."""
    kernel = KERNEL_1D.astype(x.dtype)
    numbers = ("NWC", "WIO", "NWC")
    cases = [
        ((2,), "SAME", (1,)),
        ((2,), "VALID", (1,)),
        ((3,), [(1, 2)], (1,)),
        ((1,), "VALID", (2,)),
        ((1,), "SAME", (2,)),
        ((2,), [(0, 1)], (3,)),
    ]
    return tuple(
        lax.conv_general_dilated(
            x, kernel, strides, padding, rhs_dilation=dilation, dimension_numbers=numbers
        )
        for strides, padding, dilation in cases
    )


def transposed(x):
    """A transposed convolution of stride 2 (``lhs_dilation``: the operand's elements
    spread apart; jax exports none of SAME padding over a symbolic size)."""
    kernel = KERNEL_1D.astype(x.dtype)
    numbers = ("NWC", "WIO", "NWC")
    return lax.conv_transpose(x, kernel, (2,), "VALID", dimension_numbers=numbers)


def grouped(x):
    """A convolution of two feature groups (``feature_group_count``) of a sequence."""
    kernel = KERNEL_GROUPED.astype(x.dtype)
    numbers = ("NWC", "WIO", "NWC")
    return lax.conv_general_dilated(
        x, kernel, (1,), "SAME", dimension_numbers=numbers, feature_group_count=2
    )


def depthwise_strided_image(x):
    """A depthwise convolution (one group per input feature, two outputs each) of stride 2
    over an image of symbolic height and width, as MobileNet's blocks have."""
    kernel = KERNEL_DEPTHWISE.astype(x.dtype)
    numbers = ("NHWC", "HWIO", "NHWC")
    return lax.conv_general_dilated(
        x, kernel, (2, 2), "SAME", dimension_numbers=numbers, feature_group_count=4
    )


def channels_first(x):
    """A 2-D convolution in PyTorch's layouts (``NCHW`` images, ``OIHW`` kernel) of stride
    2, of an image of symbolic height and width given channels last."""
    kernel = np.transpose(KERNEL_2D, (3, 2, 0, 1)).astype(x.dtype)  # OIHW
    numbers = ("NCHW", "OIHW", "NCHW")
    image = x.transpose(0, 3, 1, 2)
    return lax.conv_general_dilated(image, kernel, (2, 1), "SAME", dimension_numbers=numbers)


def input_gradient(x):
    """The gradient of a SAME convolution with respect to its input: a convolution by the
    reversed kernel in the ``[0, o, i]`` layout."""
    kernel = KERNEL_1D.astype(x.dtype)
    numbers = ("NWC", "WIO", "NWC")

    def loss(y):
        return (
            lax.conv_general_dilated(y, kernel, (1,), "SAME", dimension_numbers=numbers) ** 2
        ).sum()

    return jax.grad(loss)(x)


# name: (program, its symbolic shape, the shapes of its inputs)
PROGRAMS = {
    "along_a_sequence": (along_a_sequence, "b, t, 4", [(1, 1, 4), (2, 7, 4), (3, 16, 4)]),
    "over_an_image": (over_an_image, "b, h, w, 4", [(1, 2, 3, 4), (2, 5, 4, 4)]),
    "strided_and_dilated": (strided_and_dilated, "b, t, 4", [(1, 1, 4), (2, 7, 4), (3, 16, 4)]),
    "transposed": (transposed, "b, t, 4", [(1, 1, 4), (2, 7, 4), (3, 16, 4)]),
    "grouped": (grouped, "b, t, 4", [(1, 1, 4), (2, 7, 4)]),
    "channels_first": (channels_first, "b, h, w, 4", [(1, 2, 3, 4), (2, 5, 4, 4)]),
    "input_gradient": (input_gradient, "b, t, 4", [(1, 1, 4), (2, 7, 4), (3, 16, 4)]),
    "depthwise_strided_image": (
        depthwise_strided_image,
        "b, h, w, 4",
        [(1, 1, 2, 4), (2, 5, 4, 4), (1, 8, 7, 4)],
    ),
}


def test_only_a_convolution_of_symbolic_spatial_sizes_changes():
    sequences = jax.ShapeDtypeStruct(export.symbolic_shape("b, t, 4"), np.float32)
    changed, text = applied(dynamic_convolutions, along_a_sequence, sequences)
    assert changed == 3 and "stablehlo.convolution" not in text
    batches = jax.ShapeDtypeStruct(export.symbolic_shape("b, 9, 4"), np.float32)
    assert applied(dynamic_convolutions, along_a_sequence, batches)[0] == 0
    # jax's strided SAME convolutions over a symbolic length are dynamic_conv ops
    changed, text = applied(dynamic_convolutions, strided_and_dilated, sequences)
    assert changed == 6 and "stablehlo.dynamic_conv" not in text
    assert "stablehlo.dynamic_pad" in text  # dynamic_pads writes them after


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
