"""XLA FFI handlers for a module compiled with ``--ffi-bridge``: what a handler is.

Handlers come as JAX takes them (``jax.ffi.register_ffi_target``): PyCapsules holding a
handler's address, ``{"execute": capsule}`` bundles, functions of a ``ctypes.CDLL`` or
plain addresses. ``"jaxlib"`` stands for jaxlib's own CPU LAPACK handlers, which run in
this process only (they call SciPy's LAPACK through pointers jaxlib fetches at
``_lapack.initialize()``). The bridge that registers and calls them is
``rewriter.compile.bridge``; ``rewriter.iree`` takes the same handlers for its imports.

What can be told apart is refused here, before any C call: a Python callable that is no
C function, a bundle without ``execute``, an address of 0, a NULL capsule. A C function
that is not an XLA FFI handler cannot be: a capsule and an address carry no type, and
the bridge's first call of a handler (XLA's metadata probe) is then undefined behaviour,
typically a crash.
"""

from __future__ import annotations

import _ctypes
import ctypes
from collections.abc import Iterable, Mapping

from .extras import needs

# The largest address a pointer holds.
_ADDRESS_LIMIT = 1 << (8 * ctypes.sizeof(ctypes.c_void_p))


class HandlerError(RuntimeError):
    """An XLA FFI handler called by a compiled module returned an error."""


def jaxlib_handlers() -> dict[str, object]:
    """jaxlib's CPU LAPACK handlers (``lapack_spotrf_ffi``, ...) by target, as capsules."""
    with needs("jax"):
        from jaxlib.cpu import _lapack

    _lapack.initialize()
    return dict(_lapack.registrations())


def is_ffi_handler(implementation: object) -> bool:
    """Whether ``implementation`` is given as an XLA FFI handler: a PyCapsule, a bundle
    (any mapping), a ctypes function or an address (``handler_address`` checks it)."""
    if isinstance(implementation, bool):
        return False
    return isinstance(implementation, (Mapping, int, _ctypes.CFuncPtr)) or _is_capsule(
        implementation
    )


def handler_address(handler: object) -> int:
    """The address of an XLA FFI handler given as a capsule, a bundle, a ctypes function
    or an address; TypeError or ValueError for what cannot be one."""
    if isinstance(handler, Mapping):
        if "execute" not in handler:
            keys = ", ".join(map(repr, handler)) or "none"
            raise TypeError(
                "an XLA FFI handler bundle is {'execute': handler}; this one has no "
                f"'execute' (keys: {keys})"
            )
        extra = sorted(map(str, set(handler) - {"execute"}))
        if extra:
            raise ValueError(
                f"only the execute stage runs in the FFI bridge; got a handler bundle with "
                f"{', '.join(extra)}"
            )
        return handler_address(handler["execute"])
    return _code_address(_address(handler))


def _address(handler: object) -> int:
    """The address of a handler that is not a bundle (``handler_address``)."""
    if isinstance(handler, bool):
        raise TypeError("an XLA FFI handler is a C function, not a bool")
    if isinstance(handler, int):
        if handler == 0:
            raise ValueError("the address 0 is no XLA FFI handler")
        if not 0 < handler < _ADDRESS_LIMIT:
            raise ValueError(f"{handler} is no address")
        return handler
    if _is_capsule(handler):
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
        address = ctypes.cast(handler, ctypes.c_void_p).value
        if not address:
            raise ValueError("the ctypes function is a NULL pointer")
        return address
    if type(handler).__module__ == "_cffi_backend":
        raise TypeError(
            "a cffi function is no XLA FFI handler here (rewriter.iree takes one as a C "
            "kernel of the calling contract); give the handler as jax.ffi.pycapsule(...), a "
            "ctypes function or int(ffi.cast('uintptr_t', function))"
        )
    if callable(handler):
        raise TypeError(
            f"a Python callable ({type(handler).__name__}) is no XLA FFI handler: give the "
            "handler's C function, as jax.ffi.pycapsule(ctypes.CDLL(path).Symbol), the ctypes "
            "function itself or its address"
        )
    raise TypeError(
        f"an XLA FFI handler is a PyCapsule, a {{'execute': capsule}} bundle, a ctypes "
        f"function or an address, not {type(handler).__name__}"
    )


def _code_address(address: int) -> int:
    """``address``, when it points into executable memory of this process (or the process
    cannot tell: no ``/proc/self/maps``); a ValueError when it points anywhere else."""
    try:
        with open("/proc/self/maps", encoding="ascii", errors="replace") as maps:
            for line in maps:
                span, permissions = line.split(maxsplit=2)[:2]
                start, _, end = span.partition("-")
                if int(start, 16) <= address < int(end, 16):
                    if "x" in permissions:
                        return address
                    break
    except (OSError, ValueError):
        return address
    raise ValueError(f"{address:#x} is no XLA FFI handler: no code of this process is there")


def named_mapping(value: object, what: str, keys: str) -> Mapping[str, object]:
    """``value`` when it is a mapping with ``str`` keys (``what``: the argument's name,
    ``keys``: what its keys name); TypeError otherwise."""
    if not isinstance(value, Mapping):
        raise TypeError(f"{what} is a mapping of {keys} to handlers, not {type(value).__name__}")
    for key in value:
        if not isinstance(key, str):
            raise TypeError(f"{what} maps {keys} (str) to handlers, not {key!r}")
    return value


def _is_capsule(value: object) -> bool:
    return type(value).__name__ == "PyCapsule"


def missing_handlers_hint(missing: Iterable[str], jaxlib_given: bool, jaxlib_option: str) -> str:
    """A parenthesis for a "no handler for these targets" message: which of them jaxlib's
    CPU handlers serve (``jaxlib_option`` says how to ask for them) when they were not
    given, which they do not include when they were, and which targets are GPU kernels."""
    missing = list(missing)
    known = _jaxlib_targets()
    notes = []
    if jaxlib_given:
        absent = [t for t in missing if t not in known]
        if absent:
            notes.append(f"jaxlib's CPU handlers do not include {', '.join(absent)}")
    else:
        served = [t for t in missing if t in known]
        if served:
            notes.append(f"jaxlib's CPU handlers serve {', '.join(served)}: {jaxlib_option}")
    gpu = [t for t in missing if t.startswith(("cu", "hip", "rocm", "gpu"))]
    if gpu:
        notes.append(
            f"{', '.join(gpu)} {'are GPU kernels' if len(gpu) > 1 else 'is a GPU kernel'}: "
            "export the program for the CPU, jax.export.export(..., platforms=['cpu'])"
        )
    return f" ({'; '.join(notes)})" if notes else ""


def unused_keys_note(unused: Iterable[str]) -> str:
    """A note naming handlers given for targets the module does not call (a misspelling
    shows there), a few of them."""
    unused = sorted(unused)
    if not unused:
        return ""
    shown = ", ".join(unused[:5]) + (f" and {len(unused) - 5} more" if len(unused) > 5 else "")
    return f"; given for targets it does not call: {shown}"


def _jaxlib_targets() -> set[str]:
    """The targets jaxlib's CPU handlers serve; none when jaxlib cannot say."""
    try:
        from jaxlib.cpu import _lapack

        return set(_lapack.registrations())
    except Exception:  # only a hint: jaxlib missing, or another version's API
        return set()
