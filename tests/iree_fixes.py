"""One fix of the IREE path applied to a jax function's export, as the fixes' tests look at
it (test_iree_flat_reductions.py, test_iree_unrolled_loops.py, test_iree_window_extrema.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import rewriter


def on_both_paths(test: Callable[..., Any]) -> Callable[..., Any]:
    """A test of a program built with the native tools (the slow tier), run once per path:
    its ``path`` argument is "compile", then "iree" (``main_on``)."""
    for mark in (
        pytest.mark.parametrize("path", ["compile", "iree"]),
        pytest.mark.slow,
        pytest.mark.toolchain,
    ):
        test = mark(test)
    return test


def applied(fix: Callable[[Any], int], function, *inputs) -> tuple[int, str]:
    """``function`` exported at ``inputs`` and rewritten with --abi iree, then ``fix`` (a
    rewrite of an ``iree.compiler.ir`` module that returns how many ops it changed): how
    many, and the module's text, which must verify."""
    from iree.compiler import ir

    text = rewriter.rewrite(rewriter.export(function, *inputs).text, abi="iree").text
    with ir.Context() as context:
        context.allow_unregistered_dialects = True
        module = ir.Module.parse(text)
        changed = fix(module)
        assert module.operation.verify()
        return changed, str(module)


def counts_in_compile_module(monkeypatch, module, fix: str, function, *inputs, folder) -> list[int]:
    """What the fix ``fix`` of ``module`` (a module of rewriter.iree) changed, each time it
    ran, while ``rewriter.iree.compile_module`` compiled ``function`` exported at ``inputs``
    (uncached, from a file in ``folder``)."""
    from rewriter.iree import compile_module

    counts: list[int] = []
    original = getattr(module, fix)
    monkeypatch.setattr(module, fix, lambda m: counts.append(original(m)) or 0)
    path = folder / "fixed.iree.mlir"
    path.write_text(rewriter.rewrite(rewriter.export(function, *inputs).text, abi="iree").text)
    compile_module(path, cache=False)
    return counts


def run_with_fix(fix: Callable[[Any], int], function, x, path) -> tuple[Any, Any]:
    """``function`` of ``x`` on the IREE path (its module at ``path``), which ``fix``
    changes once, and under ``jax.jit``: (IREE's result, jax.jit's), x64 on for 64-bit
    inputs."""
    import jax
    import numpy as np

    from rewriter.iree import load

    with jax.enable_x64(np.asarray(x).dtype.itemsize == 8):
        text = rewriter.export(function, x).text
        expected = np.asarray(jax.jit(function)(x))
        assert applied(fix, function, x)[0] == 1
    path.write_text(rewriter.rewrite(text, abi="iree").text)
    got = load(path, imports={}).main(x)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    return got, expected


def main_on(path: str, text: str, folder) -> Callable[..., Any]:
    """The ``main`` of the exported module ``text`` rewritten and built on ``path``
    ("compile": ``compile_module`` and ``load``; "iree": ``rewriter.iree.load``), in
    ``folder``: how the tests of the input fixes run a program on both paths."""
    from rewriter.compile import compile_module, load
    from rewriter.iree import load as load_iree

    if path == "compile":
        compile_module(rewriter.rewrite(text).text, folder / "lib.so")
        return load(folder / "lib.so").main
    module = folder / "program.iree.mlir"
    module.write_text(rewriter.rewrite(text, abi="iree").text)
    return load_iree(module, imports={}).main


def assert_jax_jits_bits(path: str, function, folder, *inputs, x64: bool = False) -> None:
    """``function`` exported at ``inputs`` and run on ``path`` (``main_on``) gives each of
    ``jax.jit``'s results byte for byte: -0.0 and denormals included."""
    import jax
    import numpy as np

    with jax.enable_x64(x64):
        text = rewriter.export(function, *inputs).text
        expected = [np.asarray(r) for r in jax.tree.leaves(jax.jit(function)(*inputs))]
    got = main_on(path, text, folder)(*inputs)
    got = got if isinstance(got, (tuple, list)) else [got]
    for mine, theirs in zip(got, expected, strict=True):
        assert np.asarray(mine).tobytes() == theirs.tobytes(), (mine, theirs)


def assert_symbolic_batch_bits(path: str, function, folder, *batches) -> None:
    """``function`` exported once for ``symbolic_shape("b, ...")`` (the trailing sizes and
    dtype of the first batch) and run on ``path`` at each of ``batches`` (arrays of one
    argument) gives ``jax.jit``'s results byte for byte."""
    import jax
    import numpy as np

    (b,) = jax.export.symbolic_shape("b")
    first = batches[0]
    spec = jax.ShapeDtypeStruct((b, *first.shape[1:]), first.dtype)
    main = main_on(path, jax.export.export(jax.jit(function))(spec).mlir_module(), folder)
    for rows in batches:
        expected = [np.asarray(r) for r in jax.tree.leaves(jax.jit(function)(rows))]
        for mine, theirs in zip(main(rows), expected, strict=True):
            assert np.asarray(mine).tobytes() == theirs.tobytes(), (mine, theirs)
