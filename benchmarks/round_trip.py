"""Figures for the round trip: compile time per sample and the largest difference from JAX.

Run from the repository root: ``python benchmarks/round_trip.py``. Builds the sample kernel
library, compiles every rewritten sample that has kernels, runs both paths on the same
random inputs and prints one line per program.
"""

from __future__ import annotations

import functools
import sys
import tempfile
import time
from pathlib import Path

import jax
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from kernel_library import ROUND_TRIP, build_kernel_library, register_with_jax, sample  # noqa: E402

from rewriter.compile import compile_module, load  # noqa: E402

# The tests' round-trip programs, and those whose tests check more than the numbers.
PROGRAMS = {
    **ROUND_TRIP,
    "side_effect": ("count_and_double", [(3,)]),
    "dynamic_shape": ("row_scale", [(7, 8)]),
    "mlp_model": ("mlp", [(8, 64), (64, 128), (128,)]),
    "attribute_kernel": ("attr_kernel", [(2,)]),
}


def relative_error(got, expected) -> float:
    got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
    scale = np.maximum(np.abs(expected), np.finfo(np.float64).tiny)
    return float(np.max(np.abs(got - expected) / scale)) if expected.size else 0.0


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="round-trip-"))
    kernels = build_kernel_library(work)
    register_with_jax(kernels)
    print(f"{'program':20} {'compile s':>10} {'max rel err':>12}")
    worst = 0.0
    for name, (function_name, shapes) in PROGRAMS.items():
        module = sample(name)
        function = getattr(module, function_name, None)
        if function is None:
            print(f"{name:20} (no function {function_name} in export.py)")
            continue
        started = time.perf_counter()
        library = work / f"lib{name}.so"
        compile_module((ROOT / "samples" / name / f"{name}.rewritten.mlir").read_text(), library)
        seconds = time.perf_counter() - started
        program = load(library, kernels=[kernels])
        rng = np.random.default_rng(0)
        inputs = [rng.normal(size=shape).astype(np.float32) for shape in shapes]
        if name == "attribute_kernel":
            function = functools.partial(function, attributes=module.XLA_ATTRIBUTES)
            with jax.enable_x64(True):
                expected = jax.jit(function)(*inputs)
        else:
            expected = jax.jit(function)(*inputs)
        got = program.main(*inputs)
        pairs = (
            zip(got, expected, strict=True) if isinstance(expected, tuple) else [(got, expected)]
        )
        error = max(relative_error(a, b) for a, b in pairs)
        worst = max(worst, error)
        print(f"{name:20} {seconds:10.2f} {error:12.2e}")
    print(f"{len(PROGRAMS)} programs; largest relative difference {worst:.2e}")


if __name__ == "__main__":
    main()
