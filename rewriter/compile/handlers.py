"""XLA FFI handlers for a module compiled with ``--ffi-bridge``: what a handler is.

Handlers come as JAX takes them (``jax.ffi.register_ffi_target``): PyCapsules holding a
handler's address, ``{"execute": capsule}`` bundles, or plain addresses. ``"jaxlib"``
stands for jaxlib's own CPU LAPACK handlers, which run in this process only (they call
SciPy's LAPACK through pointers jaxlib fetches at ``_lapack.initialize()``). The bridge
that registers and calls them is ``rewriter.compile.bridge``.
"""

from __future__ import annotations

import _ctypes
import ctypes
from collections.abc import Mapping


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
