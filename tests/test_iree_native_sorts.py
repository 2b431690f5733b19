"""The sorts of the IREE path as dispatches calling the merge sort of ``abi/sort_calls.c``
(rewriter/iree/sort_dispatches.py, abi/iree_sorts.c, rewriter/iree/sort_library.py).

``load`` of a ``.mlir`` compiles each sort it can into a dispatch whose executable import
the plugin resolves to ``abi/iree_sorts.c``: no ``rw_sort`` import is left, and the results
are jax's bit for bit (sorts of several keys and operands, along any dimension, unsigned
keys, top_k's first K of each line). What a dispatch cannot take, and a ``.vmfb`` compiled
without ``native_sorts``, stay imports served in Python, with the same numbers; a ``.vmfb``
with native sorts is refused where the sort cannot be offered.
"""

from __future__ import annotations

import re
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rewriter
from rewriter.iree import LoadError, compile_module, load, plugin
from rewriter.iree import runtime as iree_runtime
from rewriter.iree.sort_dispatches import IMPORT_PREFIX, why_not
from rewriter.iree.sorts import SORT_MODULE

pytestmark = [pytest.mark.toolchain, pytest.mark.iree, pytest.mark.jax, pytest.mark.slow]

RNG = np.random.default_rng(7)

# name: (function, inputs): sorts jax writes, each in a form the dispatch takes.
PROGRAMS = {
    "argsort f32": (jnp.argsort, [RNG.standard_normal(1000).astype(np.float32)]),
    "sort along the first axis": (
        lambda x: jnp.sort(x, axis=0),
        [RNG.integers(-3, 3, size=(37, 5)).astype(np.int32)],
    ),
    "argsort along the middle axis": (
        lambda x: jnp.argsort(x, axis=1),
        [RNG.integers(0, 4, size=(3, 50, 4)).astype(np.int16)],
    ),
    "lexsort of an unsigned and an f64 key": (
        lambda a, b: jnp.lexsort((b, a)),
        [RNG.integers(0, 10, size=300).astype(np.uint32), RNG.standard_normal(300)],
    ),
    "descending, NaNs and signed zeros": (
        lambda x: jnp.sort(x, descending=True),
        [np.array([1.0, np.nan, -0.0, 0.0, -np.inf, 3.0, -np.nan] * 20, np.float64)],
    ),
    "top_k of f64 lines": (lambda x: jax.lax.top_k(x, 7), [RNG.standard_normal((3, 500))]),
    "top_k of u8 with ties": (
        lambda x: jax.lax.top_k(x, 40),
        [RNG.integers(0, 6, size=(2, 300)).astype(np.uint8)],
    ),
}


def rewritten(name: str, folder: Path) -> tuple[Path, list[np.ndarray], tuple]:
    """The program ``name`` exported, rewritten with --abi iree; its inputs and jax's results."""
    function, inputs = PROGRAMS[name]
    with jax.enable_x64(True):
        text = rewriter.export(function, *inputs).text
        expected = jax.jit(function)(*inputs)
    path = folder / "program.iree.mlir"
    path.write_text(rewriter.rewrite(text, abi="iree").text)
    return path, inputs, tuple(expected) if isinstance(expected, (list, tuple)) else (expected,)


def assert_bits(got, expected: tuple) -> None:
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(expected)
    for one, other in zip(got, expected, strict=True):
        other = np.asarray(other)
        assert one.dtype == other.dtype and one.shape == other.shape
        assert one.tobytes() == other.tobytes(), (one, other)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_sorts_run_in_dispatches_with_jaxs_bits(name: str, tmp_path: Path):
    path, inputs, expected = rewritten(name, tmp_path)
    _, signatures = compile_module(path, native_sorts=True, cache=False)
    assert not [s for s in signatures if s.module == SORT_MODULE]  # no import left
    before = plugin.resolved_count()
    module = load(path, imports={})
    assert plugin.resolved_count() > before  # the sort's executable import
    assert_bits(module.main(*inputs), expected)
    assert_bits(module.main(*inputs), expected)  # again: the copies are the call's own


@pytest.mark.parametrize("name", ["lexsort of an unsigned and an f64 key", "top_k of f64 lines"])
def test_a_vmfb_without_native_sorts_serves_them_in_python(name: str, tmp_path: Path):
    path, inputs, expected = rewritten(name, tmp_path)
    vmfb = tmp_path / "imports.vmfb"
    _, signatures = compile_module(path, vmfb)
    assert [s.module for s in signatures] == [SORT_MODULE]
    assert_bits(load(vmfb, imports={}).main(*inputs), expected)


def test_without_a_compiler_the_sorts_stay_imports(tmp_path: Path, monkeypatch):
    path, inputs, expected = rewritten("argsort f32", tmp_path)
    vmfb = tmp_path / "native.vmfb"
    compile_module(path, vmfb, native_sorts=True)
    monkeypatch.setattr(iree_runtime.sort_library, "functions", lambda: {})
    before = plugin.resolved_count()
    assert_bits(load(path, imports={}).main(*inputs), expected)
    assert plugin.resolved_count() == before
    with pytest.raises(LoadError, match="its sorts are compiled as dispatches that call"):
        load(vmfb, imports={})


def test_each_sort_has_an_import_of_its_own(tmp_path: Path):
    """IREE links a module's executables together: two sorts of other shapes need two
    import names (one name of two signatures does not link)."""

    def two(x, y):
        return jnp.argsort(x), jnp.sort(y)

    x = RNG.standard_normal(64).astype(np.float32)
    y = RNG.standard_normal((4, 9)).astype(np.float32)
    text = rewriter.export(two, x, y).text
    path = tmp_path / "program.iree.mlir"
    path.write_text(rewriter.rewrite(text, abi="iree").text)
    dump = tmp_path / "dump"
    compile_module(
        path,
        native_sorts=True,
        cache=False,
        extra_args=(f"--iree-hal-dump-executable-sources-to={dump}",),
    )
    sources = "".join(p.read_text() for p in sorted(dump.glob("*.mlir")))
    assert len(set(re.findall(rf"call @({IMPORT_PREFIX}\w+)\(", sources))) == 2
    assert_bits(load(path, imports={}).main(x, y), tuple(jax.jit(two)(x, y)))


def test_what_a_dispatch_cannot_take_stays_an_import():
    assert why_not(["tensor<8xf32>", "tensor<8xi32>"]) is None
    assert why_not(["tensor<8xui64>"]) is None
    assert "i1" in (why_not(["tensor<8xi1>"]) or "")
    assert "complex" in (why_not(["tensor<8xcomplex<f32>>"]) or "")
    assert "static" in (why_not(["tensor<?xf32>"]) or "")
    assert "no elements" in (why_not(["tensor<0xf32>"]) or "")
    assert "17 operands" in (why_not(["tensor<8xf32>"] * 17) or "")


def test_a_sort_of_booleans_runs_as_an_import(tmp_path: Path):
    x = RNG.integers(0, 2, size=50).astype(bool)
    text = rewriter.export(jnp.sort, x).text
    path = tmp_path / "program.iree.mlir"
    path.write_text(rewriter.rewrite(text, abi="iree").text)
    _, signatures = compile_module(path, native_sorts=True, cache=False)
    assert [s.module for s in signatures] == [SORT_MODULE]
    assert_bits(load(path, imports={}).main(x), (jax.jit(jnp.sort)(x),))
