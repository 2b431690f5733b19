"""Matrix products of the IREE path in a BLAS's gemm, inside dispatches
(rewriter/iree/blas_products.py, abi/iree_blas_products.c, rewriter/iree/blas_gemm.py).

``layout_of`` is checked first on its own: numpy's strided views follow the layout it gives
(batch strides, row blocks, transposes and leading dimensions, as the C side reads them)
and must give ``dot_general``'s numbers for many dimension numbers. Then modules run:
``load`` of a ``.mlir`` routes every f32 and f64 product it can to the BLAS, the plugin
resolving the gemm import, with jax's numbers to rounding; without a BLAS, with a driver made before
the plugin could be named, and when cross-compiling, IREE's own code stays.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rewriter
from rewriter.iree import blas_gemm, blas_products, compile_module, load, plugin
from rewriter.iree import runtime as iree_runtime
from rewriter.iree.blas_products import (
    IMPORT_PREFIX,
    ROUTED_ELEMENTS,
    DotDimensions,
    Layout,
    RunTimeBatch,
    RunTimeRows,
    batch_at_run_time,
    layout_of,
    rows_at_run_time,
)

# (lhs shape, rhs shape, dimension numbers): what gemm takes as the tensors lie.
FITTING = [
    ((5, 7), (7, 3), DotDimensions((), (), (1,), (0,))),  # a @ b
    ((7, 5), (7, 3), DotDimensions((), (), (0,), (0,))),  # a.T @ b
    ((5, 7), (3, 7), DotDimensions((), (), (1,), (1,))),  # a @ b.T
    ((7, 5), (3, 7), DotDimensions((), (), (0,), (1,))),  # a.T @ b.T
    ((2, 5, 7), (2, 7, 3), DotDimensions((0,), (0,), (2,), (1,))),  # batched
    ((4, 5, 7), (7, 3), DotDimensions((), (), (2,), (0,))),  # x @ w with x 3-d
    ((2, 5, 3, 4), (2, 6, 3, 4), DotDimensions((0, 2), (0, 2), (3,), (3,))),  # scores
    ((2, 6, 3, 4), (2, 3, 5, 6), DotDimensions((0, 2), (0, 1), (1,), (3,))),  # mix
    ((2, 3, 4), (3, 4, 5), DotDimensions((), (), (1, 2), (0, 1))),  # two contracting
    ((1, 5, 7), (1, 7, 3), DotDimensions((0,), (0,), (2,), (1,))),  # a batch of one
    ((2, 3, 5, 7), (2, 3, 7, 4), DotDimensions((0, 1), (0, 1), (3,), (2,))),  # merged
    ((1, 7), (7, 1), DotDimensions((), (), (1,), (0,))),  # a dot product
    ((7,), (7, 3), DotDimensions((), (), (0,), (0,))),  # a vector times a matrix
    ((300, 400), (400, 200), DotDimensions((), (), (1,), (0,))),  # split in row blocks
    ((200, 400), (400, 300), DotDimensions((), (), (1,), (0,))),  # in column blocks
    ((400, 200), (300, 400), DotDimensions((), (), (0,), (1,))),  # the same, both transposed
]
# Neither the rows nor the columns of the lhs are contiguous: IREE keeps it.
NOT_FITTING = [
    ((7, 5, 2), (2, 7, 3), DotDimensions((2,), (0,), (0,), (1,))),
    ((3, 7, 2), (7, 3), DotDimensions((), (), (1,), (0,))),  # free dims 0 and 2 apart
]


def dot_general(lhs: np.ndarray, rhs: np.ndarray, dims: DotDimensions) -> np.ndarray:
    """StableHLO's dot_general, by transposes and one matmul."""
    free_l = [d for d in range(lhs.ndim) if d not in (*dims.lhs_batch, *dims.lhs_contracting)]
    free_r = [d for d in range(rhs.ndim) if d not in (*dims.rhs_batch, *dims.rhs_contracting)]
    a = lhs.transpose(*dims.lhs_batch, *free_l, *dims.lhs_contracting)
    b = rhs.transpose(*dims.rhs_batch, *dims.rhs_contracting, *free_r)
    batch = a.shape[: len(dims.lhs_batch)]
    m = [lhs.shape[d] for d in free_l]
    n = [rhs.shape[d] for d in free_r]
    k = int(np.prod([lhs.shape[d] for d in dims.lhs_contracting]))
    product = a.reshape(*batch, -1, k) @ b.reshape(*batch, k, -1)
    return product.reshape(*batch, *m, *n)


