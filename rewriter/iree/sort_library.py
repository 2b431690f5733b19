"""The function that serves the sorts of the IREE path inside dispatches
(``sort_dispatches.py``).

``abi/iree_sorts.c`` and the stable sort it calls, ``abi/sort_calls.c`` (the compiled
path's), are built once per machine into one shared object (the cache folder keeps it,
named by a hash of both sources and the compiler) and loaded here; ``load`` offers its
function to the executable plugin while IREE loads a module, under the name
``rw_iree_sort_*``: every executable import of that prefix. Without a compiler there is
nothing to offer (``functions`` is empty) and the sorts stay imports served in Python.
"""

from __future__ import annotations

import ctypes
import hashlib
from pathlib import Path

from ..abi import bridge_dir
from ..compile.toolchain import ToolchainError, link_shared_object
from .cached_libraries import cached_library, loaded_once
from .sort_dispatches import IMPORT_PREFIX

SOURCE_NAME = "iree_sorts.c"
SORT_SOURCE = "sort_calls.c"  # linked with it; its entry named apart from the compiled path's
SORT_ENTRY = "rw_iree_sort_table"
FUNCTION = "rw_iree_sort"  # abi/iree_sorts.c's, serving every import IMPORT_PREFIX + S


def library_path() -> Path:
    """The shared object, built into the cache folder the first time."""
    merge_sort = Path(bridge_dir()) / SORT_SOURCE

    def link(source: Path, output: Path) -> None:
        link_shared_object(
            [source, merge_sort],
            output,
            [],
            optimize="-O2",
            flags=[f"-DRW_SORT={SORT_ENTRY}"],
            exports=(FUNCTION,),
            only_exports=True,
        )

    identity = hashlib.sha256(merge_sort.read_bytes()).hexdigest()
    return cached_library(SOURCE_NAME, "iree-sorts", "rewriter_iree_sorts", link, (identity,))


def _load() -> dict[str, int]:
    try:
        loaded = ctypes.CDLL(str(library_path()))
    except (ToolchainError, OSError, RuntimeError):
        return {}
    address = ctypes.cast(getattr(loaded, FUNCTION), ctypes.c_void_p).value or 0
    return {IMPORT_PREFIX + "*": address}


# Executable import (`IMPORT_PREFIX*`: the plugin's name of every import of that
# prefix) -> address of the function serving it; empty when no compiler is found (then
# the sorts stay imports).
functions = loaded_once(_load)
