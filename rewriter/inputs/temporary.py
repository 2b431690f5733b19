"""Temporary files and folders that no signal can orphan.

``streams.run_command`` turns SIGTERM, SIGHUP and Ctrl-C into exceptions, raised between any
two bytecodes. One raised after ``mkdtemp`` made its folder and before the ``try`` whose
``finally`` removes it leaves the folder behind: a CI run saw a ``rewriter-*`` folder left in
``$TMPDIR`` that way. Here those signals are held back from before a folder or file is made
until the name is where the cleanup finds it, and raised again then.

Soundness: Python runs signal handlers in the main thread only, between bytecodes, whichever
thread the signal reached (a process-wide signal may reach any of jax's or LLVM's threads,
so a thread's signal mask would not do). While a block holds signals, the handlers are ones
that only note the signal; when it ends, the old handlers are back and each noted signal is
raised again (``raise_signal``), so the old handler runs at the next bytecode. Every caller
ends the hold inside the ``try`` that removes what was made, with the name already bound.
In another thread nothing is held, and nothing needs to be: no signal raises there.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .signal_handlers import handlers_set

HELD = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP that arrive during the block take effect when it ends."""
    arrived: list[int] = []
    try:
        # A handler that is None was not set from Python: it is left alone.
        with handlers_set(HELD, lambda n, _: arrived.append(n), keep=lambda old: old is None):
            yield
    finally:
        for signum in dict.fromkeys(arrived):  # the old handlers are back: they run now
            signal.raise_signal(signum)


@contextmanager
def temporary_folder(prefix: str, folder: Path | None = None) -> Iterator[Path]:
    """A new folder (in ``folder``, else the temporary folder), removed with everything in
    it when the block ends, whatever ends it."""
    made: Path | None = None
    try:
        with signals_held():
            made = Path(tempfile.mkdtemp(prefix=prefix, dir=folder))
        yield made
    finally:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)


@contextmanager
def temporary_file(prefix: str, suffix: str = "", folder: Path | None = None) -> Iterator[Path]:
    """A new empty file (in ``folder``, else the temporary folder), removed when the block
    ends, whatever ends it."""
    made: Path | None = None
    try:
        with signals_held():
            descriptor, name = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=folder)
            made = Path(name)
        os.close(descriptor)
        yield made
    finally:
        if made is not None:
            made.unlink(missing_ok=True)
