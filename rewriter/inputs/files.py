"""Reading inputs and writing outputs as Unix tools do, never leaving a half-written file.

A regular file is replaced in one rename (readers see the old file or the new one); what
is not a regular file (a terminal, ``/dev/null``, a FIFO, ``/dev/stdout``) is written in
place, as a shell redirection would: renaming over it would replace a device or a pipe by
a plain file. A file whose replacement would lose something (a read-only file, one with
several hard links) is refused, for ``-o`` and ``--in-place`` alike.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterator


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


# Names of this process's open file descriptors: the file behind one is a stream the
# caller opened, which a rename would not reach (``-o /dev/stdout`` when the shell
# redirected it to a file, perhaps to append).
_DESCRIPTOR_PATH = re.compile(r"/dev/(?:std(in|out|err)|fd/([0-9]+))|/proc/self/fd/([0-9]+)")
_STANDARD = {"in": 0, "out": 1, "err": 2}


def write_output(path: str, data: str | bytes) -> None:
    """Write ``data`` to ``path`` the way its kind of file asks for (see the module doc).

    Raises ``OutputRefused`` for a read-only file or a file with several hard links, and
    ``OSError`` when the write fails.
    """
    descriptor = _descriptor_named(path)
    if descriptor is not None:
        _write_descriptor(os.dup(descriptor), data)
        return
    try:
        status = os.stat(path)
    except FileNotFoundError:
        status = None
    if status is not None and not stat.S_ISREG(status.st_mode):
        _write_descriptor(os.open(path, os.O_WRONLY | os.O_TRUNC), data)
        return
    if status is not None:
        refusal = replacement_refusal(status)
        if refusal:
            raise OutputRefused(refusal)
    write_atomically(path, data)


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


def _write_descriptor(descriptor: int, data: str | bytes) -> None:
    """Stream ``data`` into an open device, FIFO or file (no temporary file), then close."""
    with os.fdopen(descriptor, "wb") as handle:
        for chunk in encoded_chunks(data):
            handle.write(chunk)


def write_atomically(path: str, data: str | bytes) -> None:
    """Replace ``path`` by ``data`` in one rename: readers see the old file or the new one.

    A symlink is followed: its target is replaced and the link stays. The mode, owner and
    group of an existing file are kept (owner and group as far as we may set them: root
    always can); a new file gets the usual mode (0666 less the umask).
    """
    target = os.path.realpath(path)
    directory = os.path.dirname(target) or "."
    try:
        existing: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        existing = None
    if existing is not None:
        mode = stat.S_IMODE(existing.st_mode)
    else:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    descriptor, temporary = tempfile.mkstemp(
        dir=directory, prefix=f".{os.path.basename(target)}.", suffix=".tmp"
    )
    try:
        with os.fdopen(descriptor, "wb") as handle:
            for chunk in encoded_chunks(data):
                handle.write(chunk)
            handle.flush()
            if existing is not None:
                _keep_owner(handle.fileno(), existing)
            os.fchmod(handle.fileno(), mode)  # after chown, which may clear set-id bits
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


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
