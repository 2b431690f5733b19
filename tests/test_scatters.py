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
from rewriter.compile.input_fixes import fixed_text

ROOT = Path(__file__).resolve().parents[1]
FAR = 10_000_000  # rows past the end: a write there leaves the process's memory

PROLOGUE = """
import sys
from pathlib import Path
import numpy as np
import rewriter
work = Path(sys.argv[1])
text = (work / "program.mlir").read_text()
stored = np.load(work / "inputs.npz")
inputs = [stored[f"arr_{i}"] for i in range(len(stored.files))]
"""
EPILOGUE = 'np.save(work / "got.npy", np.asarray(results))\n'
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


def loop_sets(x, indices, updates):
    """A ``fori_loop`` setting one row per iteration at ``i - 2``: negative rows wrap, rows
    8 and 9 of an 8-row array are dropped (one update per scatter: masked in place)."""

    def body(i, x):
        return x.at[indices[i] - 2].set(updates[i] * i)

    return lax.fori_loop(0, indices.shape[0], body, x)


def float_combiners(x, indices, updates):
    """``.add``, ``.max``, ``.min``, ``.mul`` of floats at indices out of range, on rows that
    hold -0.0 and NaN: the identities an update out of range becomes leave them bit for bit."""
    return (
        x.at[indices].add(updates),
        x.at[indices].max(updates),
        x.at[indices].min(updates),
        x.at[indices].multiply(updates),
    )


def _counting(*shape: int) -> np.ndarray:
    return np.arange(1, 1 + int(np.prod(shape)), dtype=np.int32).reshape(shape)


SPECIAL = np.array([[-0.0, np.nan, 1.5], [0.0, -np.inf, -0.0], [np.inf, -2.5, np.nan]] * 3)

PROGRAMS = {
    "row_windows": (
        row_windows,
        [_counting(8, 3) - 1, np.array([0, 7, 6, FAR, -FAR, 3]), _counting(6, 2, 3)],
    ),
    "elements": (
        elements,
        [np.zeros((8, 3), np.int32), np.array([[1, 2], [1, 3], [FAR, 0], [2, -FAR], [7, 0]])]
        + [_counting(5)],
    ),
    "row_sets": (
        row_sets,
        [np.zeros((8, 3), np.int32), np.array([FAR, 2, 8, -9, 5]), _counting(5, 3)],
    ),
    "loop_sets": (loop_sets, [np.zeros((8, 3), np.int32), np.arange(12), _counting(12, 3)]),
    "float_combiners": (
        float_combiners,
        [
            SPECIAL.astype(np.float32),
            np.array([FAR, 9, -10, 2, 4, -FAR]),
            np.full((6, 3), -7.0, np.float32),
        ],
    ),
    "batched_update_slices": (
        batched_update_slices,
        [_counting(4, 8, 3) - 1, np.array([0, 7, 3, -2]), _counting(4, 2, 3)],
    ),
    "batched_adds": (
        batched_adds,
        [
            _counting(4, 8, 3) - 1,
            np.array([[0, 1, 1, 9, -1], [FAR, 2, 7, 7, 0], [3, -FAR, 4, 5, 6], [0, 0, 0, 0, 8]]),
            _counting(4, 5, 3),
        ],
    ),
}
# A scatter whose updates out of range are masked in place, with no copy of the operand
# (scatter_masks.py), or sent into padding (scatter_bounds.py: a .set of several updates).
IN_PLACE = {"row_windows", "elements", "loop_sets", "float_combiners", "batched_adds"}


@pytest.mark.slow
@pytest.mark.iree
@pytest.mark.parametrize("path", sorted(RUNNERS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_scatter_runs_as_jax_runs_it(name, path, tmp_path):
    if path == "compile":
        for tool in LLVM_TOOLS:
            require_tool(tool)
    function, (x, indices, updates) = PROGRAMS[name]
    inputs = [x, indices.astype(np.int32), updates]
    expected = np.asarray(jax.jit(function)(*inputs))
    np.savez(tmp_path / "inputs.npz", *inputs)
    (tmp_path / "program.mlir").write_text(rewriter.export(function, *inputs).text)
    script = PROLOGUE + textwrap.dedent(RUNNERS[path]) + EPILOGUE
    run = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], cwd=ROOT, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr[-3000:]
    got = np.load(tmp_path / "got.npy")
    assert (got.dtype, got.shape) == (expected.dtype, expected.shape)
    assert got.tobytes() == expected.tobytes(), (got, expected)  # -0.0 and NaN as they are


@pytest.mark.iree
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_updates_out_of_range_are_masked_in_place_where_they_can_be(name):
    """Padding copies the operand: in a loop (``loop_sets``) that is quadratic, where XLA
    updates in place. Only a ``.set`` of several updates takes it."""
    function, (x, indices, updates) = PROGRAMS[name]
    text = rewriter.rewrite(rewriter.export(function, x, indices.astype(np.int32), updates).text)
    fixed = fixed_text(text.text)
    assert "stablehlo.scatter" in fixed
    assert ("stablehlo.pad" not in fixed) == (name in IN_PLACE)
