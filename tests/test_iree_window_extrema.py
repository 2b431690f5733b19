"""Max and min windows of the IREE path as the extremum of shifted slices
(rewriter/iree/window_extrema.py): which reduce_windows change, that compile_module changes
them, and that programs keep jax's numbers bit for bit (NaNs, signed zeros, integers,
strides, padding, window dilation)."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from iree_fixes import applied, counts_in_compile_module

import rewriter
from rewriter.iree import load
from rewriter.iree.window_extrema import window_extrema

pytestmark = [pytest.mark.iree, pytest.mark.jax]

IMAGE = np.zeros((9, 11), np.float32)


def window(op, init, dims, strides=(1, 1), padding="SAME", dilation=None, dtype=np.float32):
    """``lax.reduce_window`` of ``op``; an infinite ``init`` of integers is the type's
    extreme, a finite one its integer part."""
    if np.dtype(dtype).kind == "i":
        info = np.iinfo(dtype)
        init = info.min if init == -np.inf else info.max if init == np.inf else int(init)
    init = np.asarray(init, dtype)

    def function(x):
        return jax.lax.reduce_window(x, init, op, dims, strides, padding, window_dilation=dilation)

    return function


SPECS = {
    "max_3x3_same": (jax.lax.max, -np.inf, (3, 3)),
    "min_2x3_strided": (jax.lax.min, np.inf, (2, 3), (1, 2)),
    "max_3x3_valid_stride_2": (jax.lax.max, -np.inf, (3, 3), (2, 2), "VALID"),
    "max_explicit_padding": (jax.lax.max, -np.inf, (2, 2), (1, 1), ((1, 2), (0, 1))),
    "max_dilated": (jax.lax.max, -np.inf, (2, 2), (1, 1), "VALID", (2, 3)),
    "max_finite_init": (jax.lax.max, 0.25, (3, 3)),
}
PROGRAMS = {name: window(*spec) for name, spec in SPECS.items()}


def rewritten_count(function, *inputs) -> tuple[int, str]:
    return applied(window_extrema, function, *inputs)


def test_max_and_min_windows_become_slices():
    for name, function in PROGRAMS.items():
        changed, text = rewritten_count(function, IMAGE)
        assert changed == 1, name
        assert "stablehlo.reduce_window" not in text
    ints = window(jax.lax.max, -np.inf, (3, 3), dtype=np.int32)
    changed, text = rewritten_count(ints, IMAGE.astype(np.int32))
    assert changed == 1 and text.count("stablehlo.slice") == 9


def test_sums_and_large_windows_stay():
    for function in (
        window(jax.lax.add, 0.0, (2, 2), (2, 2), "VALID"),  # the order of a sum rounds
        window(jax.lax.max, -np.inf, (5, 5)),  # 25 slices
    ):
        changed, text = rewritten_count(function, IMAGE)
        assert changed == 0 and "stablehlo.reduce_window" in text


@pytest.mark.toolchain
def test_compile_module_rewrites_them(tmp_path, monkeypatch):
    from rewriter.iree import window_extrema as module

    program = PROGRAMS["max_3x3_same"]
    counts = counts_in_compile_module(
        monkeypatch, module, "window_extrema", program, IMAGE, folder=tmp_path
    )
    assert counts == [1]


def special(shape, dtype):
    rng = np.random.default_rng(5)
    if np.dtype(dtype).kind == "i":
        return rng.integers(-50, 50, size=shape).astype(dtype)
    values = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.5, -1.5, 2.0], dtype)
    x = rng.normal(size=shape).astype(dtype)
    mask = rng.random(shape) < 0.3
    x[mask] = rng.choice(values, size=int(mask.sum()))
    return x


@pytest.mark.toolchain
@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_window_extrema_keep_jax_bits(name, dtype, tmp_path):
    x = special((13, 17), dtype)
    op, init, dims, *rest = SPECS[name]
    options = dict(zip(("strides", "padding", "dilation"), rest, strict=False))
    function = window(op, init, dims, **options, dtype=dtype)
    changed, _ = rewritten_count(function, x)
    assert changed >= 1
    path = tmp_path / "window.iree.mlir"
    path.write_text(rewriter.rewrite(rewriter.export(function, x).text, abi="iree").text)
    got = load(path, imports={}).main(x)
    expected = np.asarray(jax.jit(function)(x))
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got.view(np.int32), expected.view(np.int32))
