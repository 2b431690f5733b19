"""Python signal handlers set for the length of a block, and the old ones put back.

Both ways the rewriter handles signals take this shape: ``streams`` turns SIGTERM and SIGHUP
into an exception while a command runs, ``temporary`` holds SIGINT, SIGTERM and SIGHUP
back while a temporary name is made. Handlers can be set in the main thread only; in
another thread nothing changes (and no signal is delivered there by Python).
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any


@contextmanager
def handlers_set(
    numbers: Sequence[int], handler: Callable[[int, Any], None], *, keep: Callable[[Any], bool]
) -> Iterator[dict[int, Any]]:
    """``handler`` for each signal of ``numbers`` whose current handler ``keep`` does not
    keep, for the block; yields the replaced handlers by signal, and sets them back."""
    previous: dict[int, Any] = {}
    try:
        for number in numbers:
            if not keep(signal.getsignal(number)):
                previous[number] = signal.signal(number, handler)
    except ValueError:  # not the main thread: signals stay as they are
        pass
    try:
        yield previous
    finally:
        for number, old in previous.items():
            signal.signal(number, old)
