"""The functions that serve the BLAS products of the IREE path (``blas_products.py``).

``abi/iree_blas_products.c`` is built once per machine and BLAS (the cache folder keeps it,
named by a hash of the source, the compiler and the library) against the system OpenBLAS
that ``rewriter.compile.blas`` finds, and loaded here; ``load`` offers its two functions
to the executable plugin while IREE loads a module, under the executable imports
``rw_iree_blas_gemm_f32`` and ``_f64``. Without a BLAS or a compiler there is nothing to
offer (``functions`` is empty) and the products stay IREE's.

OpenBLAS's kernels are named for the CPU before it loads (``openblas_core.py``). IREE's
``local-task`` workers run the dispatches, and each gemm on one of them: OpenBLAS's own
threads would only compete with them (and spin while they wait), so OpenBLAS is told to
use one thread unless ``OPENBLAS_NUM_THREADS`` says otherwise (a setting of the whole
process: the system OpenBLAS of the compiled path's modules is the same library).
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

from ..compile import cache as compile_cache
from ..compile.blas import Blas, resolve_blas
from ..compile.openblas_core import name_openblas_core
from ..compile.toolchain import ToolchainError, link_shared_object
from .blas_products import ELEMENTS, IMPORT_PREFIX
from .cached_libraries import cached_library, loaded_once

SOURCE_NAME = "iree_blas_products.c"
SYMBOLS = tuple(IMPORT_PREFIX + element for element in ELEMENTS)
THREADS_VARIABLE = "OPENBLAS_NUM_THREADS"


def library_path(blas: Blas) -> Path:
    """The shared object for ``blas``, built into the cache folder the first time."""

    def link(source: Path, output: Path) -> None:
        link_shared_object(
            [source],
            output,
            [],
            optimize="-O2",
            flags=blas.compile_flags(),
            exports=SYMBOLS,
            arguments=blas.link_arguments(),
            only_exports=True,
        )

    identity = (blas, compile_cache.file_identity(str(blas.library)))
    return cached_library(SOURCE_NAME, "iree-blas", "rewriter_iree_blas", link, identity)


def _load() -> dict[str, int]:
    try:
        blas = resolve_blas("auto", remember=True)
        if blas is None:
            return {}
        path = library_path(blas)
    except (ToolchainError, OSError, RuntimeError):
        return {}
    name_openblas_core([blas.library.name])  # before OpenBLAS loads
    try:
        loaded = ctypes.CDLL(str(path))
    except OSError:
        return {}
    _one_thread(blas)
    return {
        symbol: ctypes.cast(getattr(loaded, symbol), ctypes.c_void_p).value or 0
        for symbol in SYMBOLS
    }


# Executable import -> address of the function serving it; empty when no BLAS or
# compiler is found (then nothing is routed to a BLAS).
functions = loaded_once(_load)


def _one_thread(blas: Blas) -> None:
    """One OpenBLAS thread, unless ``OPENBLAS_NUM_THREADS`` chose (see the module's doc)."""
    if os.environ.get(THREADS_VARIABLE):
        return
    try:
        library = ctypes.CDLL(str(blas.library))
    except OSError:
        return
    setter = getattr(library, "openblas_set_num_threads", None)
    if setter is not None:
        setter.argtypes = [ctypes.c_int]
        setter(1)


def elements() -> tuple[str, ...]:
    """The element types whose products can go to the BLAS in this process."""
    served = functions()
    return tuple(e for e in ELEMENTS if served.get(IMPORT_PREFIX + e))
