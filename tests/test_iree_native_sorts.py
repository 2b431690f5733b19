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
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from c_programs import built, run_program
from test_sorting import assert_same

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


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_sorts_run_in_dispatches_with_jaxs_bits(name: str, tmp_path: Path):
    path, inputs, expected = rewritten(name, tmp_path)
    _, signatures = compile_module(path, native_sorts=True, cache=False)
    assert not [s for s in signatures if s.module == SORT_MODULE]  # no import left
    before = plugin.resolved_count()
    module = load(path, imports={})
    assert plugin.resolved_count() > before  # the sort's executable import
    assert_same(module.main(*inputs), expected)
    assert_same(module.main(*inputs), expected)  # again: the copies are the call's own


@pytest.mark.parametrize("name", ["lexsort of an unsigned and an f64 key", "top_k of f64 lines"])
def test_a_vmfb_without_native_sorts_serves_them_in_python(name: str, tmp_path: Path):
    path, inputs, expected = rewritten(name, tmp_path)
    vmfb = tmp_path / "imports.vmfb"
    _, signatures = compile_module(path, vmfb)
    assert [s.module for s in signatures] == [SORT_MODULE]
    assert_same(load(vmfb, imports={}).main(*inputs), expected)


def test_without_a_compiler_the_sorts_stay_imports(tmp_path: Path, monkeypatch):
    path, inputs, expected = rewritten("argsort f32", tmp_path)
    vmfb = tmp_path / "native.vmfb"
    compile_module(path, vmfb, native_sorts=True)
    monkeypatch.setattr(iree_runtime.sort_library, "functions", lambda: {})
    before = plugin.resolved_count()
    assert_same(load(path, imports={}).main(*inputs), expected)
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
    assert_same(load(path, imports={}).main(x, y), tuple(jax.jit(two)(x, y)))


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
    assert_same(load(path, imports={}).main(x), (jax.jit(jnp.sort)(x),))


# A C host calling abi/iree_sorts.c's function as IREE's dispatch code does: two operands
# of 2 x 5 (f32 keys read at an offset of one element, i32 positions), sorted along the
# last dimension whole and for their first 2 entries, and a description beyond its limits.
SORT_HOST = r"""
#include <stdint.h>
#include <stdio.h>
int rw_iree_sort(void *params, void *context, void *reserved);

static float keys_storage[11] = {99.0f, 3, 1, 2, 1, 0, -1, 5, 5, -2, 4};
static int32_t positions[10] = {0, 1, 2, 3, 4, 0, 1, 2, 3, 4};

static int run(int64_t wanted, float *keys_out, int32_t *positions_out) {
    int64_t params[] = {
        2, 2, 1, 1, wanted,               /* operands, rank, dimension, keys, wanted */
        0, 5,                             /* key: operand 0, f32 ascending */
        2, 5,                             /* sizes */
        4, 4,                             /* element bytes */
        (int64_t)(intptr_t)keys_storage, 1, (int64_t)(intptr_t)positions, 0,
        (int64_t)(intptr_t)keys_out, 0, (int64_t)(intptr_t)positions_out, 0,
    };
    return rw_iree_sort(params, NULL, NULL);
}

int main(void) {
    float keys[10];
    int32_t order[10];
    int status = run(0, keys, order);
    for (int i = 0; i < 10; i++) printf("%g ", keys[i]);
    for (int i = 0; i < 10; i++) printf("%d ", order[i]);
    status |= run(2, keys, order) << 1;
    for (int i = 0; i < 4; i++) printf("%g ", keys[i]);
    for (int i = 0; i < 4; i++) printf("%d ", order[i]);
    int64_t too_many[] = {17, 1, 0, 1, 0};
    printf("%d %d\n", status, rw_iree_sort(too_many, NULL, NULL));
    return 0;
}
"""


@pytest.mark.toolchain("gcc", "valgrind")
def test_the_sort_function_reads_its_description_and_leaks_nothing(tmp_path: Path):
    """``rw_iree_sort`` alone, under valgrind: stable order (ties keep their positions),
    the whole lines or their first two entries, an input binding's offset, and a status 1
    for 17 operands; every copy freed."""
    from rewriter.abi import bridge_dir

    abi = Path(bridge_dir())
    sources = [abi / "iree_sorts.c", abi / "sort_calls.c"]
    flags = ("-std=c11", "-O1", "-DRW_SORT=rw_iree_sort_table")
    program = built(tmp_path, "host", SORT_HOST, sources, flags, libraries=())
    run = run_program(program, valgrind=True)
    expected = "0 1 1 2 3 -2 -1 4 5 5 4 1 3 2 0 3 0 4 1 2 0 1 -2 -1 4 1 3 0 0 1\n"
    assert (run.returncode, run.stdout) == (0, expected), run.stderr


def test_the_command_line_compiles_sorts_into_dispatches(tmp_path: Path):
    path, inputs, expected = rewritten("lexsort of an unsigned and an f64 key", tmp_path)
    vmfb = tmp_path / "program.vmfb"
    command = [sys.executable, "-m", "rewriter.iree", str(path), "-o", str(vmfb)]
    subprocess.run([*command, "--native-sorts"], check=True, capture_output=True, timeout=300)
    before = plugin.resolved_count()
    module = load(vmfb, imports={})
    assert plugin.resolved_count() > before
    assert_same(module.main(*inputs), expected)
