"""Reading inputs and writing outputs without ever leaving a half-written file."""

from __future__ import annotations

import os
import stat
import sys
import tempfile


def read_input(path: str) -> bytes:
    """The bytes of ``path``, or of standard input for ``-``."""
    if path == "-":
        return sys.stdin.buffer.read()
    with open(path, "rb") as handle:
        return handle.read()


def is_read_only(path: str) -> bool:
    """Whether the file's mode has no write bit: its owner asked for it not to change (a
    rename would replace it anyway, even for root, so we ask the mode, not access())."""
    return not stat.S_IMODE(os.stat(path).st_mode) & 0o222


CHUNK = 1 << 24


def encoded_chunks(text: str | bytes):
    """UTF-8 bytes of ``text`` in 16 MB pieces: a large output is never copied whole."""
    if isinstance(text, bytes):
        yield text
        return
    for start in range(0, len(text), CHUNK):
        yield text[start : start + CHUNK].encode("utf-8")


def write_atomically(path: str, data: str | bytes) -> None:
    """Replace ``path`` by ``data`` in one rename: readers see the old file or the new one.

    A symlink is followed: its target is replaced and the link stays. The file mode of an
    existing file is kept; a new file gets the usual mode (0666 less the umask).
    """
    target = os.path.realpath(path)
    directory = os.path.dirname(target) or "."
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
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
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise
