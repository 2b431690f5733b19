"""Float-to-integer conversions saturate on both paths, as under ``jax.jit``
(rewriter/compile/saturating_converts.py): NaN to 0, values past the integer type's range
to its least or greatest value, the rest truncated toward zero."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from iree_fixes import applied, main_on

import rewriter
from rewriter.compile.saturating_converts import bounds, greatest_integer, saturating_converts

FLOATS = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}
INTEGERS = (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64)


@pytest.mark.parametrize(
    ("float_name", "width", "unsigned", "expected"),
    [
        # 2^31 - 2^(31 - 24): f32's spacing under 2^31 is 2^7
        ("f32", 32, False, (-(2.0**31), 2.0**31 - 128, 2.0**31)),
        ("f32", 32, True, (0.0, 2.0**32 - 256, 2.0**32)),
        ("f64", 64, False, (-(2.0**63), 2.0**63 - 1024, 2.0**63)),
        ("f64", 64, True, (0.0, 2.0**64 - 2048, 2.0**64)),
        ("bf16", 64, False, (-(2.0**63), 2.0**63 - 2.0**55, 2.0**63)),
        ("f16", 8, True, (0.0, 255.875, 256.0)),  # f16's spacing under 256 is 1/8
        ("f16", 16, False, (-32768.0, 32752.0, 32768.0)),
        # 2^31 passes f16's range (65504): every finite f16 is in range
        ("f16", 32, False, (-65504.0, 65504.0, math.inf)),
        ("f16", 16, True, (0.0, 65504.0, math.inf)),
    ],
)
def test_the_bounds_of_a_conversion(float_name, width, unsigned, expected):
    assert bounds(float_name, width, unsigned) == expected


def test_below_is_the_greatest_float_under_top():
    """``below`` is ``top``'s predecessor in the float type, by numpy's ``nextafter``."""
    for name, dtype in FLOATS.items():
        for integer in INTEGERS:
            info = np.iinfo(integer)
            low, below, top = bounds(name, info.bits, info.min == 0)
            if math.isinf(top):
                assert below == float(np.finfo(dtype).max) and low in (0.0, -below)
                continue
            top_as_float = np.array(top, dtype)
            assert float(top_as_float) == top and float(np.array(low, dtype)) == low
            assert float(np.nextafter(top_as_float, np.array(0, dtype))) == below


def test_the_greatest_integer_as_integer_attr_takes_it():
    assert greatest_integer(32, False) == 2**31 - 1
    assert greatest_integer(8, True) == 255
    assert greatest_integer(64, True) == -1  # 2^64 - 1, two's complement in 64 bits


VALUES = [
    math.nan, math.inf, -math.inf, 0.0, -0.0, 0.7, -0.7, 2.5, -2.5, 100.9, -129.5, 200.0,
    300.0, -40000.0, 65504.0, 2.0**31, 2.0**31 - 128, -(2.0**31), -(2.0**31) - 256,
    2.0**32, 2.0**63, -(2.0**63), 2.0**64, 1e30, -1e30, 1e300,
]  # fmt: skip


def saturated(value: float, integer) -> int:
    """The saturating conversion, in Python's integers: the reference."""
    info = np.iinfo(integer)
    if math.isnan(value):
        return 0
    if math.isinf(value):
        return info.max if value > 0 else info.min
    return min(max(math.trunc(value), info.min), info.max)


def every_conversion(x16, xb16, x32, x64):
    return tuple(x.astype(integer) for x in (x16, xb16, x32, x64) for integer in INTEGERS)


def inputs() -> list[np.ndarray]:
    """``VALUES`` in each float type (rounded to it; overflowing to infinity)."""
    with np.errstate(over="ignore"):
        return [np.array(VALUES, np.float64).astype(dtype) for dtype in FLOATS.values()]


def test_the_reference_is_what_jax_jit_gives():
    with jax.enable_x64(True):
        results = jax.jit(every_conversion)(*inputs())
    pairs = [(x, integer) for x in inputs() for integer in INTEGERS]
    for (x, integer), result in zip(pairs, results, strict=True):
        expected = [saturated(float(value), integer) for value in x]
        assert [int(r) for r in np.asarray(result)] == expected, (x.dtype, integer)


def test_each_float_to_integer_convert_changes_and_no_other():
    def converts(x32, i32):
        return x32.astype(jnp.int32), x32.astype(jnp.float16), i32.astype(jnp.float32), x32 > 0

    x, i = np.zeros(4, np.float32), np.zeros(4, np.int32)
    changed, text = applied(saturating_converts, converts, x, i)
    assert changed == 1
    assert "stablehlo.clamp" in text and text.count("stablehlo.convert") == 3
    with jax.enable_x64(True):
        assert applied(saturating_converts, every_conversion, *inputs())[0] == 32


@pytest.mark.toolchain
@pytest.mark.slow
@pytest.mark.parametrize("path", ["compile", "iree"])
def test_every_conversion_saturates_as_under_jax_jit(path, tmp_path):
    """Every float type to every integer type of 8 to 64 bits, on NaN, infinities, signed
    zeros, values that truncate, and each side of each type's bounds."""
    arguments = inputs()
    with jax.enable_x64(True):
        text = rewriter.export(every_conversion, *arguments).text
        expected = jax.jit(every_conversion)(*arguments)
    main = main_on(path, text, tmp_path)
    copies = [argument.copy() for argument in arguments]
    got = main(*arguments)
    for result, wanted in zip(got, expected, strict=True):
        assert result.dtype == wanted.dtype
        np.testing.assert_array_equal(result, np.asarray(wanted))
    for argument, copy in zip(arguments, copies, strict=True):
        np.testing.assert_array_equal(argument, copy)
