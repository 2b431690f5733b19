"""Where the C side of the contract lives: ``include_dir()`` for ``#include "rewriter/memref.h"``.

Like ``jax.ffi.include_dir()``: pass it to the compiler (``-I``) when building a kernel
library. The headers come from the repository's ``abi/`` folder, installed inside the wheel.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def include_dir() -> str:
    """The folder that holds ``rewriter/memref.h``."""
    try:
        header = resources.files("rewriter.abi_files") / "include" / "rewriter" / "memref.h"
        if header.is_file():
            return str(Path(str(header)).parent.parent)
    except ModuleNotFoundError:
        pass
    return str(Path(__file__).resolve().parent.parent / "abi" / "include")


def bridge_dir() -> str:
    """The folder that holds ``xla_ffi_bridge.h`` and ``xla_ffi_bridge.c`` (the XLA FFI host
    that ``python -m rewriter.compile --ffi-bridge`` compiles into a module) and
    ``blas_calls.c`` (the BLAS calls of compiled matrix products)."""
    try:
        source = resources.files("rewriter.abi_files") / "xla_ffi_bridge.c"
        if source.is_file():
            return str(Path(str(source)).parent)
    except ModuleNotFoundError:
        pass
    return str(Path(__file__).resolve().parent.parent / "abi")
