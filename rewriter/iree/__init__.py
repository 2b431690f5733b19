"""IREE's execution model for modules rewritten with ``--abi iree``.

IREE cannot call a C symbol from host code: an extern ``@ffi.S`` becomes an import of the
VM module ``ffi``, provided at run time. ``load`` compiles such a module with
``iree-compile`` (or opens a ``.vmfb`` made by ``compile_module``), provides the imports
from Python callables or C kernels, and returns the public functions on numpy arrays::

    from rewriter.iree import load

    model = load("model.iree.mlir", imports={"rms_norm": my_rms_norm})
    y = model.main(x)

Needs ``iree-base-compiler`` and ``iree-base-runtime`` (3.13.0).
"""

from .build import COMPILE_FLAGS, BuildError, compile_module, read_vmfb, target_flags
from .kernels import KernelSignatureError
from .runtime import IreeModule, LoadError, load
from .signatures import ImportSignature, SignatureError, from_module_text

__all__ = [
    "COMPILE_FLAGS",
    "BuildError",
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
