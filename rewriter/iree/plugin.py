"""The executable plugin (``abi/iree_ffi_plugin.c``) through which dispatches call XLA FFI
handlers, and whether a HAL driver of this process has it.

IREE resolves an executable's imports with the plugins its HAL driver was created with;
the driver reads them from the process-wide flag ``--executable_plugin`` when it is
created, and ``iree.runtime`` creates each driver once per process. So the plugin is
built (once per machine: the cache folder keeps it) and named in that flag before
``load`` creates its first driver; a driver created earlier, by other code, lacks it, and
``load`` serves the FFI calls of its modules as VM imports instead (``has_plugin``).
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
from collections.abc import Iterator
from pathlib import Path

from ..compile.toolchain import link_shared_object
from .cached_libraries import cached_library

SOURCE_NAME = "iree_ffi_plugin.c"
EXPORTS = (
    "iree_hal_executable_plugin_query",
    "rw_iree_plugin_register",
    "rw_iree_plugin_unregister",
    "rw_iree_plugin_loads",
    "rw_iree_plugin_resolved",
)

_lock = threading.RLock()
_library: ctypes.CDLL | None = None
_drivers: dict[str, bool] = {}  # driver name -> whether it was created with the plugin


def plugin_path() -> Path:
    """The plugin's shared object, built into the cache folder the first time (named by a
    hash of its source and of the compiler, so that a change builds a new one)."""

    def link(source: Path, output: Path) -> None:
        link_shared_object(
            [source], output, [], flags=["-pthread"], exports=EXPORTS, only_exports=True
        )

    return cached_library(SOURCE_NAME, "iree-plugin", "rewriter_ffi_plugin", link)


def library() -> ctypes.CDLL:
    """The plugin, loaded here (the same copy that IREE's drivers load) and named in
    ``--executable_plugin`` for the drivers created from now on."""
    global _library
    with _lock:
        if _library is None:
            import iree.runtime as rt

            path = plugin_path()
            loaded = ctypes.CDLL(str(path))
            loaded.rw_iree_plugin_register.argtypes = [
                ctypes.c_char_p,
                ctypes.c_void_p,
                ctypes.c_void_p,
            ]
            loaded.rw_iree_plugin_register.restype = ctypes.c_int
            loaded.rw_iree_plugin_unregister.argtypes = [ctypes.c_char_p]
            loaded.rw_iree_plugin_unregister.restype = None
            loaded.rw_iree_plugin_loads.restype = ctypes.c_int64
            loaded.rw_iree_plugin_resolved.restype = ctypes.c_int64
            rt.flags.parse_flags(f"--executable_plugin={path}")
            _library = loaded
        return _library


def config(driver: str):
    """``iree.runtime.Config(driver)``, the plugin named before its driver is created."""
    import iree.runtime as rt

    with _lock:
        loaded = library()
        before = loaded.rw_iree_plugin_loads()
        made = rt.Config(driver)
        if driver not in _drivers:
            _drivers[driver] = loaded.rw_iree_plugin_loads() > before
        return made


def has_plugin(driver: str) -> bool:
    """Whether the driver ``driver`` (made by ``config``) resolves imports with the plugin:
    False when something created it before ``load`` could name the plugin."""
    with _lock:
        return _drivers.get(driver, False)


def resolved_count() -> int:
    """How many executable imports the plugin has resolved in this process (for tests)."""
    return int(library().rw_iree_plugin_resolved())


@contextlib.contextmanager
def registered(functions: dict[str, int]) -> Iterator[None]:
    """``functions`` (import symbol -> address of its function) offered to the executables
    loaded inside the block; IREE keeps what it resolved, so they are forgotten after.
    Loads are serialised: two modules may use the same symbols for other handlers."""
    with _lock:
        loaded = library()
        try:
            for symbol, address in functions.items():
                if loaded.rw_iree_plugin_register(symbol.encode(), address, None) != 0:
                    raise MemoryError("out of memory registering an executable import")
            yield
        finally:
            for symbol in functions:
                loaded.rw_iree_plugin_unregister(symbol.encode())
