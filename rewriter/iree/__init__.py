"""IREE's execution model for modules rewritten with ``--abi iree``.

IREE cannot call a C symbol from host code: an extern ``@ffi.S`` becomes an import of the
VM module ``ffi``, provided at run time. ``load`` compiles such a module with
``iree-compile`` (or opens a ``.vmfb`` made by ``compile_module``), provides the imports
from Python callables, C kernels or XLA FFI handlers, and returns the public functions on
numpy arrays::

    from rewriter.iree import load

    model = load("model.iree.mlir", imports={"rms_norm": my_rms_norm})
    y = model.main(x)

Needs ``iree-base-compiler`` and ``iree-base-runtime`` (3.13.0): ``pip install
'stablehlo-ffi-rewriter[iree]'``. The names below load on first use (module
``__getattr__``); one whose module needs a package that is not installed raises
``rewriter.compile.MissingDependency``, naming that extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..compile.extras import lazy_names

if TYPE_CHECKING:
    from .build import COMPILE_FLAGS, BuildError, compile_module, read_vmfb, target_flags
    from .kernels import KernelSignatureError
    from .runtime import IreeModule, LoadError, load
    from .signatures import ImportSignature, SignatureError, from_module_text

# Each public name and the module that defines it.
_HOMES = {
    "COMPILE_FLAGS": ".build",
    "BuildError": ".build",
    "ImportSignature": ".signatures",
    "IreeModule": ".runtime",
    "KernelSignatureError": ".kernels",
    "LoadError": "..compile.load_errors",
    "SignatureError": ".signatures",
    "compile_module": ".build",
    "from_module_text": ".signatures",
    "load": ".runtime",
    "read_vmfb": ".build",
    "target_flags": ".build",
}

__all__ = [
    "BuildError",
    "COMPILE_FLAGS",
    "ImportSignature",
    "IreeModule",
    "KernelSignatureError",
    "LoadError",
    "SignatureError",
    "compile_module",
    "from_module_text",
    "load",
    "read_vmfb",
    "target_flags",
]


__getattr__, __dir__ = lazy_names(__name__, _HOMES, "iree")
