"""Scatters on both paths: updates whose window leaves the operand are dropped, as XLA drops
them (``rewriter/compile/scatter_bounds.py``), and the forms IREE's lowering refuses, batching
dimensions and wide windows in addressed dimensions, run (``scatter_forms.py``).

Each program runs in a child process: before the fix the compiled loops wrote at the index,
far past the result's buffer, which takes down the process that runs them.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import numpy as np
import pytest
from jax import lax
from mlir_tools import LLVM_TOOLS, require_tool

import rewriter

ROOT = Path(__file__).resolve().parents[1]
FAR = 10_000_000  # rows past the end: a write there leaves the process's memory

RUNNERS = {
    "compile": """
        from rewriter.compile import compile_module, load
        compile_module(rewriter.rewrite(text).text, work / "libprogram.so")
        results = load(work / "libprogram.so").main(*inputs)
    """,
    "iree": """
        from rewriter.iree import load
        (work / "program.mlir").write_text(rewriter.rewrite(text, abi="iree").text)
        results = load(work / "program.mlir", imports={}).main(*inputs)
    """,
}


def row_windows(x, indices, updates):
    """Windows of two rows added at ``indices``: 7 in an 8-row operand starts a window that
    is half out, which XLA drops whole."""
    numbers = lax.ScatterDimensionNumbers(
        update_window_dims=(1, 2), inserted_window_dims=(), scatter_dims_to_operand_dims=(0,)
    )
    return lax.scatter_add(x, indices[:, None], updates, numbers)


def elements(x, indices, updates):
    """Single elements at (row, column) pairs, either of which may be out."""
    return x.at[indices[:, 0], indices[:, 1]].max(updates)


def row_sets(x, indices, updates):
    return x.at[indices].set(updates)


def batched_update_slices(x, indices, updates):
    """``jax.vmap`` of ``dynamic_update_slice``: batching dimensions, and windows of two rows
    in the dimension the indices address (jax clamps the starts)."""

    def one(x, i, u):
        return lax.dynamic_update_slice(x, u, (i, 0))

    return jax.vmap(one)(x, indices, updates)


def batched_adds(x, indices, updates):
    """``jax.vmap`` of ``x.at[i].add``: batching dimensions and updates out of range."""
    return jax.vmap(lambda x, i, u: x.at[i].add(u))(x, indices, updates)


PROGRAMS = {
    "row_windows": (
        row_windows,
        [np.arange(24, dtype=np.int32).reshape(8, 3), np.array([0, 7, 6, FAR, -FAR, 3], np.int32)],
        (6, 2, 3),
    ),
    "elements": (
        elements,
        [np.zeros((8, 3), np.int32), np.array([[1, 2], [1, 3], [FAR, 0], [2, -FAR], [7, 0]])],
        (5,),
    ),
    "row_sets": (row_sets, [np.zeros((8, 3), np.int32), np.array([FAR, 2, 8, -9, 5])], (5, 3)),
    "batched_update_slices": (
        batched_update_slices,
        [np.arange(96, dtype=np.int32).reshape(4, 8, 3), np.array([0, 7, 3, -2])],
        (4, 2, 3),
    ),
    "batched_adds": (
        batched_adds,
        [
            np.arange(96, dtype=np.int32).reshape(4, 8, 3),
            np.array([[0, 1, 1, 9, -1], [FAR, 2, 7, 7, 0], [3, -FAR, 4, 5, 6], [0, 0, 0, 0, 8]]),
        ],
        (4, 5, 3),
    ),
}


@pytest.mark.slow
@pytest.mark.iree
@pytest.mark.parametrize("path", sorted(RUNNERS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_scatter_runs_as_jax_runs_it(name, path, tmp_path):
    if path == "compile":
        for tool in LLVM_TOOLS:
            require_tool(tool)
    function, (x, indices), update_shape = PROGRAMS[name]
    indices = indices.astype(np.int32)
    updates = np.arange(1, 1 + np.prod(update_shape), dtype=np.int32).reshape(update_shape)
    inputs = [x, indices, updates]
    expected = np.asarray(jax.jit(function)(*inputs))
    np.savez(tmp_path / "inputs.npz", *inputs)
    (tmp_path / "program.mlir").write_text(rewriter.export(function, *inputs).text)
    script = (
        textwrap.dedent(
            """
        import sys
        from pathlib import Path
        import numpy as np
        import rewriter
        work = Path(sys.argv[1])
        text = (work / "program.mlir").read_text()
        stored = np.load(work / "inputs.npz")
        inputs = [stored[f"arr_{i}"] for i in range(len(stored.files))]
        """
        )
        + textwrap.dedent(RUNNERS[path])
        + 'np.save(work / "got.npy", np.asarray(results))\n'
    )
    run = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], cwd=ROOT, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr[-3000:]
    got = np.load(tmp_path / "got.npy")
    np.testing.assert_array_equal(got, expected)
