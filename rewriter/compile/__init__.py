"""The compiled path: a rewritten module -> shared object -> Python callables on numpy arrays.

``python -m rewriter.compile REWRITTEN.mlir -o libmodel.so|libmodel.a [--header model.h]
[--prefix P] [--include-dir DIR] [--link LIB ...] [--ffi-bridge] [--keep-temps DIR]
[--blas auto|none|PATH] [--target-cpu CPU] [--target-triple TRIPLE] [--no-cache]``

The names below load on first use (module ``__getattr__``): ``python -m rewriter.compile``
and ``rewriter.iree`` import what they need, and a name whose module needs a package that
is not installed (numpy, cffi, ...) raises ``MissingDependency``, naming the extra to
install (``pip install 'stablehlo-ffi-rewriter[compile]'``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .extras import lazy_names

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


__getattr__, __dir__ = lazy_names(__name__, _HOMES, "compile")
