"""rewriter: turn XLA FFI custom calls in exported StableHLO into calls to extern C functions."""

from .api import (
    Result,
    analyze,
    decode,
    emit_ffi_adapters,
    emit_header,
    export,
    rewrite,
    validate,
)
from .diagnostics import Diagnostic, RewriteError
from .jax_inputs import InputError
from .plan import CallReport

__all__ = [
    "CallReport",
    "Diagnostic",
    "InputError",
    "Result",
    "RewriteError",
    "analyze",
    "decode",
    "emit_ffi_adapters",
    "emit_header",
    "export",
    "rewrite",
    "validate",
]
__version__ = "0.1.0"
