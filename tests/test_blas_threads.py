"""Large products and convolutions of a module compiled for several threads run on the async
runtime's pool (abi/blas_calls.c, abi/async_runtime.c's rw_parallel_for): the same bits as
on one thread, and the pool is started only by a product large enough, and only while the
BLAS itself runs one thread."""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from c_programs import THREADS_NOW, built, run_program

from rewriter.compile import compile_module, load

pytestmark = [
    pytest.mark.slow,
    pytest.mark.jax,
    pytest.mark.iree,
    pytest.mark.toolchain,
    pytest.mark.toolchain("libopenblas.so.0"),
]


# OpenBLAS's kernels that compute an element of a block of a product's rows or columns as
# in the whole product (OpenBLAS 0.3.21's AVX-512 ones; its Haswell kernels do not).
AVX512_CORES = ("SkylakeX", "Cooperlake", "SapphireRapids")


def _threads_now() -> int:
    return len(os.listdir("/proc/self/task"))


@pytest.fixture
def openblas() -> Iterator[ctypes.CDLL]:
    """The system's OpenBLAS, the one the modules link (by its soname), with its thread
    count as it was given back afterwards."""
    library = ctypes.CDLL("libopenblas.so.0")
    threads = library.openblas_get_num_threads()
    yield library
    library.openblas_set_num_threads(threads)


def _conv(x, w):
    import jax

    return jax.lax.conv_general_dilated(
        x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
    )


