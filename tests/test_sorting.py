"""Programs that sort (and others that IREE computes in an operand's memory) on both paths.

Each program is exported with jax, rewritten, run on the compiled path (``rewriter.compile``)
and on the IREE path (``--abi iree``, ``rewriter.iree.load``), and compared with
``jax.jit`` exactly: sorting moves values, it computes none. tests/test_op_coverage.py
holds the rows of docs/paths.md; this file holds what those rows do not show.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rewriter
from rewriter.compile import compile_module
from rewriter.compile import load as load_compiled
from rewriter.iree import load as load_iree

pytestmark = [pytest.mark.toolchain, pytest.mark.iree, pytest.mark.jax, pytest.mark.slow]


def aligned(array: np.ndarray) -> np.ndarray:
    """A copy of ``array`` at a 64-byte aligned address: the IREE path hands such an array
    to IREE as a buffer view on its own memory, without a copy."""
    raw = np.empty(array.nbytes + 64, np.uint8)
    start = -raw.ctypes.data % 64
    copy = raw[start : start + array.nbytes].view(array.dtype).reshape(array.shape)
    copy[...] = array
    return copy


def compiled(text: str, work: Path) -> Callable[..., object]:
    compile_module(rewriter.rewrite(text).text, work / "libprogram.so")
    return load_compiled(work / "libprogram.so").main


def on_iree(text: str, work: Path) -> Callable[..., object]:
    module = work / "program.iree.mlir"
    module.write_text(rewriter.rewrite(text, abi="iree").text)
    return load_iree(module, imports={}).main


PATHS = {"compile": compiled, "iree": on_iree}


def assert_same(got, expected) -> None:
    """Bit for bit: same dtypes, shapes and bytes (-0.0 is not 0.0, NaNs keep their sign)."""
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(got) == len(expected)
    for one, other in zip(got, expected, strict=True):
        other = np.asarray(other)
        assert one.dtype == other.dtype and one.shape == other.shape
        assert one.tobytes() == other.tobytes(), (one, other)


# Programs whose op IREE computes in the memory of its operand, an argument here.
IN_PLACE = {
    "sort": lambda x: jnp.sort(x),
    "argsort": lambda x: jnp.argsort(x),
    "scatter": lambda x: x.at[jnp.array([1, 5])].add(1.0),
    "dynamic_update_slice": lambda x: jax.lax.dynamic_update_slice(
        x, jnp.ones(4, jnp.float32), (jnp.int32(5),)
    ),
}


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_the_program_only_reads_its_arguments(name: str, path: str, tmp_path: Path):
    """The arguments are the caller's arrays: a sort, a scatter or an update of a slice
    works on a copy, on the compiled path (the entries' arguments are read-only for
    bufferization) and on IREE, which would compute them in the caller's memory when it
    is 64-byte aligned (``rewriter.iree.build.IN_PLACE_OPS``)."""
    function = IN_PLACE[name]
    x = np.random.default_rng(0).permutation(512).astype(np.float32)  # no ties
    text = rewriter.export(function, x).text
    expected = jax.jit(function)(x)
    run = PATHS[path](text, tmp_path)
    for _ in range(3):
        argument = aligned(x)
        assert_same(run(argument), expected)
        np.testing.assert_array_equal(argument, x)
