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
