"""Which exception a call of a loaded function raises when IREE's invocation fails.

IREE wraps whatever went wrong in a ``RuntimeError`` with its text. When an import's
implementation raised, its caller sees that exception instead; when an XLA FFI handler
called from a dispatch returned an error, a ``HandlerError`` with its message.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from ..compile.handlers import HandlerError


class CallErrors:
    """The exception an implementation raised, kept per thread (an import runs on the
    thread that called the function) and per call (a call started from inside an import
    has its own)."""

    def __init__(self) -> None:
        self._local = threading.local()

    def guard(self, serve: Callable[..., object]) -> Callable[..., object]:
        """``serve`` as a method of a ``PyModuleInterface`` export that records what it
        raises for the call that is running on this thread."""

        def method(state, *arguments):
            try:
                return serve(*arguments)
            except Exception as error:
                pending = getattr(self._local, "pending", None)
                if pending is not None and not pending:
                    pending.append(error)  # the first: later ones are its consequences
                raise

        return method

    def run(
        self,
        dispatch_error: Callable[[], str | None] | None,
        invocation: Callable[..., object],
        *arguments: object,
    ) -> object:
        """``invocation(*arguments)``, raising the implementation's exception rather than
        IREE's RuntimeError when one raised, or a ``HandlerError`` with the message that
        ``dispatch_error`` takes from the executable plugin."""
        local = self._local
        outer = getattr(local, "pending", None)
        pending: list[BaseException] = []
        local.pending = pending
        try:
            returned = invocation(*arguments)
        except RuntimeError:
            message = dispatch_error() if dispatch_error is not None else None
            if pending:
                raise pending[0] from None
            if message is not None:
                raise HandlerError(message) from None
            raise
        finally:
            local.pending = outer
        if pending:
            raise pending[0]
        return returned
