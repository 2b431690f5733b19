"""Reading inputs and writing outputs as Unix tools do, never leaving a half-written file.

A regular file is replaced in one rename (readers see the old file or the new one); what
is not a regular file (a terminal, ``/dev/null``, a FIFO, ``/dev/stdout``) is written in
place, as a shell redirection would: renaming over it would replace a device or a pipe by
a plain file. A file whose replacement would lose something (a read-only file, one with
several hard links) is refused, for ``-o`` and ``--in-place`` alike.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from .temporary import temporary_file


class OutputRefused(OSError):
    """An output file that is not replaced, and why (the message is for the user)."""


def read_input(path: str) -> bytes:
    """The bytes of ``path``, or of standard input for ``-``."""
    if path == "-":
        return sys.stdin.buffer.read()
    with open(path, "rb") as handle:
        return handle.read()


CHUNK = 1 << 24


def encoded_chunks(text: str | bytes) -> Iterator[bytes]:
    """UTF-8 bytes of ``text`` in 16 MB pieces: a large output is never copied whole."""
    if isinstance(text, bytes):
        yield text
        return
    for start in range(0, len(text), CHUNK):
        yield text[start : start + CHUNK].encode("utf-8")


def write_encoded(handle: BinaryIO, data: str | bytes) -> None:
    """Write all of ``data``, UTF-8 encoded, to ``handle`` (``encoded_chunks``). A buffered
    write may return having written less (CPython's ``BufferedWriter.write`` returns the
    count so far when a signal interrupts a large write into a pipe, as SIGPIPE does when
    its reader goes away): the rest is written, or the next write raises (EPIPE), instead
    of being lost without an error."""
    for chunk in encoded_chunks(data):
        view = memoryview(chunk)
        while view:
            view = view[handle.write(view) :]


# Names of this process's open file descriptors: the file behind one is a stream the
# caller opened, which a rename would not reach (``-o /dev/stdout`` when the shell
# redirected it to a file, perhaps to append).
_DESCRIPTOR_PATH = re.compile(r"/dev/(?:std(in|out|err)|fd/([0-9]+))|/proc/self/fd/([0-9]+)")
_STANDARD = {"in": 0, "out": 1, "err": 2}


def write_output(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write ``data`` to ``path`` the way its kind of file asks for (see the module doc).

    Raises ``OutputRefused`` for a read-only file or a file with several hard links, and
    ``OSError`` when the write fails.
    """
    _write_output(os.fspath(path), lambda handle: write_encoded(handle, data), None)


def install_file(path: str | os.PathLike[str], source: str | os.PathLike[str]) -> None:
    """``write_output`` of the bytes of the file ``source`` (a tool's output, made in a
    temporary folder), streamed; a new file gets ``source``'s mode (a shared object the
    linker made executable stays so)."""
    mode = stat.S_IMODE(os.stat(source).st_mode)

    def put(handle: BinaryIO) -> None:
        with open(source, "rb") as data:
            shutil.copyfileobj(data, handle, CHUNK)

    _write_output(os.fspath(path), put, mode)


def _write_output(path: str, put: Callable[[BinaryIO], None], mode: int | None) -> None:
    descriptor = _descriptor_named(path)
    if descriptor is not None:
        _write_descriptor(os.dup(descriptor), put)
        return
    try:
        status = os.stat(path)
    except FileNotFoundError:
        status = None
    if status is not None and not stat.S_ISREG(status.st_mode):
        _write_descriptor(os.open(path, os.O_WRONLY | os.O_TRUNC), put)
        return
    if status is not None:
        refusal = replacement_refusal(status)
        if refusal:
            raise OutputRefused(refusal)
    _replace_atomically(path, put, mode)


