"""rewriter: turn XLA FFI custom calls in exported StableHLO into calls to extern C functions.

The names below load on first use (module ``__getattr__``), so ``python -m rewriter`` parses
its arguments before it imports lark or the planner.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .api import (
        Result,
        analyze,
        decode,
        emit_ffi_adapters,
        emit_header,
        export,
        plain_path,
        rewrite,
        validate,
    )
    from .inputs.jax_inputs import InputError
    from .plan.planner import CallReport
    from .plan.status import Status
    from .syntax.diagnostics import Diagnostic, RewriteError, Severity

# Each public name and the module that defines it.
_HOMES = {
    "CallReport": ".plan.planner",
    "Diagnostic": ".syntax.diagnostics",
    "InputError": ".inputs.jax_inputs",
    "Result": ".api",
    "RewriteError": ".syntax.diagnostics",
    "Severity": ".syntax.diagnostics",
    "Status": ".plan.status",
    "analyze": ".api",
    "decode": ".api",
    "emit_ffi_adapters": ".api",
    "emit_header": ".api",
    "export": ".api",
    "plain_path": ".api",
    "rewrite": ".api",
    "validate": ".api",
}

__all__ = [
    "CallReport",
    "Diagnostic",
    "InputError",
    "Result",
    "RewriteError",
    "Severity",
    "Status",
    "analyze",
    "decode",
    "emit_ffi_adapters",
    "emit_header",
    "export",
    "plain_path",
    "rewrite",
    "validate",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'rewriter' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES))
