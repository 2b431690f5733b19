"""How a command line ends: on a signal, on a write error of its standard streams, or done.

The three command lines (``python -m rewriter``, ``rewriter.compile``, ``rewriter.iree``)
run their work through ``run_command``, which promises:

- SIGTERM and SIGHUP (what ``timeout``, CI runners and a closed terminal send) raise
  ``Terminated`` where the program is, like SIGINT's ``KeyboardInterrupt``: every
  ``finally`` and ``except BaseException`` runs, so a temporary file being written is
  removed, a temporary folder too, and a tool being run is killed; then the exit status is
  128 + the signal's number (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP), as a shell
  shows it. A signal that was ignored when the command started (``nohup``) stays ignored; a
  second one while cleaning up is ignored, so the cleanup finishes.
- A write to standard output or error that fails (a full disk, ``/dev/full``, EIO) is one
  line, ``error: cannot write to stdout: <reason>``, and exit status 1; never a traceback.
- EPIPE (the reader of a pipe went away, as ``head`` does) is exit status 141, what a shell
  shows for a program that SIGPIPE ended, with no message: the reader chose to stop, and
  the status says that the output was cut (never 0; and never 1, which ``--check`` gives to
  a file that would change).
- Nothing is reported at interpreter exit ("Exception ignored ... BrokenPipeError"): once a
  stream failed, its descriptor is pointed at ``/dev/null`` for the final flush.
"""

from __future__ import annotations

import errno
import os
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TextIO, cast

from ..syntax.printable import printable_lines
from .signal_handlers import handlers_set

if TYPE_CHECKING:
    import subprocess

TERMINATING = (signal.SIGTERM, signal.SIGHUP)
INTERRUPTED = 128 + signal.SIGINT
BROKEN_PIPE = 128 + signal.SIGPIPE
WRITE_FAILED = 1


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived (a BaseException, like KeyboardInterrupt: no ``except
    Exception`` swallows it)."""

    def __init__(self, signum: int):
        super().__init__(f"terminated by {signal.Signals(signum).name}")
        self.signum = signum


class StreamError(Exception):
    """Writing to standard output or error failed: ``name`` is ``stdout`` or ``stderr``.
    Not an OSError, so that the handlers of output files do not take it for theirs."""

    def __init__(self, name: str, error: OSError):
        super().__init__(f"cannot write to {name}: {error.strerror or error}")
        self.name = name
        self.error = error


def run_command(body: Callable[[], int | None]) -> int:
    """Run a command line's ``body`` (argument parsing included) and return its exit status,
    keeping the promises of the module doc."""
    with _terminating_raises(), _guarded_streams() as originals:
        try:
            status = _status(body)
            _flush()  # what is buffered fails here, not at interpreter exit
            return status
        except KeyboardInterrupt:
            status = INTERRUPTED
        except Terminated as terminated:
            status = 128 + terminated.signum
        except StreamError as error:
            return _stream_failed(error, originals)
        try:
            _flush()
        except StreamError as error:
            _silence(originals[error.name])
        return status


def say(message: str) -> None:
    """One message on stderr, ``printable`` line by line: what comes from the input or from a
    tool's diagnostics about it cannot drive the terminal."""
    print(printable_lines(message), file=sys.stderr)


def run_tool(command: list[str]) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(command, capture_output=True, text=True)``, except that whatever ends
    this process meanwhile (``Terminated``, Ctrl-C) ends the tool with SIGTERM, as a shell
    would, and SIGKILL only if it is still running 5 s later: a tool that SIGKILL ends (what
    ``subprocess.run`` sends) cannot remove its own temporary files."""
    import subprocess

    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        try:
            stdout, stderr = process.communicate()
        except BaseException:
            process.terminate()
            try:
                process.wait(timeout=5)
            except BaseException:
                process.kill()
            raise
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def _status(body: Callable[[], int | None]) -> int:
    """The body's status; a SystemExit (argparse's usage errors, --help) gives its code."""
    try:
        return body() or 0
    except SystemExit as exit_:
        code = exit_.code
        if code is None or isinstance(code, int):
            return code or 0
        print(code, file=sys.stderr)
        return 1


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()


def _stream_failed(error: StreamError, originals: dict[str, Any]) -> int:
    """Say which stream failed (on stderr, if that is not the one), and the status."""
    _silence(originals[error.name])
    if error.error.errno == errno.EPIPE:
        return BROKEN_PIPE
    if error.name == "stdout":
        try:
            print(f"error: {error}", file=sys.stderr, flush=True)
        except StreamError:
            _silence(originals["stderr"])
    return WRITE_FAILED


def _silence(stream: Any) -> None:
    """Point a failed standard stream's descriptor at /dev/null, so that what is still
    buffered goes nowhere at interpreter exit instead of failing again there. Only the
    process's own streams: a stream a caller put in their place (a test's) is left alone."""
    if stream is None or stream not in (sys.__stdout__, sys.__stderr__):
        return
    try:
        descriptor = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, descriptor)
    finally:
        os.close(null)


@contextmanager
def _terminating_raises() -> Iterator[None]:
    """SIGTERM and SIGHUP raise Terminated for the duration (where signals can be set: the
    main thread), unless they were ignored."""

    def terminate(signum: int, frame: object) -> None:
        # A second signal must not cut the cleanup short (the ones not replaced were ignored
        # already); the block's end sets the old handlers back.
        for number in TERMINATING:
            signal.signal(number, signal.SIG_IGN)
        raise Terminated(signum)

    with handlers_set(TERMINATING, terminate, keep=lambda old: old is signal.SIG_IGN):
        yield


class _Guarded:
    """A standard stream whose write errors are StreamErrors naming it (its ``buffer`` too)."""

    def __init__(self, stream: Any, name: str):
        self._stream = stream
        self._name = name

    def write(self, data: Any) -> int:
        try:
            return self._stream.write(data)
        except OSError as error:
            raise StreamError(self._name, error) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as error:
            raise StreamError(self._name, error) from None

    @property
    def buffer(self) -> _Guarded:
        return _Guarded(self._stream.buffer, self._name)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def _guarded_streams() -> Iterator[dict[str, Any]]:
    """sys.stdout and sys.stderr guarded for the duration; yields the streams they wrap."""
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout = cast(TextIO, _Guarded(stdout, "stdout"))
    sys.stderr = cast(TextIO, _Guarded(stderr, "stderr"))
    try:
        yield {"stdout": stdout, "stderr": stderr}
    finally:
        sys.stdout, sys.stderr = stdout, stderr
