"""One jax function on either runner, and how far a result is from an exact one in ulp:
what the accuracy tests of math ops share (test_expm1_log1p.py, test_f32_in_f64.py)."""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np
from mlir_tools import LLVM_TOOLS, require_tool

import rewriter

RUNNERS = ("iree", "compile")


def run_on(runner: str, function, arguments: list[np.ndarray], folder: Path):
    """``function(*arguments)`` exported with jax, rewritten and run on ``runner``."""
    with jax.enable_x64(True):
        text = rewriter.export(function, *arguments).text
    return run_text_on(runner, text, arguments, folder)


def run_text_on(runner: str, text: str, arguments: list[np.ndarray], folder: Path):
    """The exported module ``text`` rewritten and run on ``runner`` with ``arguments``."""
    if runner == "iree":
        from rewriter.iree import load

        path = folder / "program.iree.mlir"
        path.write_text(rewriter.rewrite(text, abi="iree").text)
        return load(path, imports={}).main(*arguments)
    from rewriter.compile import compile_module
    from rewriter.compile import load as load_library

    for tool in LLVM_TOOLS:
        require_tool(tool)
    library = folder / "functions.so"
    compile_module(rewriter.rewrite(text).text, library, blas=None)
    return load_library(library).main(*arguments)


def ulps_off(got: np.ndarray, exact: np.ndarray, dtype) -> np.ndarray:
    """How many ulp of ``dtype`` each of ``got`` is from ``exact`` (long double), where
    ``exact`` rounds to a finite normal ``dtype`` number (0 elsewhere)."""
    with np.errstate(over="ignore"):
        nearest = exact.astype(dtype)  # inf above dtype's largest
    normal = np.isfinite(nearest) & (np.abs(nearest) >= np.finfo(dtype).tiny)
    spacing = np.spacing(np.abs(nearest[normal])).astype(np.longdouble)
    ulps = np.zeros(got.shape, dtype=np.longdouble)
    ulps[normal] = np.abs(np.asarray(got)[normal].astype(np.longdouble) - exact[normal]) / spacing
    return ulps


def as_read_by(runner: str, x: np.ndarray) -> np.ndarray:
    """``x`` as ``runner``'s arithmetic reads it: both runners run in XLA:CPU's mode, which
    takes subnormal numbers as zeros of their sign (``abi/rewriter_float_mode.h``; IREE's
    workers flush too)."""
    del runner  # the same on both
    with np.errstate(invalid="ignore"):
        return np.where(np.abs(x) < np.finfo(x.dtype).tiny, x.dtype.type(0) * x, x)
