"""The compiled path: a rewritten module -> shared object -> Python callables on numpy arrays.

``python -m rewriter.compile REWRITTEN.mlir -o libmodel.so [--link LIB ...] [--ffi-bridge]
[--keep-temps DIR] [--blas auto|none|PATH] [--target-cpu CPU]``

The names below load on first use (module ``__getattr__``): ``python -m rewriter.compile``
and ``rewriter.iree`` import what they need, and a name whose module needs a package that
is not installed (numpy, cffi, ...) raises ``MissingDependency``, naming the extra to
install (``pip install 'stablehlo-ffi-rewriter[compile]'``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .extras import needs

if TYPE_CHECKING:
    from .build import compile_module
    from .entries import ENTRY_PREFIX, Entry, TensorSpec
    from .extras import MissingDependency
    from .handlers import HandlerError, jaxlib_handlers
    from .loader import CompiledModule, LoadError, load
    from .toolchain import ToolchainError

# Each public name and the module that defines it.
_HOMES = {
    "ENTRY_PREFIX": ".entries",
    "CompiledModule": ".loader",
    "Entry": ".entries",
    "HandlerError": ".handlers",
    "LoadError": ".load_errors",
    "MissingDependency": ".extras",
    "TensorSpec": ".entries",
    "ToolchainError": ".toolchain",
    "compile_module": ".build",
    "jaxlib_handlers": ".handlers",
    "load": ".loader",
}

__all__ = [
    "CompiledModule",
    "ENTRY_PREFIX",
    "Entry",
    "HandlerError",
    "LoadError",
    "MissingDependency",
    "TensorSpec",
    "ToolchainError",
    "compile_module",
    "jaxlib_handlers",
    "load",
]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'rewriter.compile' has no attribute {name!r}")
    with needs("compile"):
        value = getattr(importlib.import_module(_HOMES[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES))
