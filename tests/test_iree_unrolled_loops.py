"""Counted while loops unrolled before iree-compile (rewriter/iree/unrolled_loops.py): which
loops are unrolled, that the compiled module then has no loop, and that programs keep
jax's numbers bit for bit."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from iree_fixes import applied

import rewriter
from rewriter.iree import load
from rewriter.iree.unrolled_loops import MAX_TRIPS, unroll_counted_loops

pytestmark = [pytest.mark.iree, pytest.mark.jax]

X = np.linspace(-3, 3, 24, dtype=np.float32).reshape(4, 6)
LOOPS = {
    # the counter read by the body, and ys stacked by it (dynamic_update_slice)
    "fori_with_counter": lambda y: jax.lax.fori_loop(0, 3, lambda i, z: z * 1.5 + i, y),
    "scan_stacking": lambda y: jax.lax.scan(lambda c, _: (c * 2.0 - 1.0, c.max()), y, None, 4),
    "nested": lambda y: jax.lax.fori_loop(
        1, 3, lambda i, z: jax.lax.fori_loop(0, 2, lambda j, w: w * 0.5 - j, z) + i, y
    ),
    "seven_trips": lambda y: jax.lax.fori_loop(0, 7, lambda i, z: z * 0.75 - 1.0, y),
}


def unrolled(function, *inputs) -> tuple[int, str]:
    """``function`` exported and rewritten with --abi iree, its counted loops unrolled: how
    many, and the module's text."""
    return applied(unroll_counted_loops, function, *inputs)


def test_a_loop_of_three_doublings_becomes_three_multiplies():
    changed, text = unrolled(lambda y: jax.lax.fori_loop(0, 3, lambda i, z: z * 2.0, y), X)
    assert changed == 1
    assert "stablehlo.while" not in text
    assert text.count("call @closed_call") == 3


def test_nested_loops_are_unrolled_inside_out():
    changed, text = unrolled(LOOPS["nested"], X)
    assert changed == 2 and "stablehlo.while" not in text


def test_other_loops_stay():
    long = lambda y: jax.lax.fori_loop(0, MAX_TRIPS + 1, lambda i, z: z * 2.0, y)  # noqa: E731
    unknown = lambda y, n: jax.lax.fori_loop(0, n, lambda i, z: z * 2.0, y)  # noqa: E731
    data = lambda y: jax.lax.while_loop(lambda z: z.sum() < 100.0, lambda z: z * 2.0, y)  # noqa: E731
    for function, inputs in ((long, (X,)), (unknown, (X, np.int32(3))), (data, (X,))):
        changed, text = unrolled(function, *inputs)
        assert changed == 0 and "stablehlo.while" in text


@pytest.mark.toolchain
@pytest.mark.slow
def test_compile_module_leaves_no_loop_for_iree(tmp_path):
    """What iree-compile makes of a counted loop: one dispatch, no scf.for whose carried
    tensor IREE copies on each iteration."""
    from rewriter.iree import compile_module

    function = lambda y: jax.lax.fori_loop(0, 3, lambda i, z: z * 2.0, y)  # noqa: E731
    path = tmp_path / "loop.iree.mlir"
    path.write_text(rewriter.rewrite(rewriter.export(function, X).text, abi="iree").text)
    flow, _ = compile_module(path, cache=False, extra_args=("--compile-to=flow",))
    text = flow.decode()
    assert "scf.for" not in text and "scf.while" not in text and "cf.cond_br" not in text
    assert text.count("flow.dispatch @") == 1


@pytest.mark.toolchain
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(LOOPS))
def test_unrolled_loops_keep_jax_numbers(name, tmp_path):
    function = LOOPS[name]
    changed, _ = unrolled(function, X)
    assert changed >= 1
    path = tmp_path / "program.iree.mlir"
    path.write_text(rewriter.rewrite(rewriter.export(function, X).text, abi="iree").text)
    expected = jax.tree.leaves(jax.jit(function)(X))
    got = load(path, imports={}).main(X)
    got = list(got) if isinstance(got, tuple) else [got]
    assert len(got) == len(expected)
    for mine, theirs in zip(got, expected, strict=True):
        theirs = np.asarray(theirs)
        assert mine.dtype == theirs.dtype and mine.shape == theirs.shape
        np.testing.assert_array_equal(mine, theirs)
