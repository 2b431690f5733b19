"""One MLIR context for the steps of a compile that use IREE's Python bindings.

Each step (``entries.prepare``, the sorts, the library calls, the loop order, ...) parses
the module text into a context of its own when called alone. Creating one registers and
loads every dialect IREE has, 16 ms a time, eight times a compile; inside ``shared()``
(what ``build.compile_module`` does) they all take the one context ``context()`` gives,
dropped when the compile ends. A context variable holds it, so that compiles in other
threads each have their own.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

_SHARED: ContextVar[Any] = ContextVar("rewriter_mlir_context", default=None)


def context() -> Any:
    """The shared context inside ``shared()``, else a new one (``iree.compiler.ir``)."""
    found = _SHARED.get()
    if found is not None:
        return found
    from iree.compiler import ir

    return ir.Context()


@contextlib.contextmanager
def shared() -> Iterator[None]:
    """Inside, ``context()`` is one context, made now."""
    from iree.compiler import ir

    token = _SHARED.set(ir.Context())
    try:
        yield
    finally:
        _SHARED.reset(token)
