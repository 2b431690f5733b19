"""Figures for the round trip: compile time per sample and the largest difference from JAX.

Run from the repository root: ``python benchmarks/round_trip.py``. Builds the sample kernel
library, compiles every rewritten sample that has kernels twice (linked against the
kernels' ``_mlir_ciface_`` entries, and with ``--ffi-bridge``, served by their XLA FFI
handlers), runs all paths on the same random inputs and prints one line per program: the
compile time, the largest relative difference from JAX and the time of one call (median).
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import statistics
import sys
import tempfile
import time
from pathlib import Path

import jax
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from kernel_library import (  # noqa: E402
    HANDLERS,
    ROUND_TRIP,
    build_kernel_library,
    register_with_jax,
    sample,
)

from benchmarks.report import figures, header, row  # noqa: E402
from rewriter.compile import compile_module, load  # noqa: E402

# The tests' round-trip programs, and those whose tests check more than the numbers.
PROGRAMS = {
    **ROUND_TRIP,
    "side_effect": ("count_and_double", [(3,)]),
    "dynamic_shape": ("row_scale", [(7, 8)]),
    "mlp_model": ("mlp", [(8, 64), (64, 128), (128,)]),
    "attribute_kernel": ("attr_kernel", [(2,)]),
}


def pairs(got, expected):
    """(got, expected) per result."""
    return zip(got, expected, strict=True) if isinstance(expected, tuple) else [(got, expected)]


def relative_error(got, expected) -> float:
    got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
    scale = np.maximum(np.abs(expected), np.finfo(np.float64).tiny)
    return float(np.max(np.abs(got - expected) / scale)) if expected.size else 0.0


def call_microseconds(program, inputs, calls: int = 200) -> float:
    """Median time of one call of ``program.main`` (numpy in and out included)."""
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        program.main(*inputs)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e6


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="round-trip-"))
    kernels = build_kernel_library(work)
    register_with_jax(kernels)
    library_handle = ctypes.CDLL(str(kernels))
    handlers = {t: jax.ffi.pycapsule(getattr(library_handle, s)) for t, s in HANDLERS.items()}
    print(header("program", "compile s", "max rel err", "call us", "bridge err", "bridge us"))
    worst = 0.0
    for name, (function_name, shapes) in PROGRAMS.items():
        module = sample(name)
        function = getattr(module, function_name, None)
        if function is None:
            print(row(name, f"no function {function_name} in export.py", "", "", "", ""))
            continue
        started = time.perf_counter()
        library = work / f"lib{name}.so"
        rewritten = (ROOT / "samples" / name / f"{name}.rewritten.mlir").read_text()
        compile_module(rewritten, library)
        seconds = time.perf_counter() - started
        program = load(library, kernels=[kernels])
        bridge_library = work / f"lib{name}_bridge.so"
        compile_module(rewritten, bridge_library, ffi_bridge=True)
        bridged = load(bridge_library, ffi_handlers=handlers)
        rng = np.random.default_rng(0)
        inputs = [rng.normal(size=shape).astype(np.float32) for shape in shapes]
        if name == "attribute_kernel":
            function = functools.partial(function, attributes=module.XLA_ATTRIBUTES)
            with jax.enable_x64(True):
                expected = jax.jit(function)(*inputs)
        else:
            expected = jax.jit(function)(*inputs)
        error, bridge_error = (
            max(relative_error(a, b) for a, b in pairs(path.main(*inputs), expected))
            for path in (program, bridged)
        )
        worst = max(worst, error, bridge_error)
        print(
            row(
                name, f"{seconds:.2f}", f"{error:.2e}", f"{call_microseconds(program, inputs):.1f}",
                f"{bridge_error:.2e}", f"{call_microseconds(bridged, inputs):.1f}",
            ),
            flush=True,
        )  # fmt: skip
    print(f"{len(PROGRAMS)} programs; largest relative difference {worst:.2e}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="write benchmarks/README.md")
    with figures("round_trip", parser.parse_args().markdown):
        main()