def gemm_as_c_does(layout: Layout, lhs: np.ndarray, rhs: np.ndarray, shape) -> np.ndarray:
    """Every task of abi/iree_blas_products.c, on numpy views of the flat storage."""
    a, b = lhs.ravel(), rhs.ravel()
    c = np.full(int(np.prod(shape)), np.nan)
    row_blocks, col_blocks = -(-layout.m // layout.rows), -(-layout.n // layout.cols)
    for task in range(layout.tasks):
        item, within = divmod(task, row_blocks * col_blocks)
        first_row, first_col = (
            (within // col_blocks) * layout.rows,
            (within % col_blocks) * layout.cols,
        )
        offsets = [0, 0, 0]
        for d in reversed(range(len(layout.batch))):
            item, index = divmod(item, layout.batch[d])
            strides = (layout.a_batch[d], layout.b_batch[d], layout.c_batch[d])
            offsets = [o + index * s for o, s in zip(offsets, strides, strict=True)]
        rows = min(layout.rows, layout.m - first_row)
        cols = min(layout.cols, layout.n - first_col)
        a_at = offsets[0] + first_row * (1 if layout.trans_a else layout.lda)
        b_at = offsets[1] + first_col * (layout.ldb if layout.trans_b else 1)
        c_at = offsets[2] + first_row * layout.ldc + first_col
        op_a = view(a, a_at, rows, layout.k, layout.trans_a, layout.lda)
        op_b = view(b, b_at, layout.k, cols, layout.trans_b, layout.ldb)
        block = view(c, c_at, rows, cols, 0, layout.ldc)
        block[...] = op_a @ op_b
    return c.reshape(shape)


def view(flat: np.ndarray, offset: int, rows: int, cols: int, transposed: int, ld: int):
    """The rows x cols matrix op(X) that row-major gemm reads at ``offset``."""
    size = flat.itemsize
    strides = (size, ld * size) if transposed else (ld * size, size)
    return np.lib.stride_tricks.as_strided(flat[offset:], (rows, cols), strides)


@pytest.mark.parametrize("lhs_shape, rhs_shape, dims", FITTING)
def test_the_layout_gives_dot_general(lhs_shape, rhs_shape, dims):
    rng = np.random.default_rng(len(lhs_shape) * 10 + len(rhs_shape))
    lhs, rhs = rng.standard_normal(lhs_shape), rng.standard_normal(rhs_shape)
    layout = layout_of(lhs_shape, rhs_shape, dims)
    assert layout is not None
    expected = dot_general(lhs, rhs, dims)
    got = gemm_as_c_does(layout, lhs, rhs, expected.shape)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.fixture
def four_cpus(monkeypatch):
    """Products cut as on a machine of four CPUs or more (``most_blocks``: 4)."""
    monkeypatch.setattr(blas_products, "default_threads", lambda: 4)


def test_products_are_split_only_when_single_and_large(four_cpus):
    single = layout_of((300, 400), (400, 200), FITTING[0][2])
    assert single is not None and single.tasks == 4
    assert (single.rows, single.cols) == (75, 200)
    batched = layout_of((2, 300, 400), (2, 400, 200), DotDimensions((0,), (0,), (2,), (1,)))
    assert batched is not None and batched.tasks == 2
    assert (batched.rows, batched.cols) == (300, 200)
    small = layout_of((5, 7), (7, 3), FITTING[0][2])
    assert small is not None and small.tasks == 1


def test_a_split_packs_the_smaller_operand_again(four_cpus):
    """A block of rows repacks all of B, one of columns all of A: a wide product is cut in
    columns."""
    wide = layout_of((200, 400), (400, 300), FITTING[0][2])
    assert wide is not None and wide.tasks == 4
    assert (wide.rows, wide.cols) == (200, 75)


@pytest.mark.parametrize(("cpus", "blocks"), [(1, 1), (2, 2), (3, 3), (4, 4), (64, 4)])
def test_a_product_is_cut_in_a_block_a_cpu_at_most_four(cpus, blocks, monkeypatch):
    """Each block packs the other operand again: no more blocks than local-task's workers,
    one a CPU."""
    monkeypatch.setattr(blas_products, "default_threads", lambda: cpus)
    single = layout_of((300, 400), (400, 200), FITTING[0][2])
    assert single is not None and single.tasks == blocks
    assert (single.rows, single.cols) == (-(-300 // blocks), 200)
    wide = layout_of((200, 400), (400, 300), FITTING[0][2])
    assert wide is not None and wide.tasks == blocks
    assert (wide.rows, wide.cols) == (200, -(-300 // blocks))


def test_products_are_whole_when_not_split():
    for lhs, rhs in [((300, 400), (400, 200)), ((200, 400), (400, 300))]:
        whole = layout_of(lhs, rhs, FITTING[0][2], split=False)
        assert whole is not None and whole.tasks == 1
        assert (whole.rows, whole.cols) == (whole.m, whole.n)


def test_merged_batch_dimensions_and_transposes():
    scores = layout_of((2, 5, 3, 4), (2, 6, 3, 4), DotDimensions((0, 2), (0, 2), (3,), (3,)))
    assert scores is not None
    assert (scores.trans_a, scores.lda, scores.trans_b, scores.ldb) == (0, 12, 1, 12)
    assert scores.batch == (2, 3) and scores.c_batch == (90, 30)
    merged = layout_of((2, 3, 5, 7), (2, 3, 7, 4), DotDimensions((0, 1), (0, 1), (3,), (2,)))
    assert merged is not None and merged.batch == (6,)


@pytest.mark.parametrize("lhs_shape, rhs_shape, dims", NOT_FITTING)
def test_layouts_gemm_cannot_read_are_refused(lhs_shape, rhs_shape, dims):
    assert layout_of(lhs_shape, rhs_shape, dims) is None


def test_empty_products_are_refused():
    assert layout_of((0, 7), (7, 3), FITTING[0][2]) is None
    assert layout_of((5, 0), (0, 3), FITTING[0][2]) is None


def test_dimension_numbers_are_read_from_the_attribute():
    text = (
        "#stablehlo.dot<lhs_batching_dimensions = [0, 2], rhs_batching_dimensions = [0, 1], "
        "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [3]>"
    )
    assert DotDimensions.parse(text) == DotDimensions((0, 2), (0, 1), (1,), (3,))
    assert DotDimensions.parse("#stablehlo.dot<lhs_contracting_dimensions = [1]>") == (
        DotDimensions((), (), (1,), ())
    )


# ------------------------------------------------------------------ modules that run


def runs_modules(test):
    """The marks of a test that compiles and runs modules with the BLAS."""
    for mark in (
        pytest.mark.toolchain,
        pytest.mark.toolchain("libopenblas.so.0"),
        pytest.mark.iree,
        pytest.mark.jax,
        pytest.mark.slow,
    ):
        test = mark(test)
    return test


def einsum(spec: str):
    def product(a, b):
        return jnp.einsum(spec, a, b, precision="highest")

    return product


# (function, operand shapes): products jax writes as dot_generals of several forms.
PROGRAMS = [
    (lambda a, b: a @ b, [(33, 17), (17, 9)]),
    (lambda a, b: a.T @ b, [(17, 33), (17, 9)]),
    (lambda a, b: a @ b.T, [(33, 17), (9, 17)]),
    (lambda a, b: a @ b, [(3, 33, 17), (17, 9)]),
    (einsum("bqhd,bkhd->bhqk"), [(2, 24, 3, 16), (2, 20, 3, 16)]),
    (einsum("bhqk,bkhd->bqhd"), [(2, 3, 24, 20), (2, 20, 3, 16)]),
    (einsum("bij,bjk->bik"), [(4, 16, 20), (4, 20, 24)]),
    (einsum("ijk,jkl->il"), [(16, 6, 8), (6, 8, 20)]),
    (lambda a, b: jnp.tanh(a @ b) @ b.T, [(300, 64), (64, 64)]),  # row blocks, and fused ops
]


def rewritten(function, shapes, folder: Path, dtype=np.float64, seed: int = 0):
    """``function`` exported at ``shapes`` (``dtype``), rewritten with --abi iree; with inputs."""
    rng = np.random.default_rng(seed)
    inputs = [rng.standard_normal(shape).astype(dtype) for shape in shapes]
    with jax.enable_x64(dtype == np.float64):
        text = rewriter.export(function, *inputs).text
        expected = np.asarray(jax.jit(function)(*inputs))
    path = folder / "program.iree.mlir"
    path.write_text(rewriter.rewrite(text, abi="iree").text)
    return path, inputs, expected


def executable_sources(path: Path, folder: Path, **options) -> str:
    """The executables iree-compile makes of ``path``, as MLIR text."""
    dump = folder / "dump"
    compile_module(
        path,
        extra_args=(f"--iree-hal-dump-executable-sources-to={dump}",),
        cache=False,
        **options,
    )
    return "".join(p.read_text() for p in sorted(dump.glob("*.mlir")))


@runs_modules
@pytest.mark.parametrize("index", range(len(PROGRAMS)))
def test_f64_products_run_in_the_blas_with_jax_numbers(index, tmp_path):
    function, shapes = PROGRAMS[index]
    path, inputs, expected = rewritten(function, shapes, tmp_path, seed=index)
    assert "f64" in ROUTED_ELEMENTS and blas_gemm.functions()
    before = plugin.resolved_count()
    module = load(path, imports={})
    assert plugin.resolved_count() > before  # the gemm import of its executables
    got = module.main(*inputs)
    assert got.dtype == np.float64 and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13)


@runs_modules
def test_every_f64_product_is_a_gemm_dispatch(tmp_path):
    """The attention's four products are executables calling the gemm import; IREE's own
    matmul code is gone."""

    def attention(x, wq, wk, wv):
        q, k, v = (jnp.reshape(x @ w, (2, 32, 4, 16)) for w in (wq, wk, wv))
        scores = jnp.einsum("bqhd,bkhd->bhqk", q, k)
        return jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(scores, axis=-1), v)

    shapes = [(2, 32, 64), (64, 64), (64, 64), (64, 64)]
    path, inputs, expected = rewritten(attention, shapes, tmp_path)
    sources = executable_sources(path, tmp_path, blas_products=("f64",))
    # Five products: the three projections share one executable (the same layout).
    assert sources.count(f"call @{IMPORT_PREFIX}f64(") == 3
    assert "linalg.matmul" not in sources and "batch_matmul" not in sources
    np.testing.assert_allclose(load(path, imports={}).main(*inputs), expected, rtol=1e-13)


@runs_modules
def test_without_a_blas_the_products_stay_with_iree(tmp_path, monkeypatch):
    path, inputs, expected = rewritten(*PROGRAMS[4], tmp_path)
    monkeypatch.setattr(iree_runtime.blas_gemm, "functions", lambda: {})
    before = plugin.resolved_count()
    module = load(path, imports={})
    assert plugin.resolved_count() == before
    np.testing.assert_allclose(module.main(*inputs), expected, rtol=1e-13, atol=1e-13)


@runs_modules
def test_a_cross_compile_keeps_iree_products(tmp_path):
    path, _, _ = rewritten(*PROGRAMS[0], tmp_path)
    here = executable_sources(path, tmp_path / "here", blas_products=("f64",))
    assert f"@{IMPORT_PREFIX}f64" in here
    arm = executable_sources(
        path, tmp_path / "arm", blas_products=("f64",), triple="aarch64-linux-gnu"
    )
    assert IMPORT_PREFIX not in arm and "matmul" in arm


@runs_modules
@pytest.mark.parametrize("index", [0, 2, 4, 5, 8])
def test_f32_products_run_in_the_blas_with_jax_numbers(index, tmp_path):
    function, shapes = PROGRAMS[index]
    path, inputs, expected = rewritten(function, shapes, tmp_path, np.float32, seed=index)
    assert expected.dtype == np.float32 and "f32" in ROUTED_ELEMENTS
    sources = executable_sources(path, tmp_path, blas_products=ROUTED_ELEMENTS)
    assert f"call @{IMPORT_PREFIX}f32(" in sources and f"{IMPORT_PREFIX}f64" not in sources
    before = plugin.resolved_count()
    module = load(path, imports={})
    assert plugin.resolved_count() > before
    got = module.main(*inputs)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-5)


def workgroups(sources: str) -> list[int]:
    """The workgroup count of each gemm executable in ``sources`` (its export's hal.return)."""
    return [
        int(count) if count.isdigit() else 1
        for count in re.findall(r"hal\.return %c(\w+), %c1, %c1 : index", sources)
    ]


@runs_modules
@pytest.mark.parametrize("cpus", [4, 2])
def test_a_large_product_is_split_for_local_task_only(cpus, tmp_path, monkeypatch):
    """On local-sync the blocks of a product run one after the other, each packing an
    operand again: the product stays whole. local-task's workers share a block a CPU."""
    monkeypatch.setattr(blas_products, "default_threads", lambda: cpus)
    path, inputs, expected = rewritten(
        lambda a, b: a @ b, [(128, 256), (256, 512)], tmp_path, np.float32
    )
    counts = {}
    for driver in ("local-sync", "local-task"):
        sources = executable_sources(path, tmp_path / driver, blas_products=("f32",), driver=driver)
        counts[driver] = workgroups(sources)
        got = load(path, imports={}, driver=driver).main(*inputs)
        np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-5)
    assert counts == {"local-sync": [1], "local-task": [cpus]}


DRIVER_FIRST = """
import sys
import iree.runtime as rt
import numpy as np
rt.Config("local-sync")  # the driver exists before load can name the plugin
from rewriter.iree import LoadError, load, plugin
inputs = [np.load(name) for name in sys.argv[3:]]
got = load(sys.argv[1], imports={}, driver="local-sync").main(*inputs)
print(plugin.resolved_count())
print(np.asarray(got).tobytes().hex())
try:
    load(sys.argv[2], imports={}, driver="local-sync")
except LoadError as error:
    print(error)
"""


@runs_modules
def test_a_driver_made_before_load_keeps_iree_products(tmp_path):
    """IREE reads --executable_plugin when it creates a driver: one made earlier lacks the
    plugin, so a .mlir's products stay IREE's and a .vmfb with BLAS products is refused."""
    path, inputs, expected = rewritten(*PROGRAMS[5], tmp_path)
    names = []
    for number, array in enumerate(inputs):
        names.append(str(tmp_path / f"{number}.npy"))
        np.save(names[-1], array)
    vmfb = tmp_path / "blas.vmfb"
    compile_module(path, vmfb, blas_products=("f64",))
    done = subprocess.run(
        [sys.executable, "-c", DRIVER_FIRST, str(path), str(vmfb), *names],
        capture_output=True,
        text=True,
        check=True,
    )
    resolved, data, refused = done.stdout.splitlines()
    assert resolved == "0"
    assert "f64 matrix products are compiled as dispatches that call a BLAS, but the " in refused
    assert "driver local-sync was created before" in refused
    got = np.frombuffer(bytes.fromhex(data), np.float64).reshape(expected.shape)
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13)


@runs_modules
def test_the_command_line_compiles_products_into_the_blas(tmp_path):
    path, inputs, expected = rewritten(*PROGRAMS[1], tmp_path)
    vmfb = tmp_path / "program.vmfb"
    subprocess.run(
        [sys.executable, "-m", "rewriter.iree", str(path), "-o", str(vmfb), "--blas"],
        check=True,
        capture_output=True,
        timeout=300,
    )
    before = plugin.resolved_count()
    module = load(vmfb, imports={})
    assert plugin.resolved_count() > before
    np.testing.assert_allclose(module.main(*inputs), expected, rtol=1e-13, atol=1e-13)


@runs_modules
def test_small_products_stay_with_iree(tmp_path):
    """A batch of 3 x 3 products: gemm's call would cost more than the product."""
    path, inputs, expected = rewritten(einsum("bij,bjk->bik"), [(50, 3, 3), (50, 3, 3)], tmp_path)
    sources = executable_sources(path, tmp_path, blas_products=ROUTED_ELEMENTS)
    assert IMPORT_PREFIX not in sources
    np.testing.assert_allclose(load(path, imports={}).main(*inputs), expected, rtol=1e-13)


# --------------------------------------------------------- products of a symbolic batch


def test_products_of_a_symbolic_batch_read_their_rows_at_run_time():
    """``(b, ..., k) @ (k, n)``: its rows, ``b`` times the static free sizes, are read at
    run time; the rest of the layout is that of any row-major ``m x k`` by ``k x n``."""
    matrix = DotDimensions((), (), (1,), (0,))
    layout, rows = rows_at_run_time([None, 256], [256, 128], matrix)
    assert (layout.m, layout.n, layout.k, layout.lda, layout.ldb, layout.ldc) == (
        0, 128, 256, 256, 128, 128,
    )  # fmt: skip
    assert (layout.trans_a, layout.trans_b, layout.rows, layout.cols) == (0, 0, 0, 128)
    assert rows == RunTimeRows((0,), 1, True)
    three = DotDimensions((), (), (2,), (0,))
    _, rows = rows_at_run_time([None, 7, 64], [64, 64], three)
    assert rows == RunTimeRows((0,), 7, True)  # (b, 7, 64) @ (64, 64): m = 7b
    layout, _ = rows_at_run_time([None, 64], [128, 64], DotDimensions((), (), (1,), (1,)))
    assert (layout.n, layout.trans_b, layout.ldb) == (128, 1, 64)  # x @ w.T
    assert rows_at_run_time([None, 64], [64, 64], matrix, split=False)[1].split is False


@pytest.mark.parametrize(
    "lhs, rhs, dims",
    [
        ([64, None], [64, 64], DotDimensions((), (), (0,), (0,))),  # x.T @ w: lda is b
        ([None, 64], [64, None], DotDimensions((), (), (1,), (0,))),  # the rhs of b too
        ([None, 4, 64], [None, 64, 64], DotDimensions((0,), (0,), (2,), (1,))),  # a batch
        ([None, 2], [2, 2], DotDimensions((), (), (1,), (0,))),  # 4 multiply-adds a row
    ],
)
def test_other_products_of_dynamic_shape_stay_with_iree(lhs, rhs, dims):
    assert rows_at_run_time(lhs, rhs, dims) is None


# (lhs shape, rhs shape, dimension numbers) with a leading batch dimension of any size.
LEADING_BATCH = [
    ((5, 16, 32), (5, 32, 24), DotDimensions((0,), (0,), (2,), (1,))),  # bij,bjk->bik
    ((5, 24, 3, 16), (5, 20, 3, 16), DotDimensions((0, 2), (0, 2), (3,), (3,))),  # scores
    ((5, 3, 24, 20), (5, 20, 3, 16), DotDimensions((0, 1), (0, 2), (3,), (1,))),  # mixing
    ((5, 3, 16, 32), (5, 3, 32, 16), DotDimensions((0, 1), (0, 1), (3,), (2,))),  # merged
]


@pytest.mark.parametrize("lhs_shape, rhs_shape, dims", LEADING_BATCH)
def test_a_leading_batch_at_run_time_gives_the_layout_of_every_batch(lhs_shape, rhs_shape, dims):
    """``batch_at_run_time``'s layout, with its first batch size set to a batch's, is
    ``layout_of``'s for that batch, and gemm on it gives dot_general's numbers, for batches
    of 2 to 5 (a batch of 1 drops the dimension from ``layout_of``'s layout, and is read
    at run time as any other)."""
    found = batch_at_run_time([None, *lhs_shape[1:]], [None, *rhs_shape[1:]], dims)
    assert found is not None
    layout, batch = found
    assert batch.items == batch.merged * int(np.prod(layout.batch[1:]))
    rng = np.random.default_rng(7)
    for size in (2, 3, 5):
        lhs_at = (size, *lhs_shape[1:])
        rhs_at = (size, *rhs_shape[1:])
        first = size * batch.merged
        at_run_time = replace(layout, batch=(first, *layout.batch[1:]))
        assert at_run_time == layout_of(lhs_at, rhs_at, dims, split=False)
        assert at_run_time.tasks == size * batch.items
        lhs, rhs = rng.standard_normal(lhs_at), rng.standard_normal(rhs_at)
        expected = dot_general(lhs, rhs, dims)
        got = gemm_as_c_does(at_run_time, lhs, rhs, expected.shape)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_the_leading_batch_merges_with_the_batch_dimensions_after_it():
    """``bhij,bhjk->bhik``: ``b`` and ``h`` lie one after the other in all three tensors,
    so they are one batch dimension of ``b * h`` items, ``merged`` = h."""
    dims = DotDimensions((0, 1), (0, 1), (3,), (2,))
    layout, batch = batch_at_run_time([None, 3, 16, 32], [None, 3, 32, 16], dims)
    assert len(layout.batch) == 1 and batch == RunTimeBatch(3, 3)


@pytest.mark.parametrize(
    "lhs, rhs, dims",
    [
        ([4, None, 8], [4, 8, 6], DotDimensions((0,), (0,), (2,), (1,))),  # rows, not batch
        ([None, 3, 8], [5, 8, 6], DotDimensions((0,), (0,), (2,), (1,))),  # rhs batch static
        ([3, None, 8], [3, None, 6], DotDimensions((0, 1), (0, 1), (2,), (2,))),  # 2nd batch
        ([None, 3, 8], [None, 8, None], DotDimensions((0,), (0,), (2,), (1,))),  # n too
        ([None, 2, 2], [None, 2, 2], DotDimensions((0,), (0,), (2,), (1,))),  # 8 an item
        ([None, 3, 8], [None, 6, 8], DotDimensions((0,), (0,), (1,), (2,))),  # a.T: no gemm
    ],
)
def test_other_products_of_a_dynamic_batch_stay_with_iree(lhs, rhs, dims):
    assert batch_at_run_time(lhs, rhs, dims) is None


@runs_modules
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_products_of_a_symbolic_batch_run_in_the_blas_with_jax_numbers(dtype, tmp_path):
    """Each product of the block is one gemm dispatch whatever the batch; split in blocks
    of rows for ``local-task`` (65 rows: 2 blocks of 33 and 32), whole for ``local-sync``."""

    def layer(x, w1, w2):
        return jnp.tanh(x @ w1) @ w2

    rng = np.random.default_rng(0)
    weights = [rng.standard_normal((64, 64)).astype(dtype) for _ in range(2)]
    spec = jax.ShapeDtypeStruct(jax.export.symbolic_shape("b, 64"), dtype)
    with jax.enable_x64(dtype == np.float64):
        text = rewriter.export(layer, spec, *weights).text
        path = tmp_path / "layer.iree.mlir"
        path.write_text(rewriter.rewrite(text, abi="iree").text)
        element = "f32" if dtype == np.float32 else "f64"
        sources = executable_sources(path, tmp_path, blas_products=(element,))
        assert sources.count(f"call @{IMPORT_PREFIX}{element}(") == 1  # one layout, two calls
        assert "linalg.matmul" not in sources
        for driver in ("local-task", "local-sync"):
            main = load(path, imports={}, driver=driver).main
            for batch in (1, 65, 300):
                x = rng.standard_normal((batch, 64)).astype(dtype)
                expected = np.asarray(jax.jit(layer)(x, *weights))
                tolerance = 2e-5 if dtype == np.float32 else 1e-13  # as the static products'
                got = main(x, *weights)
                np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance)


