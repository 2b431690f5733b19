"""The real tools that judge our output: jaxlib's C++ MLIR parser/verifier and IREE's tools."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile


def jaxlib_verify(text: str) -> None:
    """Parse and verify ``text`` with jaxlib's MLIR (all dialects jax registers)."""
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir

    with mlir.make_ir_context() as context:
        module = ir.Module.parse(text, context=context)
        if not module.operation.verify():
            raise AssertionError("jaxlib: module does not verify")


@functools.cache
def iree_tool(name: str) -> str:
    """Path of an IREE tool (iree-opt, iree-compile) from the iree-base-compiler wheel."""
    found = shutil.which(name)
    if found:
        return found
    candidate = os.path.join(os.path.dirname(sys.executable), name)
    if os.path.exists(candidate):
        return candidate
    raise RuntimeError(f"{name} not found: pip install iree-base-compiler")


def iree_opt() -> str:
    """Path of iree-opt from the iree-base-compiler wheel."""
    return iree_tool("iree-opt")


def iree_input_pipeline(text: str) -> subprocess.CompletedProcess[str]:
    """Run IREE's StableHLO input pipeline on ``text``; returns the finished process."""
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as handle:
        handle.write(text)
        path = handle.name
    try:
        return subprocess.run(
            [iree_opt(), "--iree-stablehlo-input-transformation-pipeline", path, "-o", os.devnull],
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        os.unlink(path)
