"""A compiled program runs in XLA:CPU's floating-point mode, denormals flushed to zero
(``abi/rewriter_float_mode.h``): jax.jit's numbers where a result or an input is denormal,
on the calling thread and on the async runtime's workers, and the caller keeps its own
mode."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import main_on, on_both_paths

import rewriter

F32_EDGES = np.array([-100.0, -87.5, -103.0, 1e-40, 1e-45, 5e-39, 2.0, -1e-39], np.float32)
F64_EDGES = np.array([-720.0, -708.5, -745.0, 1e-310, 5e-324, 2e-308, 2.0, -1e-309])


def near_underflow(x, y):
    """Results that are denormal (exp), and inputs that are (sqrt, 1 / x, x * y)."""
    return jnp.exp(x), jnp.sqrt(jnp.abs(x)), 1 / x, x * y, x - y


def same_bits(got, expected) -> None:
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got.view(f"u{got.itemsize}"), expected.view(f"u{got.itemsize}"))


@on_both_paths
@pytest.mark.parametrize("edges", [F32_EDGES, F64_EDGES], ids=["f32", "f64"])
def test_denormals_are_flushed_as_under_jax_jit(tmp_path, path, edges):
    ones = np.ones_like(edges)
    with jax.enable_x64(edges.dtype == np.float64):
        text = rewriter.export(near_underflow, edges, ones).text
        expected = jax.jit(near_underflow)(edges, ones)
    assert np.asarray(expected[0])[1] == 0  # what XLA gives: exp(-87.5) flushed
    got = main_on(path, text, tmp_path)(edges, ones)
    for result, reference in zip(got, expected, strict=True):
        same_bits(result, reference)


def product_and_convolution(a, b):
    window = b[:3, :3, None, None]
    dimensions = ("NHWC", "HWIO", "NHWC")
    return a @ b, jax.lax.conv_general_dilated(
        a[None, ..., None], window, (1, 1), "SAME", dimension_numbers=dimensions
    )


@on_both_paths
def test_products_read_denormals_as_zero(tmp_path, path):
    """A product of 512 x 512 x 512 (the BLAS, split over the workers on the compile path)
    and a convolution of denormal inputs: 0, as under jax.jit, not 512 * 1e-39."""
    a, b = np.full((512, 512), 1e-39, np.float32), np.ones((512, 512), np.float32)
    expected = jax.jit(product_and_convolution)(a, b)
    assert not np.asarray(expected[0]).any()
    got = main_on(path, rewriter.export(product_and_convolution, a, b).text, tmp_path)(a, b)
    for result, reference in zip(got, expected, strict=True):
        same_bits(result, reference)


@pytest.mark.slow
@pytest.mark.toolchain
def test_the_caller_keeps_its_own_mode(tmp_path):
    """After a call, the calling thread computes with denormals again (numpy's 1e-40 * 1)."""
    edges = F32_EDGES
    run = main_on("compile", rewriter.export(near_underflow, edges, edges).text, tmp_path)
    run(edges, edges)
    tiny, one = np.float32(1e-40), np.float32(1.0)
    assert tiny * one == tiny and tiny != 0


@pytest.mark.slow
@pytest.mark.toolchain
def test_the_workers_flush_too(tmp_path, monkeypatch):
    """A loop large enough to be split runs most of its blocks on the runtime's workers
    (two of them, idle): every element is flushed as on the calling thread. (The workers
    start in the mode of the entry that starts the pool.)"""
    from rewriter.compile import compile_module, load

    monkeypatch.setenv("REWRITER_THREADS", "3")
    x = np.full((64, 65536), -87.5, np.float32)
    library = tmp_path / "lib.so"
    compile_module(rewriter.rewrite(rewriter.export(jnp.exp, x).text).text, library, threads=2)
    assert b"mlirAsyncRuntimeExecute" in library.read_bytes()  # the loop is split
    main = load(library).main
    for _ in range(5):
        assert not np.asarray(main(x)).any()


EXP_HOST = r"""
#include <stdio.h>
#include "model.h"

int main(void)
{
    float in[4] = {-87.5f, -100.0f, 0.0f, -1.0f}, out[4];
    m_f32_1d x = {in, {4}}, y = {out, {4}};
    if (m_main(&x, &y) != 0) {
        printf("error: %s\n", m_last_error());
        return 1;
    }
    volatile float tiny = 1e-40f, one = 1.0f;
    printf("%a %a %a %a | %a\n", out[0], out[1], out[2], out[3], tiny * one);
    return 0;
}
"""


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.parametrize(
    "triple",
    [
        None,
        pytest.param(
            "aarch64-linux-gnu",
            marks=pytest.mark.toolchain("aarch64-linux-gnu-gcc", "qemu-aarch64"),
        ),
    ],
    ids=["host", "aarch64"],
)
def test_a_c_program_gets_xlas_numbers_and_keeps_its_mode(tmp_path, triple):
    """Through the C API, natively and on aarch64 (FPCR.FZ, under qemu-aarch64): exp(-87.5)
    is 0 as under jax.jit, and the program's own product of a denormal after the call is
    not flushed."""
    import subprocess
    import sys

    x = np.array([-87.5, -100.0, 0.0, -1.0], np.float32)
    expected = np.asarray(jax.jit(jnp.exp)(x))
    (tmp_path / "model.mlir").write_text(rewriter.rewrite(rewriter.export(jnp.exp, x).text).text)
    command = [sys.executable, "-m", "rewriter.compile", str(tmp_path / "model.mlir")]
    command += ["-o", str(tmp_path / "libmodel.so"), "--header", str(tmp_path / "model.h")]
    command += ["--prefix", "m_", *(["--target-triple", triple] if triple else [])]
    built = subprocess.run(command, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    (tmp_path / "host.c").write_text(EXP_HOST)
    compiler = f"{triple}-gcc" if triple else "gcc"
    subprocess.run(
        [compiler, "-std=c99", "-Wall", "-Werror", "-O1", str(tmp_path / "host.c")]
        + [f"-I{tmp_path}", f"-L{tmp_path}", "-lmodel", "-Wl,-rpath,$ORIGIN"]
        + ["-o", str(tmp_path / "host")],
        check=True,
    )
    runner = ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"] if triple else []
    run = subprocess.run(
        [*runner, str(tmp_path / "host")], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stdout + run.stderr
    results, product = run.stdout.split("|")
    got = np.array([float.fromhex(value) for value in results.split()], np.float32)
    same_bits(got, expected)
    assert float.fromhex(product.strip()) == float(np.float32(1e-40))