@runs_modules
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batched_products_of_a_symbolic_batch_run_in_the_blas_with_jax_numbers(dtype, tmp_path):
    """An attention's two batched products, exported with a symbolic batch: each is a
    gemm dispatch of one workgroup a batch item (``batch_at_run_time``), on both drivers,
    with jax.jit's numbers for batches of 1, 3 and 5."""

    def attention(q, k, v):
        scores = jnp.einsum("bqhd,bkhd->bhqk", q, k, precision="highest")
        weights = jax.nn.softmax(scores, axis=-1)
        return jnp.einsum("bhqk,bkhd->bqhd", weights, v, precision="highest")

    spec = jax.ShapeDtypeStruct(jax.export.symbolic_shape("b, 24, 3, 16"), dtype)
    with jax.enable_x64(dtype == np.float64):
        text = rewriter.export(attention, spec, spec, spec).text
        path = tmp_path / "attention.iree.mlir"
        path.write_text(rewriter.rewrite(text, abi="iree").text)
        element = "f32" if dtype == np.float32 else "f64"
        sources = executable_sources(path, tmp_path, blas_products=(element,))
        assert sources.count(f"call @{IMPORT_PREFIX}{element}(") == 2
        assert "batch_matmul" not in sources and "linalg.matmul" not in sources
        rng = np.random.default_rng(3)
        for driver in ("local-task", "local-sync"):
            main = load(path, imports={}, driver=driver).main
            for batch in (1, 3, 5):
                q, k, v = (rng.standard_normal((batch, 24, 3, 16)).astype(dtype) for _ in "qkv")
                expected = np.asarray(jax.jit(attention)(q, k, v))
                tolerance = 2e-5 if dtype == np.float32 else 1e-13  # as the static products'
                got = main(q, k, v)
                assert got.shape == expected.shape
                np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance)


@runs_modules
def test_a_batch_of_none_computes_nothing(tmp_path):
    """Without jax's shape assertions (which refuse a batch of 0), a batch of 0 reaches the
    gemm dispatch as one workgroup with a first batch size of 0: it computes nothing (a
    division by that size stopped the process with SIGFPE) and the result is empty."""

    def scores(q, k):
        return jnp.einsum("bqhd,bkhd->bhqk", q, k, precision="highest")

    spec = jax.ShapeDtypeStruct(jax.export.symbolic_shape("b, 24, 3, 16"), np.float32)
    text = rewriter.export(scores, spec, spec).text
    unchecked = "\n".join(line for line in text.splitlines() if "@shape_assertion" not in line)
    path = tmp_path / "scores.iree.mlir"
    path.write_text(rewriter.rewrite(unchecked, abi="iree").text)
    empty = np.zeros((0, 24, 3, 16), np.float32)
    for driver in ("local-task", "local-sync"):
        assert load(path, imports={}, driver=driver).main(empty, empty).shape == (0, 3, 24, 24)
