"""The compiled path: a rewritten module -> shared object -> Python callables on numpy arrays.

``python -m rewriter.compile REWRITTEN.mlir -o libmodel.so [--link LIB ...] [--ffi-bridge]
[--keep-temps DIR] [--blas auto|none|PATH] [--target-cpu CPU]``
"""

from .build import compile_module
from .entries import ENTRY_PREFIX, Entry, TensorSpec
from .handlers import HandlerError, jaxlib_handlers
from .loader import CompiledModule, LoadError, load
from .toolchain import ToolchainError

__all__ = [
    "ENTRY_PREFIX",
    "CompiledModule",
    "Entry",
    "HandlerError",
    "LoadError",
    "TensorSpec",
    "ToolchainError",
    "compile_module",
    "jaxlib_handlers",
    "load",
]
