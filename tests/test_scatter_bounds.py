"""Scatter updates whose window leaves the operand are dropped on both paths, as XLA drops
them (``rewriter/compile/scatter_bounds.py``).

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


PROGRAMS = {
    "elements": (
        elements,
        [np.zeros((8, 3), np.int32), np.array([[1, 2], [1, 3], [FAR, 0], [2, -FAR], [7, 0]])],
        (5,),
    ),
    "row_sets": (row_sets, [np.zeros((8, 3), np.int32), np.array([FAR, 2, 8, -9, 5])], (5, 3)),
}


@pytest.mark.slow
@pytest.mark.iree
@pytest.mark.parametrize("path", sorted(RUNNERS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_out_of_range_updates_are_dropped_as_jax_drops_them(name, path, tmp_path):
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