def _programs():
    """name: (function, arguments), each above the split's 4e6 multiply-adds: a convolution
    (8 images, a chunk each), products split by columns (64 x 512 results) and by rows
    (512 x 64), a batch of products split by items."""
    import jax.numpy as jnp

    rng = np.random.default_rng(0)

    def normal(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    return {
        "conv": (_conv, (normal(8, 32, 32, 16), normal(3, 3, 16, 32))),
        "matmul_columns": (jnp.matmul, (normal(64, 256), normal(256, 512))),
        "matmul_rows": (jnp.matmul, (normal(512, 256), normal(256, 64))),
        "batch_matmul": (jnp.matmul, (normal(8, 128, 128), normal(8, 128, 128))),
        "small": (jnp.matmul, (normal(32, 32), normal(32, 32))),
    }


def _library(name: str, threads: int, tmp_path: Path):
    import rewriter

    function, arguments = _programs()[name]
    text = rewriter.rewrite(rewriter.export(function, *arguments).text).text
    library = tmp_path / f"lib{name}{threads}.so"
    compile_module(text, library, threads=threads, cache=False)
    return load(library).main, arguments


@pytest.mark.parametrize(
    ("name", "added"),
    [("conv", 1), ("matmul_columns", 1), ("matmul_rows", 1), ("batch_matmul", 1), ("small", 0)],
)
def test_large_products_run_on_the_pool_with_the_bits_of_one_thread(
    name: str, added: int, tmp_path: Path, monkeypatch, openblas
):
    """REWRITER_THREADS=2: a large product starts the pool's one worker on its first call,
    a small one starts nothing; every call gives the bits of the module compiled for one
    thread where OpenBLAS computes an element of a block of rows or columns as it does in
    the whole product: its AVX-512 kernels do; its AVX2 kernels (``Haswell``, what an AVX2
    CPU gets, or ``OPENBLAS_CORETYPE=Haswell``) give a block of a single product other
    roundings, within the bound of two orders of a sum of k products: each result differs
    from the exact one by at most ``k u`` times the sum of the magnitudes of its terms
    (``|a| @ |b|``), so the two by twice that."""
    monkeypatch.setenv("REWRITER_THREADS", "2")
    openblas.openblas_set_num_threads(1)
    one, arguments = _library(name, 1, tmp_path)
    two, _ = _library(name, 2, tmp_path)
    expected = np.asarray(one(*arguments))
    openblas.openblas_get_corename.restype = ctypes.c_char_p
    exact = openblas.openblas_get_corename().decode() in AVX512_CORES or not name.startswith(
        "matmul"
    )
    before = _threads_now()
    results = [np.asarray(two(*arguments)) for _ in range(3)]  # a pool is made once
    assert _threads_now() - before == added  # before numpy's own BLAS starts its threads
    for got in results:
        if exact:
            assert got.tobytes() == expected.tobytes()
        else:
            a, b = (np.abs(x.astype(np.float64)) for x in arguments)
            bound = 2 * a.shape[-1] * 2.0**-24 * (a @ b)
            assert np.all(np.abs(got.astype(np.float64) - expected) <= bound)


def test_a_blas_on_several_threads_keeps_its_products_whole(tmp_path: Path, monkeypatch, openblas):
    """An OpenBLAS running two threads splits a product itself: the module's pool stays
    unmade (two threading gemms at once would fight over the cores)."""
    monkeypatch.setenv("REWRITER_THREADS", "2")
    openblas.openblas_set_num_threads(2)  # starts OpenBLAS's worker, if it has none yet
    two, arguments = _library("matmul_columns", 2, tmp_path)  # no loop large enough to split
    before = _threads_now()
    for _ in range(3):
        two(*arguments)
    assert _threads_now() == before


PRODUCT = """\
module @prod {
  func.func public @main(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>)
      -> tensor<256x256xf32> {
    %c = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]
        : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
    return %c : tensor<256x256xf32>
  }
}
"""

HOST = r"""
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "prod.h"

%THREADS_NOW%
int main(void)
{
    enum { N = 256 };
    float *a = malloc(N * N * sizeof *a), *b = malloc(N * N * sizeof *b);
    float *c = malloc(N * N * sizeof *c);
    for (int i = 0; i < N * N; ++i) {
        a[i] = (float)(i % 7 - 3);
        b[i] = (float)(i % 5 - 2);
    }
    prod_f32_2d x = {a, {N, N}}, y = {b, {N, N}}, z = {c, {N, N}};
    int before = threads_now(), wrong = 0;
    for (int call = 0; call < 3; ++call) {
        if (prod_main(&x, &y, &z) != 0)
            return 1;
        for (int i = 0; i < N; ++i)
            for (int j = 0; j < N; ++j) {
                float sum = 0.0f; /* small integers: exact in any order */
                for (int k = 0; k < N; ++k)
                    sum += a[i * N + k] * b[k * N + j];
                wrong += c[i * N + j] != sum;
            }
    }
    printf("%d wrong, %d threads more\n", wrong, threads_now() - before);
    free(a);
    free(b);
    free(c);
    return 0;
}
""".replace("%THREADS_NOW%", THREADS_NOW)


@pytest.mark.toolchain("gcc")
def test_a_c_host_without_python_runs_a_split_product(tmp_path: Path):
    """The static library, a C program and the system's OpenBLAS on one thread: the product
    starts the pool's worker (REWRITER_THREADS=2) and is right; the program links the BLAS,
    libm and pthreads, nothing else."""
    import subprocess
    import sys

    from mlir_tools import require_tool

    require_tool("gcc")
    module = tmp_path / "prod.mlir"
    module.write_text(PRODUCT)
    command = [sys.executable, "-m", "rewriter.compile", str(module), "-o"]
    command += [str(tmp_path / "libprod.a"), "--header", str(tmp_path / "prod.h")]
    command += ["--threads", "2", "--no-cache"]
    run = subprocess.run(command, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    program = built(
        tmp_path,
        "host",
        HOST,
        [tmp_path / "libprod.a"],
        flags=("-std=c99", "-D_DEFAULT_SOURCE", f"-I{tmp_path}"),
        libraries=("-l:libopenblas.so.0", "-lm", "-lpthread"),
    )
    for blas_threads, added in (("1", 1), ("2", 0)):
        environment = {"REWRITER_THREADS": "2", "OPENBLAS_NUM_THREADS": blas_threads}
        run = run_program(program, environment)
        assert (run.returncode, run.stdout) == (0, f"0 wrong, {added} threads more\n"), run.stderr


def test_callers_on_several_threads_share_the_pool_for_products(
    tmp_path: Path, monkeypatch, openblas
):
    """Four Python threads call a split convolution at once (the loader lets go of the GIL):
    each gets the bits of the one-thread module every time."""
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setenv("REWRITER_THREADS", "2")
    openblas.openblas_set_num_threads(1)
    one, arguments = _library("conv", 1, tmp_path)
    two, _ = _library("conv", 2, tmp_path)
    expected = np.asarray(one(*arguments)).tobytes()

    def calls(_: int) -> bool:
        return all(np.asarray(two(*arguments)).tobytes() == expected for _ in range(5))

    with ThreadPoolExecutor(4) as callers:
        assert all(callers.map(calls, range(4)))
