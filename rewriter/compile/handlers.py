"""XLA FFI handlers for a module compiled with ``--ffi-bridge``: registered at load time.

Handlers come as JAX takes them (``jax.ffi.register_ffi_target``): PyCapsules holding a
handler's address, ``{"execute": capsule}`` bundles, or plain addresses. ``"jaxlib"``
stands for jaxlib's own CPU LAPACK handlers, which run in this process only (they call
SciPy's LAPACK through pointers jaxlib fetches at ``_lapack.initialize()``).
"""

from __future__ import annotations

import ctypes
from collections.abc import Mapping
from pathlib import Path

# The host API of abi/xla_ffi_bridge.h, as cffi declarations.
BRIDGE_CDEF = """
int rw_ffi_register_handler(const char *target, void *handler);
int rw_ffi_handler_version(const char *target);
const char *rw_ffi_required_target(int64_t index);
const char *rw_ffi_last_error(void);
void rw_ffi_clear_error(void);
"""


class HandlerError(RuntimeError):
    """An XLA FFI handler called by a compiled module returned an error."""


def jaxlib_handlers() -> dict[str, object]:
    """jaxlib's CPU LAPACK handlers (``lapack_spotrf_ffi``, ...) by target, as capsules."""
    from jaxlib.cpu import _lapack

    _lapack.initialize()
    return dict(_lapack.registrations())


def handler_address(handler: object) -> int:
    """The address of an XLA FFI handler given as a capsule, a bundle or an address."""
    if isinstance(handler, Mapping):
        extra = sorted(set(handler) - {"execute"})
        if extra:
            raise ValueError(
                f"only the execute stage runs in the FFI bridge; got a handler bundle with "
                f"{', '.join(extra)}"
            )
        return handler_address(handler["execute"])
    if isinstance(handler, int):
        return handler
    if type(handler).__name__ == "PyCapsule":
        py_object = ctypes.py_object(handler)
        name = ctypes.pythonapi.PyCapsule_GetName
        name.restype, name.argtypes = ctypes.c_char_p, [ctypes.py_object]
        pointer = ctypes.pythonapi.PyCapsule_GetPointer
        pointer.restype, pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        address = pointer(py_object, name(py_object))
        if not address:
            raise ValueError("the capsule holds no pointer")
        return address
    if isinstance(handler, ctypes._CFuncPtr):  # a function of a ctypes.CDLL
        return ctypes.cast(handler, ctypes.c_void_p).value or 0
    raise TypeError(
        f"an XLA FFI handler is a PyCapsule, a {{'execute': capsule}} bundle, a ctypes "
        f"function or an address, not {type(handler).__name__}"
    )


def register_handlers(
    ffi, library, path: str | Path, handlers: Mapping[str, object] | str | None, keep_alive
) -> bool:
    """Register ``handlers`` with the module's bridge; False if it has none.

    Raises LoadError for a module without a bridge given handlers, a handler that fails
    XLA's metadata probe, and every target the module calls that has no handler.
    """
    from .loader import LoadError

    try:
        required_target = library.rw_ffi_required_target
    except AttributeError:
        if handlers:
            raise LoadError(
                f"{path} was not compiled with --ffi-bridge; it calls no XLA FFI handlers"
            ) from None
        return False
    given = jaxlib_handlers() if handlers == "jaxlib" else dict(handlers or {})
    if isinstance(handlers, str) and handlers != "jaxlib":
        raise ValueError(
            f"ffi_handlers is a mapping of targets to handlers or 'jaxlib', not {handlers!r}"
        )
    keep_alive.extend(given.values())  # a capsule's library must stay loaded
    for target, handler in given.items():
        address = handler_address(handler)
        if library.rw_ffi_register_handler(target.encode(), ffi.cast("void *", address)) != 0:
            message = ffi.string(library.rw_ffi_last_error()).decode("utf-8", "replace")
            library.rw_ffi_clear_error()
            raise LoadError(f"cannot register the XLA FFI handler for '{target}': {message}")
    missing = []
    index = 0
    while (target := required_target(index)) != ffi.NULL:
        name = ffi.string(target).decode("utf-8", "replace")
        if library.rw_ffi_handler_version(target) < 0:
            missing.append(name)
        index += 1
    if missing:
        raise LoadError(
            f"{path} calls the XLA FFI target{'s' if len(missing) > 1 else ''} "
            f"{', '.join(missing)} but no handler was given for "
            f"{'them' if len(missing) > 1 else 'it'}: load(..., ffi_handlers={{target: "
            "capsule}}), or ffi_handlers='jaxlib' for jaxlib's LAPACK kernels"
        )
    return True
