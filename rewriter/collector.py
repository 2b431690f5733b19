"""Pausing Python's cyclic garbage collector over work that makes objects per call or line.

A rewrite, a validation, a JSON listing each make a few objects per call (or per line)
that form no cycles, and keep them alive to the end. With tens of thousands alive, the
collector walks them again and again: each full pass goes over all of them, and 4x the
calls cost more than 4x the time (measured: a rewrite spent 10 to 15 % of its time there,
and 4x the calls cost it 4.9x the time; a listing's entries 6.8x). Reference counting
still frees everything; the collector runs again, if it ran before, as soon as the work is
done.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic collector for the ``with`` block, and restart it if it ran."""
    running = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if running:
            gc.enable()
