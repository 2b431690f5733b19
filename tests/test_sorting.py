"""Programs that sort (and others that IREE computes in an operand's memory) on both paths.

Each program is exported with jax, rewritten, run on the compiled path (``rewriter.compile``)
and on the IREE path (``--abi iree``, ``rewriter.iree.load``), and compared with
``jax.jit`` exactly: sorting moves values, it computes none. tests/test_op_coverage.py
holds the rows of docs/paths.md; this file holds what those rows do not show.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rewriter
from rewriter.compile import compile_module
from rewriter.compile import load as load_compiled
from rewriter.iree import load as load_iree

pytestmark = [pytest.mark.toolchain, pytest.mark.iree, pytest.mark.jax, pytest.mark.slow]


def aligned(array: np.ndarray) -> np.ndarray:
    """A copy of ``array`` at a 64-byte aligned address: the IREE path hands such an array
    to IREE as a buffer view on its own memory, without a copy."""
    raw = np.empty(array.nbytes + 64, np.uint8)
    start = -raw.ctypes.data % 64
    copy = raw[start : start + array.nbytes].view(array.dtype).reshape(array.shape)
    copy[...] = array
    return copy


def compiled(text: str, work: Path) -> Callable[..., object]:
    compile_module(rewriter.rewrite(text).text, work / "libprogram.so")
    return load_compiled(work / "libprogram.so").main


def on_iree(text: str, work: Path) -> Callable[..., object]:
    module = work / "program.iree.mlir"
    module.write_text(rewriter.rewrite(text, abi="iree").text)
    return load_iree(module, imports={}).main


PATHS = {"compile": compiled, "iree": on_iree}


def assert_same(got, expected) -> None:
    """Bit for bit: same dtypes, shapes and bytes (-0.0 is not 0.0, NaNs keep their sign)."""
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(got) == len(expected)
    for one, other in zip(got, expected, strict=True):
        other = np.asarray(other)
        assert one.dtype == other.dtype and one.shape == other.shape
        assert one.tobytes() == other.tobytes(), (one, other)


# Programs whose op IREE computes in the memory of its operand, an argument here.
IN_PLACE = {
    "sort": lambda x: jnp.sort(x),
    "argsort": lambda x: jnp.argsort(x),
    "scatter": lambda x: x.at[jnp.array([1, 5])].add(1.0),
    "dynamic_update_slice": lambda x: jax.lax.dynamic_update_slice(
        x, jnp.ones(4, jnp.float32), (jnp.int32(5),)
    ),
}


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_the_program_only_reads_its_arguments(name: str, path: str, tmp_path: Path):
    """The arguments are the caller's arrays: a sort, a scatter or an update of a slice
    works on a copy, on the compiled path (the entries' arguments are read-only for
    bufferization) and on IREE, which would compute them in the caller's memory when it
    is 64-byte aligned (``rewriter.iree.written_arguments.IN_PLACE_OPS``)."""
    function = IN_PLACE[name]
    x = np.random.default_rng(0).permutation(512).astype(np.float32)  # no ties
    text = rewriter.export(function, x).text
    expected = jax.jit(function)(x)
    run = PATHS[path](text, tmp_path)
    for _ in range(3):
        argument = aligned(x)
        assert_same(run(argument), expected)
        np.testing.assert_array_equal(argument, x)


def special_floats(size: int, seed: int = 0) -> np.ndarray:
    """Ties, both zeros, both infinities, NaNs of both signs and finite values."""
    values = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.5, -1.5, 2.0], np.float32)
    return np.random.default_rng(seed).choice(values, size=size)


def sorted_and_order(x):
    return jnp.sort(x), jnp.argsort(x), jnp.sort(x, descending=True)


def in_loops(text: str) -> str:
    """The export with each sort's comparator ``c`` written ``not (not c)``: the same
    order, in a form that ``rewriter.compile.sorts`` does not read, so the compiled path
    lowers it to loops (the bubble sort, made stable) instead of calling the merge sort."""
    lines = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("stablehlo.return") and ": tensor<i1>" in stripped:
            value = stripped.split()[1]
            indent = line[: len(line) - len(line.lstrip())]
            lines.append(f"{indent}%rw_not_1 = stablehlo.not {value} : tensor<i1>")
            lines.append(f"{indent}%rw_not_2 = stablehlo.not %rw_not_1 : tensor<i1>")
            line = line.replace(f"stablehlo.return {value} ", "stablehlo.return %rw_not_2 ", 1)
        lines.append(line)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("form", ["merge sort", "loops"])
@pytest.mark.parametrize("path", sorted(PATHS))
def test_sorts_give_jaxs_bits(path: str, form: str, tmp_path: Path):
    """Sorted values bit for bit (-0.0 and 0.0 keep their order, as do NaNs of either
    sign: jax's comparator takes them for equal) and the stable order, on both paths; on
    the compiled path both through the merge sort of abi/sort_calls.c and through the loops
    that a comparator it does not read gets (``in_loops``)."""
    x = special_floats(300)
    text = rewriter.export(sorted_and_order, x).text
    if form == "loops":
        text = in_loops(text)
    run = PATHS[path](text, tmp_path)
    assert_same(run(x), jax.jit(sorted_and_order)(x))


def test_the_compiled_path_sorts_with_the_merge_sort_only_what_it_reads(tmp_path: Path):
    """The sorts jax writes call ``rw_sort``; a comparator in another form keeps the loops."""
    x = special_floats(16)
    text = rewriter.rewrite(rewriter.export(sorted_and_order, x).text).text
    for name, module, calls in [("read", text, 2), ("other", in_loops(text), 0)]:
        keep = tmp_path / name
        compile_module(module, tmp_path / f"lib{name}.so", keep_temps=keep)
        bufferized = (keep / "3-library-calls.mlir").read_text()
        assert bufferized.count("call @rw_sort(") == calls


SEVERAL = {
    "lexsort": lambda a, b: jnp.lexsort((a, b)),
    "two_keys_descending": lambda a, b: jax.lax.sort((-a, b, a), num_keys=2),
    "argsort_rows": lambda a, b: jnp.argsort(a.reshape(30, 100) + b.reshape(30, 100), axis=1),
    "argsort_columns": lambda a, b: jnp.argsort(a.reshape(30, 100) - b.reshape(30, 100), axis=0),
    # lines of 300 along a strided dimension: the radix sort's elements carried, or not
    "sort_long_columns": lambda a, b: jnp.sort(a.reshape(300, 10) - b.reshape(300, 10), axis=0),
    "argsort_long_columns": lambda a, b: jnp.argsort(a.reshape(300, 10) * b.reshape(300, 10), 0),
    "lexsort_long_columns": lambda a, b: jnp.lexsort((a.reshape(300, 10), b.reshape(300, 10)), 0),
}


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("name", sorted(SEVERAL))
def test_several_keys_and_lines_of_ties(name: str, path: str, tmp_path: Path):
    rng = np.random.default_rng(1)
    a = rng.integers(0, 5, 3000).astype(np.float32)
    b = rng.integers(0, 3, 3000).astype(np.int32)
    function = SEVERAL[name]
    run = PATHS[path](rewriter.export(function, a, b).text, tmp_path)
    assert_same(run(a, b), jax.jit(function)(a, b))


LARGE = {
    "argsort": (jnp.argsort, 1),
    "lexsort": (lambda a, b: jnp.lexsort((a, b)), 2),
    "sort_descending": (lambda a: jnp.sort(a, descending=True), 1),
}


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("name", sorted(LARGE))
def test_large_sorts_run(name: str, path: str, tmp_path: Path):
    """200,000 entries with ties: IREE's own sort keeps an operand that the program does not
    return on the stack and failed from 5,760 entries on ("exceeded stack allocation
    limit"), and takes n^2 comparisons; the IREE path serves the sorts jax writes with
    imports (``rewriter/iree/sorts.py``), the compiled path with a merge sort."""
    rng = np.random.default_rng(2)
    a = rng.integers(0, 1000, 200_000).astype(np.float32)
    b = rng.integers(0, 7, 200_000).astype(np.int32)
    function, count = LARGE[name]
    arguments = [a, b][:count]
    run = PATHS[path](rewriter.export(function, *arguments).text, tmp_path)
    assert_same(run(*arguments), jax.jit(function)(*arguments))


def test_the_sorts_import_module_name_is_reserved(tmp_path: Path):
    from rewriter.iree import BuildError
    from rewriter.iree import compile_module as compile_vmfb

    text = (
        "module {\n"
        "  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
        "    %0 = stablehlo.custom_call @kernel(%arg0) {api_version = 4 : i32, "
        "backend_config = {}} : (tensor<4xf32>) -> tensor<4xf32>\n"
        "    return %0 : tensor<4xf32>\n"
        "  }\n"
        "}\n"
    )
    module = tmp_path / "program.iree.mlir"
    module.write_text(rewriter.rewrite(text, abi="iree", iree_module="rw_sort").text)
    with pytest.raises(BuildError, match="'rw_sort' is reserved for the sorts"):
        compile_vmfb(module)


@pytest.mark.parametrize("path", sorted(PATHS))
def test_sorts_of_a_dynamic_dimension(path: str, tmp_path: Path):
    """A shape-polymorphic export: the compiled path's merge sort reads the sizes and
    strides from the buffers; IREE sorts them by its ``rw_sort`` imports. Along the
    dynamic dimension too, with ties kept in order, and past the 32 KB of stack that
    IREE's own sort of an argsort's keys would need."""

    def function(x):
        along_rows = jnp.lexsort((x[:, 1], x[:, 0]))
        return jnp.argsort(x), jnp.sort(x, axis=0), jnp.argsort(x, axis=0), along_rows

    rows = jax.export.symbolic_shape("n")[0]
    exported = jax.export.export(jax.jit(function), platforms=["cpu"])(
        jax.ShapeDtypeStruct((rows, 3), jnp.float32)
    )
    run = PATHS[path](exported.mlir_module(), tmp_path)
    for size in (1, 50, 9000):
        x = np.random.default_rng(size).integers(0, 3, (size, 3)).astype(np.float32)
        assert_same(run(x), jax.jit(function)(x))


def test_the_merge_sort_takes_a_name_the_module_leaves_free(tmp_path: Path):
    """A module with a symbol ``@rw_sort`` (here the extern of an FFI target of that name)
    calls the merge sort ``@rw_sort1``, compiled under that name (``-DRW_SORT``)."""

    def function(x):
        computed = jax.ffi.ffi_call("rw_sort", jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
        return jnp.argsort(computed)

    x = np.arange(8, dtype=np.float32)
    text = rewriter.rewrite(rewriter.export(function, x).text).text
    assert "func.func private @rw_sort(" in text
    compile_module(text, tmp_path / "libprogram.so", keep_temps=tmp_path / "temps")
    calls = (tmp_path / "temps" / "3-library-calls.mlir").read_text()
    assert "call @rw_sort1(" in calls
    assert "call @rw_sort(" in calls  # the user's extern, untouched


@pytest.mark.parametrize("path", sorted(PATHS))
def test_one_sort_of_two_shapes(path: str, tmp_path: Path):
    """The same comparator on two shapes: on IREE two imports (``sort_0_0_261`` and
    ``sort_0_0_261_x1``), each sorting by the keys its name gives."""

    def function(x, y):
        return jnp.argsort(x), jnp.argsort(y), jnp.sort(y)

    x, y = special_floats(40, seed=3), special_floats(7, seed=4)
    run = PATHS[path](rewriter.export(function, x, y).text, tmp_path)
    assert_same(run(x, y), jax.jit(function)(x, y))


def top_seven(x):
    return jax.lax.top_k(x, 7)


@pytest.mark.parametrize("path", sorted(PATHS))
def test_top_k_over_several_blocks_of_the_scan(path: str, tmp_path: Path):
    """Rows of 1,500 f32: the heap's scan takes its codes 512 at a time (sort_calls.c,
    ``SCAN_BLOCK``), the last block short; special values, and rising rows whose every
    element goes into the heap."""
    rows = np.stack([special_floats(1500, seed) for seed in range(3)])
    rising = np.stack([np.arange(1500, dtype=np.float32), -np.arange(1500, dtype=np.float32)])
    x = np.concatenate([rows, rising])
    function = PATHS[path](rewriter.export(top_seven, x).text, tmp_path)
    assert_same(function(aligned(x)), tuple(jax.jit(top_seven)(x)))


def test_the_scan_of_f32_keys_is_vectorized(tmp_path: Path):
    """The loops that make a block's f32 codes and test them against the heap's last are
    vector loops (clang's remarks on abi/sort_calls.c): the scan took 1.9 ns an element
    through key_code's branches, 8 ms of lax.top_k over 4M elements."""
    from rewriter.compile.blas import sort_calls_source
    from rewriter.compile.targets import resolve_target
    from rewriter.compile.toolchain import find_tool

    clang = find_tool("clang-22")
    target, triple = resolve_target(clang, None, None)  # what a compile targets: native

    source = sort_calls_source()
    lines = source.read_text(encoding="utf-8").splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("static void block_codes"))
    scan = next(n for n, line in enumerate(lines) if line.startswith("static void heap_of_line"))
    loops = [
        n + 1
        for n, line in enumerate(lines)
        if line.strip().startswith("for (int64_t i = 0; i < m; i++)") and (start < n < scan + 30)
    ]
    made, tested = loops[0], loops[2]  # the f32 codes, then the test of a whole block
    result = subprocess.run(
        [clang, *target.clang_flags(triple), "-O2", "-c", str(source)]
        + ["-o", str(tmp_path / "sort.o"), "-Rpass=loop-vectorize"],
        capture_output=True,
        text=True,
        check=True,
    )
    vectorized = {
        int(found)
        for found in re.findall(r"sort_calls\.c:(\d+):\d+: remark: vectorized", result.stderr)
    }
    assert {made, tested} <= vectorized, result.stderr


@pytest.mark.parametrize("path", sorted(PATHS))
def test_sorts_of_no_entries(path: str, tmp_path: Path):
    """A sort along a dimension of length 0 gives empty results; IREE's sort import raised
    ValueError ("cannot reshape array of size 0") on it."""

    def function(x):
        return jnp.argsort(x.ravel()), jnp.sort(x, axis=0), *jax.lax.top_k(x.T, 0)

    x = np.zeros((0, 3), np.float32)
    run = PATHS[path](rewriter.export(function, x).text, tmp_path)
    assert_same(run(x), jax.jit(function)(x))
