"""glibc's heap told to keep what a call frees, for the next call.

A compiled function allocates its intermediate buffers with ``malloc`` and frees them before
it returns. glibc gives the freed top of its heap back to the system, and the next call
faults the same pages in again, each one zeroed by the kernel: the conv block of
``benchmarks/speed.py`` took 1,290 minor page faults a call and 4.8 ms of CPU, 1.8 ms
without them (``jax.jit``: 2.9 ms; XLA keeps its buffers in an allocator of its own); the
attention block 14 ms against 5.2 ms.

``load`` therefore sets two of glibc's parameters once per process: ``M_MMAP_THRESHOLD``
to 32 MB, so that a buffer below that comes from the heap rather than a mapping of its own
(setting any parameter stops glibc's own adjustment of it, which reaches 32 MB at most),
and ``M_TOP_PAD`` to 64 MB, so that the heap grows and is trimmed 64 MB at a time and the
memory of one call stays mapped for the next. This is process-wide, and costs at most that
much resident memory that is not in use. A process
that set its own ``MALLOC_TOP_PAD_``, ``MALLOC_TRIM_THRESHOLD_`` or
``MALLOC_MMAP_THRESHOLD_`` keeps its choice; a program in C that calls the library in a
loop sets ``M_TOP_PAD`` itself, or gives the model a workspace (the C API's
``set_workspace``: README, "Deploying without Python").
"""

from __future__ import annotations

import os

TOP_PAD = 64 << 20
MMAP_THRESHOLD = 32 << 20  # the most glibc's own adjustment reaches on 64-bit machines
_M_TOP_PAD = -2  # glibc's malloc.h
_M_MMAP_THRESHOLD = -3
USER_SETTINGS = ("MALLOC_TOP_PAD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_")
_done = False


def keep_freed_memory() -> bool:
    """Set the parameters as the module doc says, the first time; whether they are set."""
    global _done
    if _done:
        return True
    if not _glibc():
        return False
    if any(name in os.environ for name in USER_SETTINGS):
        return False
    import ctypes

    libc = ctypes.CDLL(None)
    _done = bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        libc.mallopt(_M_TOP_PAD, TOP_PAD)
    )
    return _done


def _glibc() -> bool:
    try:
        return os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc")  # type: ignore[union-attr]
    except (ValueError, OSError, AttributeError):
        return False