def output_problem(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` cannot be written, as far as can be told before any work is done (a
    long compile): its folder is missing or no folder, or it is a folder itself. None
    when nothing is known against it (the write may still fail)."""
    path = os.fspath(path)
    if os.path.isdir(path):
        return "it is a folder"
    folder = os.path.dirname(path)
    if folder and not os.path.isdir(folder):
        if os.path.exists(folder):
            return f"{folder} is not a folder"
        return f"the folder {folder} does not exist"
    return None


def cannot_write(path: str | os.PathLike[str], error: OSError) -> str:
    """``cannot write: why`` for a write of ``path`` that failed with ``error``, naming the
    folder when that is what is missing."""
    problem = output_problem(path) if error.errno in _PATH_ERRORS else None
    return f"cannot write: {problem or error.strerror or error}"


_PATH_ERRORS = (errno.ENOENT, errno.ENOTDIR, errno.EISDIR)


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether two paths name one file (by device and inode where both exist, by their
    resolved path where not). Character devices (a terminal, /dev/null) take any number
    of writers without losing anything."""
    try:
        if stat.S_ISCHR(os.stat(a).st_mode):
            return False
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def replacement_refusal(status: os.stat_result) -> str | None:
    """Why a regular file must not be replaced by a new one, or None.

    Read-only: its owner asked for it not to change (``cp`` refuses it too; a rename would
    replace it even for root, so the mode is asked, not ``access()``). Several hard links:
    a rename would leave the other names on the old content, and writing into the file
    instead could not be atomic; so the file is left alone and the user decides.
    """
    if not stat.S_IMODE(status.st_mode) & 0o222:
        return "the file is read-only"
    if status.st_nlink > 1:
        return (
            f"the file has {status.st_nlink} hard links; replacing it would break them and "
            "writing into it could not be atomic"
        )
    return None


def _descriptor_named(path: str) -> int | None:
    """The descriptor that ``/dev/stdout``, ``/dev/fd/N`` or ``/proc/self/fd/N`` names."""
    match = _DESCRIPTOR_PATH.fullmatch(os.path.abspath(path))
    if not match:
        return None
    standard, number, proc = match.groups()
    return _STANDARD[standard] if standard else int(number or proc)


def _write_descriptor(descriptor: int, put: Callable[[BinaryIO], None]) -> None:
    """Stream into an open device, FIFO or file (no temporary file), then close."""
    with os.fdopen(descriptor, "wb") as handle:
        put(handle)


def write_atomically(path: str, data: str | bytes) -> None:
    """Replace ``path`` by ``data`` in one rename: readers see the old file or the new one.

    A symlink is followed: its target is replaced and the link stays. The mode, owner and
    group of an existing file are kept (owner and group as far as we may set them: root
    always can); a new file gets the usual mode (0666 less the umask).
    """
    _replace_atomically(path, lambda handle: write_encoded(handle, data), None)


def _replace_atomically(path: str, put: Callable[[BinaryIO], None], mode: int | None) -> None:
    """``write_atomically`` of what ``put`` writes; a new file gets ``mode`` if given. The
    temporary file is removed whatever ends the write (an error, Ctrl-C, a SIGTERM that
    ``streams.run_command`` turned into an exception)."""
    target = os.path.realpath(path)
    directory = os.path.dirname(target) or "."
    try:
        existing: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        existing = None
    if existing is not None:
        mode = stat.S_IMODE(existing.st_mode)
    elif mode is None:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    prefix = f".{os.path.basename(target)}."
    with temporary_file(prefix, ".tmp", Path(directory)) as temporary:
        with open(temporary, "wb") as handle:
            put(handle)
            handle.flush()
            if existing is not None:
                _keep_owner(handle.fileno(), existing)
            os.fchmod(handle.fileno(), mode)  # after chown, which may clear set-id bits
            os.fsync(handle.fileno())
        os.replace(temporary, target)


def _keep_owner(descriptor: int, existing: os.stat_result) -> None:
    """Give the new file the old one's owner and group, or at least its group.

    Root may set any owner; another user may only set a group they belong to. What cannot
    be kept stays ours, as with ``sed -i``: the content is what the user asked for.
    """
    if (existing.st_uid, existing.st_gid) == (os.geteuid(), os.getegid()):
        return
    try:
        os.fchown(descriptor, existing.st_uid, existing.st_gid)
    except PermissionError:
        try:
            os.fchown(descriptor, -1, existing.st_gid)
        except PermissionError:
            pass
