"""Reductions over trailing dimensions made 2-D before iree-compile
(rewriter/iree/flat_reductions.py): which reduces change, and that programs keep jax's
numbers (softmax, sums over two trailing axes, argmax's two-operand reduce)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied

import rewriter
from rewriter.iree import load
from rewriter.iree.flat_reductions import flatten_reductions

pytestmark = [pytest.mark.iree, pytest.mark.jax]


def flattened_text(function, *inputs) -> tuple[int, str]:
    """``function`` exported and rewritten with --abi iree, its reduces flattened: how many,
    and the module's text."""
    return applied(flatten_reductions, function, *inputs)


def test_a_softmax_over_the_last_of_four_dimensions_reduces_a_matrix():
    x = np.zeros((4, 8, 20, 20), np.float32)
    changed, text = flattened_text(lambda s: jax.nn.softmax(s, axis=-1), x)
    assert changed == 2  # its max and its sum
    assert "tensor<640x20xf32>" in text and "dimensions = [1]" in text
    assert "tensor<4x8x20x20xf32>) -> tensor<4x8x20xf32>" not in text


def test_other_reductions_are_left_alone():
    x = np.zeros((4, 8, 20), np.float32)
    for function in (
        lambda a: a.sum(axis=1),  # not trailing
        lambda a: a.sum(axis=(0, 1, 2)),  # nothing kept
        lambda a: a.reshape(32, 20).sum(axis=-1),  # already a matrix
        lambda a: a.sum(axis=(1, 2)),  # one dimension kept
    ):
        changed, _ = flattened_text(function, x)
        assert changed == 0


@pytest.mark.toolchain
@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    ["softmax", "sum_two_axes", "argmax", "mean_of_3d", "f64_logsumexp"],
)
def test_flattened_reductions_keep_jax_numbers(name, tmp_path):
    rng = np.random.default_rng(7)
    f32 = rng.standard_normal((3, 5, 7, 9)).astype(np.float32)
    functions = {
        "softmax": (lambda s: jax.nn.softmax(s, axis=-1), f32),
        "sum_two_axes": (lambda s: s.sum(axis=(2, 3)), f32),
        "argmax": (lambda s: jnp.argmax(s, axis=-1), f32),
        "mean_of_3d": (lambda s: s.mean(axis=-1), f32[0]),
        "f64_logsumexp": (lambda s: jax.nn.logsumexp(s, axis=-1), f32.astype(np.float64)),
    }
    function, x = functions[name]
    with jax.enable_x64(x.dtype == np.float64):
        changed, _ = flattened_text(function, x)
        assert changed >= 1
        path = tmp_path / "program.iree.mlir"
        path.write_text(rewriter.rewrite(rewriter.export(function, x).text, abi="iree").text)
        expected = np.asarray(jax.jit(function)(x))
    got = load(path, imports={}).main(x)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if got.dtype.kind in "iu":
        np.testing.assert_array_equal(got, expected)
    else:
        tolerance = 1e-13 if got.dtype == np.float64 else 2e-6
        np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance)


@pytest.mark.slow
def test_compile_module_flattens_them(tmp_path, monkeypatch):
    from rewriter.iree import compile_module, flat_reductions

    counts: list[int] = []
    original = flat_reductions.flatten_reductions

    def counting(module):
        counts.append(original(module))
        return counts[-1]

    monkeypatch.setattr(flat_reductions, "flatten_reductions", counting)
    x = np.zeros((4, 8, 20, 20), np.float32)
    text = rewriter.export(lambda s: jax.nn.softmax(s, axis=-1), x).text
    path = tmp_path / "softmax.iree.mlir"
    path.write_text(rewriter.rewrite(text, abi="iree").text)
    compile_module(path, cache=False)
    assert counts == [2]
