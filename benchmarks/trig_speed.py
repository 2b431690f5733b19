"""f32 ``sin`` and ``cos`` of a million elements: jax.jit, rewriter.compile and rewriter.iree.

Run from the repository root: ``python benchmarks/trig_speed.py [--size N]``. Both paths
compute them in f64 (``rewriter/compile/f32_in_f64.py``): a tensor within 2^19 by Cody and
Waite's reduction, one with a larger element by Payne and Hanek's for every element. Each
function is timed on both inputs, ``within`` (uniform in [-10, 10]) and ``mixed`` (the
same with one element in a hundred between 1e3 and 1e30), against ``jax.jit(f)`` side by
side in one process (median ms per call). Prints the load average first.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax.numpy as jnp
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import jax  # noqa: E402

import rewriter  # noqa: E402
from benchmarks.report import figures, header, row  # noqa: E402
from benchmarks.sort_speed import median_ms, timed_paths  # noqa: E402

FUNCTIONS = {"sin": jnp.sin, "cos": jnp.cos}


def inputs(size: int) -> dict[str, np.ndarray]:
    """``within``: uniform in [-10, 10]; ``mixed``: one element in a hundred beyond 2^19."""
    rng = np.random.default_rng(0)
    within = rng.uniform(-10, 10, size).astype(np.float32)
    mixed = within.copy()
    mixed[::100] = (10.0 ** rng.uniform(3, 30, mixed[::100].size)).astype(np.float32)
    return {"within": within, "mixed": mixed}


def main(size: int) -> None:
    timed_functions(FUNCTIONS, lambda name: inputs(size), "trig-speed-")


def timed_functions(
    functions: dict[str, Callable[..., Any]],
    inputs_of: Callable[[str], dict[str, np.ndarray]],
    prefix: str,
) -> None:
    """For each function and each of its inputs (``inputs_of(name)``: by kind), a row of
    ``jax.jit``'s median ms per call and both paths' (and their ratio to it)."""
    print(header("function", "input", "jax.jit ms", "compile ms (x jit)", "iree ms (x jit)"))
    work = Path(tempfile.mkdtemp(prefix=prefix))
    for name, function in functions.items():
        for kind, x in inputs_of(name).items():
            arguments = [x]
            text = rewriter.export(function, x).text
            jit_ms = median_ms(jax.jit(function), arguments)
            label = f"{name}-{kind.replace(' ', '-')}"
            compile_column, iree_column = timed_paths(text, arguments, jit_ms, work, label)
            print(row(name, kind, f"{jit_ms:.2f}", compile_column, iree_column), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description="jax.jit against rewriter.compile and rewriter.iree on f32 sin and cos "
        "of a tensor within 2^19 and of one with larger elements: median ms per call."
    )
    parser.add_argument("--size", type=int, default=1_000_000, help="elements (%(default)s)")
    parser.add_argument("--markdown", action="store_true", help="write benchmarks/README.md")
    chosen = parser.parse_args()
    with figures("trig_speed", chosen.markdown):
        main(chosen.size)
