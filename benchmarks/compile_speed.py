"""jax.jit against rewriter.compile, side by side in one process: median time per call.

Run from the repository root: ``python benchmarks/compile_speed.py [PROGRAM ...]``. Each
program is exported with jax, compiled by ``rewriter.compile`` twice (products computed by
the BLAS, the default, and by compiled loops, ``blas=None``) and timed against
``jax.jit(f)`` on the same inputs. The BLAS column is timed with the BLAS's own thread
count and with one thread (OpenBLAS threads spin while they wait, which costs dearly on a
machine whose cores are busy with other work). Prints the load average first.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import rewriter  # noqa: E402
from benchmarks.report import figures, header, row  # noqa: E402
from rewriter.compile import compile_module, load  # noqa: E402
from rewriter.compile.blas import system_blas  # noqa: E402


def layer_norm(x):
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / jnp.sqrt(variance + 1e-5)


def block(x, w):
    """4 layers of layer norm, GELU and a 512x512 matmul, batch 128."""
    for layer in range(4):
        x = x + jax.nn.gelu(layer_norm(x) @ w[layer])
    return x


def attention(q, k, v):
    scores = jnp.einsum("bqd,bkd->bqk", q, k) / 8.0
    return jnp.einsum("bqk,bkd->bqd", jax.nn.softmax(scores, -1), v)


def conv(x, w):
    y = jax.lax.conv_general_dilated(
        x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
    )
    return jax.nn.relu(y).mean((1, 2))


def _normal(rng, *shape, scale=1.0):
    return (rng.normal(size=shape) * scale).astype(np.float32)


RNG = np.random.default_rng(0)
PROGRAMS = {
    "block": (block, [_normal(RNG, 128, 512), _normal(RNG, 4, 512, 512, scale=512**-0.5)]),
    "attention": (attention, [_normal(RNG, 8, 128, 64) for _ in range(3)]),
    "conv": (conv, [_normal(RNG, 8, 32, 32, 16), _normal(RNG, 3, 3, 16, 32)]),
}


def median_ms(function, arguments, calls: int = 20) -> float:
    jax.block_until_ready(function(*arguments))
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        jax.block_until_ready(function(*arguments))
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e3


def openblas_threads(count: int | None) -> None:
    """Set the system OpenBLAS's thread count (None: its default, one per core): the BLAS
    that the compiled modules link by default."""
    blas = system_blas()
    if blas is None:
        return
    library = ctypes.CDLL(str(blas.library))
    setter = getattr(library, "openblas_set_num_threads", None)
    if setter is not None:
        setter(count or os.cpu_count() or 1)


def main(names: list[str]) -> None:
    print(
        header(
            "program", "jax.jit ms", "blas ms", "ratio", "blas 1 thread ms", "ratio",
            "loops ms", "ratio", "compile s",
        )
    )  # fmt: skip
    work = Path(tempfile.mkdtemp(prefix="compile-speed-"))
    for name in names:
        function, arguments = PROGRAMS[name]
        text = rewriter.export(function, *arguments).text
        started = time.perf_counter()
        compile_module(text, work / f"{name}.so")
        compile_seconds = time.perf_counter() - started
        compile_module(text, work / f"{name}-loops.so", blas=None)
        with_blas, loops = load(work / f"{name}.so"), load(work / f"{name}-loops.so")
        jitted = jax.jit(function)
        openblas_threads(None)
        jit_ms = median_ms(jitted, arguments)
        blas_ms = median_ms(with_blas.main, arguments)
        openblas_threads(1)
        one_thread_ms = median_ms(with_blas.main, arguments)
        openblas_threads(None)
        loops_ms = median_ms(loops.main, arguments, calls=5)
        print(
            row(
                name, f"{jit_ms:.2f}", f"{blas_ms:.2f}", f"{blas_ms / jit_ms:.2f}",
                f"{one_thread_ms:.2f}", f"{one_thread_ms / jit_ms:.2f}", f"{loops_ms:.2f}",
                f"{loops_ms / jit_ms:.2f}", f"{compile_seconds:.1f}",
            ),
            flush=True,
        )  # fmt: skip


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="jax.jit against rewriter.compile (BLAS with its default threads, with "
        "one thread, and compiled loops): median ms per call, side by side in one process."
    )
    parser.add_argument(
        "programs",
        nargs="*",
        metavar="PROGRAM",
        help=f"programs to time, among {', '.join(PROGRAMS)} (default: all)",
    )
    parser.add_argument("--markdown", action="store_true", help="write benchmarks/README.md")
    arguments = parser.parse_args(argv)
    unknown = [name for name in arguments.programs if name not in PROGRAMS]
    if unknown:
        parser.error(f"unknown program {unknown[0]!r} (choose from {', '.join(PROGRAMS)})")
    return arguments


if __name__ == "__main__":
    chosen = parse_arguments()
    with figures("compile_speed", chosen.markdown):
        main(chosen.programs or list(PROGRAMS))
