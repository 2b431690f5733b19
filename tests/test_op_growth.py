"""What the compiled path makes of ops whose time grew faster than XLA's with their size
(benchmarks/op_complexity.py, issue 36): structural checks of the bufferized module, not
timings."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rewriter.compile import compile_module, load


def _bufferized(folder: Path) -> str:
    """The module after bufferization and the library calls, from a compile's kept stages."""
    (stage,) = folder.glob("*-library-calls.mlir")
    return stage.read_text(encoding="utf-8")


@pytest.mark.toolchain
@pytest.mark.jax
def test_a_gather_of_random_indices_is_one_loop_with_its_index_arithmetic(tmp_path: Path):
    """``x[i] + v``: jax wraps negative indices, makes ``i`` N x 1, and the rewrite clamps
    it (gather_bounds.py). Unit dimensions folded, the index arithmetic, the gather and
    the add fuse into one loop that writes the result alone; the reshapes between N and
    N x 1 used to keep them three loops, each writing N elements."""
    import rewriter

    rng = np.random.default_rng(0)
    x = rng.normal(size=1000).astype(np.float32)
    i = rng.integers(-1000, 1000, 1000).astype(np.int32)
    v = rng.normal(size=1000).astype(np.float32)
    text = rewriter.export(lambda x, i, v: x[i] + v, x, i, v).text
    temps = tmp_path / "temps"
    compile_module(rewriter.rewrite(text).text, tmp_path / "lib.so", keep_temps=temps)
    bufferized = _bufferized(temps)
    assert bufferized.count("memref.alloc(") == 1, bufferized
    assert bufferized.count("linalg.generic") == 1, bufferized
    np.testing.assert_array_equal(load(tmp_path / "lib.so").main(x, i, v), x[i] + v)
