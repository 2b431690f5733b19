"""``lax.top_k`` of f32 on the IREE path as compiled code (rewriter/iree/chunked_top_k.py):
which sorts become it, that the compiled module then imports no sort, and that it gives
jax's values and indices bit for bit (ties, -0 and 0, infinities, NaNs of both signs,
several lines, lines padded to whole chunks)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import rewriter
from rewriter.iree import compile_module, load
from rewriter.iree.chunked_top_k import MAX_COMPARISONS, chunked_top_k, comparisons

pytestmark = [pytest.mark.iree, pytest.mark.jax]

SPECIAL = np.array(
    [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.5, -1.5, 2.0, 2.0], dtype=np.float32
)


def inputs(kind: str, shape: tuple[int, ...]) -> np.ndarray:
    rng = np.random.default_rng(11)
    if kind == "normal":
        return rng.normal(size=shape).astype(np.float32)
    if kind == "ties":
        return rng.integers(-2, 3, size=shape).astype(np.float32)
    values = rng.choice(SPECIAL, size=shape)
    values.reshape(-1)[-1] = np.uint32(0xFFFFFFFF).view(np.float32)  # the least key
    return values


def rewritten(function, x) -> str:
    return rewriter.rewrite(rewriter.export(function, x).text, abi="iree").text


def changed_count(text: str) -> int:
    from iree.compiler import ir

    from rewriter.compile.composites import call_decompositions

    with ir.Context() as context:
        context.allow_unregistered_dialects = True
        module = ir.Module.parse(text)
        call_decompositions(module)
        changed = chunked_top_k(module)
        assert module.operation.verify()
        return changed


def test_top_k_of_f32_is_rewritten_and_other_sorts_stay():
    x = np.zeros((3, 1000), np.float32)
    assert changed_count(rewritten(lambda y: jax.lax.top_k(y, 16), x)) == 1
    assert changed_count(rewritten(lambda y: jax.lax.top_k(y, 16), x.astype(np.int32))) == 0
    assert changed_count(rewritten(lambda y: jax.numpy.argsort(y), x)) == 0
    assert changed_count(rewritten(lambda y: jax.lax.top_k(y.T, 2), x)) == 1  # lines of 3


def test_a_top_k_of_too_many_comparisons_stays_an_import():
    assert comparisons(1_000_000, 1000) > MAX_COMPARISONS
    x = np.zeros(1_000_000, np.float32)
    assert changed_count(rewritten(lambda y: jax.lax.top_k(y, 1000), x)) == 0


@pytest.mark.toolchain
def test_compile_module_imports_no_sort_for_it(tmp_path):
    path = tmp_path / "top_k.iree.mlir"
    path.write_text(rewritten(lambda y: jax.lax.top_k(y, 16), np.zeros(4096, np.float32)))
    _, signatures = compile_module(path, cache=False)
    assert signatures == []


@pytest.mark.toolchain
@pytest.mark.slow
@pytest.mark.parametrize("kind", ["normal", "ties", "special"])
@pytest.mark.parametrize(
    ("shape", "k"),
    [((1000,), 16), ((4096,), 16), ((3, 999), 5), ((2, 2, 777), 40), ((5, 40), 35), ((17,), 16)],
)
def test_chunked_top_k_gives_jax_bits(kind, shape, k, tmp_path):
    x = inputs(kind, shape)
    function = lambda y: jax.lax.top_k(y, k)  # noqa: E731
    text = rewritten(function, x)
    assert changed_count(text) == 1
    path = tmp_path / "top_k.iree.mlir"
    path.write_text(text)
    values, indices = load(path, imports={}).main(x)
    expected_values, expected_indices = (np.asarray(a) for a in jax.jit(function)(x))
    assert values.dtype == np.float32 and indices.dtype == np.int32
    np.testing.assert_array_equal(values.view(np.uint32), expected_values.view(np.uint32))
    np.testing.assert_array_equal(indices, expected_indices)


@pytest.mark.toolchain
def test_its_topks_are_iree_topks_in_one_submission(tmp_path):
    """Each chlo.top_k stays IREE's topk (not its bubble sort), and nothing splits the call
    into several submissions that the host waits for in turn."""
    path = tmp_path / "top_k.iree.mlir"
    path.write_text(rewritten(lambda y: jax.lax.top_k(y, 16), np.zeros(1000, np.float32)))
    stream, _ = compile_module(path, cache=False, extra_args=("--compile-to=stream",))
    text = stream.decode()
    assert "iree_linalg_ext.sort" not in text
    assert text.count("iree_linalg_ext.topk") == 3
    assert text.count("stream.cmd.execute on(") == 1  # its constants' initializer aside
