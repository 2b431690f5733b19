"""f32 ``log``, ``log1p`` and ``expm1`` of a million elements: jax.jit, rewriter.compile and
rewriter.iree.

Run from the repository root: ``python benchmarks/math_speed.py [--size N]``. Both paths
compute them as XLA:CPU does, step for step (``rewriter/compile/xla_math.py``). Each
function is timed on inputs of its whole range and on inputs where it takes its other
method (``log1p`` and ``expm1`` near 0), against ``jax.jit(f)`` side by side in one process
(median ms per call). Prints the load average first.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import jax.numpy as jnp
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.report import figures  # noqa: E402
from benchmarks.trig_speed import timed_functions  # noqa: E402

FUNCTIONS = {"log": jnp.log, "log1p": jnp.log1p, "expm1": jnp.expm1}


def inputs(name: str, size: int) -> dict[str, np.ndarray]:
    """``wide``: over the range where the function is finite; ``near 0``: where ``log1p``
    and ``expm1`` take their rational functions (``log`` near 1)."""
    rng = np.random.default_rng(0)
    if name == "log":
        wide, near = np.exp(rng.uniform(-80, 80, size)), rng.uniform(0.5, 2.0, size)
    elif name == "log1p":
        wide, near = np.exp(rng.uniform(-20, 80, size)), rng.uniform(-0.4, 0.4, size)
    else:
        wide, near = rng.uniform(-80, 80, size), rng.uniform(-0.5, 0.5, size)
    return {"wide": wide.astype(np.float32), "near 0": near.astype(np.float32)}


def main(size: int) -> None:
    timed_functions(FUNCTIONS, lambda name: inputs(name, size), "math-speed-")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description="jax.jit against rewriter.compile and rewriter.iree on f32 log, log1p "
        "and expm1 of a million elements: median ms per call."
    )
    parser.add_argument("--size", type=int, default=1_000_000, help="elements (%(default)s)")
    parser.add_argument("--markdown", action="store_true", help="write benchmarks/README.md")
    chosen = parser.parse_args()
    with figures("math_speed", chosen.markdown):
        main(chosen.size)
