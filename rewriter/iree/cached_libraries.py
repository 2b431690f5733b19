"""Shared objects built from one C file of ``abi/`` once per machine, kept in the cache.

The IREE path loads three: the executable plugin (``plugin.py``), the BLAS products'
gemm functions (``blas_gemm.py``) and the sort of its dispatches (``sort_library.py``).
Each is named by a hash of its source and the headers
beside it, of the compiler and of whatever else it is built from (``identities``), so that
a change of any builds a new one; it is linked under a name of its own process and thread
and moved into place, which is atomic: two processes that build it at once both end with a
whole library.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable
from pathlib import Path

from ..abi import bridge_dir
from ..compile import cache as compile_cache
from ..compile.toolchain import LLVM_VERSION, find_tool


def loaded_once(load: Callable[[], dict[str, int]]) -> Callable[[], dict[str, int]]:
    """``load`` (which loads a library and returns the addresses of the functions it offers
    the plugin, by executable import) run once a process, under a lock, as two threads may
    ask at once; every call gets a copy of its answer."""
    lock = threading.Lock()
    loaded: list[dict[str, int]] = []

    def functions() -> dict[str, int]:
        with lock:
            if not loaded:
                loaded.append(load())
            return dict(loaded[0])

    return functions


def cached_library(
    source_name: str,
    folder_name: str,
    stem: str,
    link: Callable[[Path, Path], None],
    identities: tuple[object, ...] = (),
) -> Path:
    """The library built by ``link(source, output)`` from ``abi/SOURCE_NAME``, in the cache
    folder ``folder_name`` as ``STEM-HASH.so``; built the first time only."""
    source = Path(bridge_dir()) / source_name
    clang = find_tool(f"clang-{LLVM_VERSION}")
    digest = hashlib.sha256(source.read_bytes())
    for header in sorted(source.parent.glob("*.h")):  # what the source may include
        digest.update(header.read_bytes())
    digest.update(repr(compile_cache.file_identity(clang)).encode())
    if identities:
        digest.update(repr(identities).encode())
    folder = compile_cache.cache_dir() / folder_name
    library = folder / f"{stem}-{digest.hexdigest()[:16]}.so"
    if not library.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / f".{library.name}.{os.getpid()}.{threading.get_ident()}"
        try:
            link(source, partial)
            os.replace(partial, library)  # atomic: another process may build it too
        finally:
            partial.unlink(missing_ok=True)
    return library
