"""XLA FFI handlers for a module compiled with ``--ffi-bridge``: registered at load time.

Handlers come as JAX takes them (``jax.ffi.register_ffi_target``): PyCapsules holding a
handler's address, ``{"execute": capsule}`` bundles, or plain addresses. ``"jaxlib"``
stands for jaxlib's own CPU LAPACK handlers, which run in this process only (they call
SciPy's LAPACK through pointers jaxlib fetches at ``_lapack.initialize()``).
"""

from __future__ import annotations

import _ctypes
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
    if isinstance(handler, _ctypes.CFuncPtr):  # a function of a ctypes.CDLL
        return ctypes.cast(handler, ctypes.c_void_p).value or 0
    raise TypeError(
        f"an XLA FFI handler is a PyCapsule, a {{'execute': capsule}} bundle, a ctypes "
        f"function or an address, not {type(handler).__name__}"
    )


class Bridge:
    """The host API of one loaded library that holds the bridge (abi/xla_ffi_bridge.h),
    declared with ``BRIDGE_CDEF`` in ``ffi``."""

    def __init__(self, ffi, library):
        self.ffi = ffi
        self.library = library

    def take_error(self) -> str | None:
        """This thread's first error since the last call, now cleared; None if none."""
        message = self.library.rw_ffi_last_error()
        if message == self.ffi.NULL:
            return None
        text = self.ffi.string(message).decode("utf-8", "replace")
        self.library.rw_ffi_clear_error()
        return text

    def register(self, target: str, handler: object) -> None:
        """Register ``handler`` (see ``handler_address``) for ``target``; a ValueError says
        why the bridge refused it (its metadata probe)."""
        address = self.ffi.cast("void *", handler_address(handler))
        if self.library.rw_ffi_register_handler(target.encode(), address) != 0:
            raise ValueError(
                f"cannot register the XLA FFI handler for '{target}': {self.take_error()}"
            )

    def targets_without_handler(self) -> list[str]:
        """The targets the adapters call that have no handler yet."""
        missing = []
        index = 0
        while (target := self.library.rw_ffi_required_target(index)) != self.ffi.NULL:
            if self.library.rw_ffi_handler_version(target) < 0:
                missing.append(self.ffi.string(target).decode("utf-8", "replace"))
            index += 1
        return missing


def register_handlers(
    ffi, library, path: str | Path, handlers: Mapping[str, object] | str | None, keep_alive
) -> Bridge | None:
    """Register ``handlers`` with the module's bridge; None if the module has none.

    Raises LoadError for a module without a bridge given handlers, a handler that fails
    XLA's metadata probe, and every target the module calls that has no handler.
    """
    from .loader import LoadError

    try:
        library.rw_ffi_required_target  # noqa: B018 (present only with --ffi-bridge)
    except AttributeError:
        if handlers:
            raise LoadError(
                f"{path} was not compiled with --ffi-bridge; it calls no XLA FFI handlers"
            ) from None
        return None
    if isinstance(handlers, str) and handlers != "jaxlib":
        raise ValueError(
            f"ffi_handlers is a mapping of targets to handlers or 'jaxlib', not {handlers!r}"
        )
    given = jaxlib_handlers() if isinstance(handlers, str) else dict(handlers or {})
    keep_alive.extend(given.values())  # a capsule's library must stay loaded
    bridge = Bridge(ffi, library)
    for target, handler in given.items():
        try:
            bridge.register(target, handler)
        except ValueError as error:
            raise LoadError(str(error)) from None
    missing = bridge.targets_without_handler()
    if missing:
        raise LoadError(
            f"{path} calls the XLA FFI target{'s' if len(missing) > 1 else ''} "
            f"{', '.join(missing)} but no handler was given for "
            f"{'them' if len(missing) > 1 else 'it'}: load(..., ffi_handlers={{target: "
            "capsule}}), or ffi_handlers='jaxlib' for jaxlib's LAPACK kernels"
        )
    return bridge
