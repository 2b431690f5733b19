"""The compiled path: a rewritten module -> shared object -> Python callables on numpy arrays.

``python -m rewriter.compile REWRITTEN.mlir -o libmodel.so [--link LIB ...] [--keep-temps DIR]``
"""

from .build import compile_module
from .entries import ENTRY_PREFIX, Entry, TensorSpec
from .loader import CompiledModule, LoadError, load
from .toolchain import ToolchainError

__all__ = [
    "ENTRY_PREFIX",
    "CompiledModule",
    "Entry",
    "LoadError",
    "TensorSpec",
    "ToolchainError",
    "compile_module",
    "load",
]
