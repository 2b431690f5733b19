"""The compile cache: a module compiled again with the same options and tools is copied, not
compiled.

An entry is a folder named by the key, a SHA-256 of everything that changes what a compile
writes (``Key``): the module's text, every option, what the options resolve to (the target
CPU ``native`` stands for, the BLAS library found), the identity of every tool and library
that takes part and of each file of the rewriter's own code and C sources (path, size,
modification time and inode: ``file_identity``, read without reading the file), and the
versions of the Python packages whose code runs in the pipeline. It holds the library, the
header when one was asked for, the entry points and the warnings the compile gave, which a
hit gives again.

Where: ``$REWRITER_CACHE_DIR``, else ``$XDG_CACHE_HOME/rewriter``, else
``~/.cache/rewriter`` (``cache_dir``); entries are under ``compile/``. An entry is written
in a temporary folder beside the others and renamed into place, so a compile never sees
half an entry, and two compiles of one module write one entry. A cache that cannot be read
or written is passed by: the compile goes on without it. When the entries pass
``MAX_BYTES`` the least recently used are removed; ``clear()`` (or removing the folder)
empties it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..inputs.temporary import signals_held

CACHE_VARIABLE = "REWRITER_CACHE_DIR"
# What the entries may take together before the least recently used go.
MAX_BYTES = 1 << 30
# The layout of an entry and of its key; a new one starts a new set of entries.
FORMAT = 2
_INDEX = "entry.json"
# Environment variables the C compiler and linker read, which change what they make.
_TOOL_ENVIRONMENT = ("LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH", "CCC_OVERRIDE_OPTIONS")


def cache_dir() -> Path:
    """The folder of the cache: ``$REWRITER_CACHE_DIR``, else ``$XDG_CACHE_HOME/rewriter``,
    else ``~/.cache/rewriter``."""
    chosen = os.environ.get(CACHE_VARIABLE)
    if chosen:
        return Path(chosen)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "rewriter"
    return Path.home() / ".cache" / "rewriter"


def clear() -> None:
    """Remove every entry and object of the compile cache, and the BLAS found
    (``blas.resolve_blas(..., remember=True)``)."""
    for part in ("compile", "objects", "blas"):
        shutil.rmtree(cache_dir() / part, ignore_errors=True)


def file_identity(path: str | os.PathLike[str] | None) -> list[object] | None:
    """What says that a file changed, cheaply, without reading it: its resolved path, size,
    modification time in nanoseconds and inode (a file replaced by another one of the same
    size and time is another inode). None for no path, ``[path, None]`` for a file that is
    not there."""
    if path is None:
        return None
    try:
        resolved = os.path.realpath(path)
        status = os.stat(resolved)
    except OSError:
        return [os.fspath(path), None]
    return [resolved, status.st_size, status.st_mtime_ns, status.st_ino]


@functools.cache
def package_identity() -> str:
    """A digest of the rewriter's own code and C sources: every file of the package (its
    version in ``__init__.py`` among them) and of ``abi/``, by name and ``file_identity``.

    Not by content: reading and hashing the 100 files took longer than the rest of a
    cached compile; an edit, a checkout or an install changes a file's time or inode."""
    from ..abi import bridge_dir

    digest = hashlib.sha256()
    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    for root in (package, bridge_dir()):
        for path in sorted(_files_under(root)):
            status = os.stat(path)
            named = os.path.relpath(path, root)
            digest.update(
                f"{named}\0{status.st_size} {status.st_mtime_ns} {status.st_ino}\0".encode()
            )
    return digest.hexdigest()


def _files_under(root: str) -> Iterator[str]:
    """The files under ``root`` but compiled Python (``__pycache__``, ``.pyc``)."""
    for folder, folders, files in os.walk(root):
        folders[:] = [name for name in folders if name != "__pycache__"]
        for name in files:
            if not name.endswith(".pyc"):
                yield os.path.join(folder, name)


@functools.cache
def iree_compiler_identity() -> str | None:
    """Which ``iree-base-compiler`` this Python imports, read without importing it (which
    takes longer than a cached compile): its version file (the version and the IREE
    revision) and the identity of its compiler library. None when it is not installed."""
    try:
        spec = importlib.util.find_spec("iree.compiler")
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        version = Path(folder) / "version.py"
        library = Path(folder) / "_mlir_libs" / "libIREECompiler.so"
        try:
            text = version.read_text(encoding="utf-8")
        except OSError:
            continue
        return json.dumps([text, file_identity(library)])
    return None


@functools.cache
def host_cpu() -> str:
    """What ``-march=native`` stands for here: the machine, and the first CPU's model and
    features from /proc/cpuinfo (or what ``platform`` says where there is none: its
    ``processor()`` runs ``uname -p``, which a cached compile need not wait for)."""
    described = [os.uname().machine]
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            first = handle.read().split("\n\n", 1)[0]
    except OSError:
        import platform

        return " ".join([platform.machine(), platform.processor()])
    kept = ("vendor_id", "cpu family", "model", "model name", "stepping", "flags", "Features")
    for line in first.splitlines():
        name = line.split(":", 1)[0].strip()
        if name in kept:
            described.append(line.strip())
    return "\n".join(described)


def tool_environment() -> dict[str, str | None]:
    return {name: os.environ.get(name) for name in _TOOL_ENVIRONMENT}


def key_of(parts: Mapping[str, object]) -> str:
    """The key of an entry: the SHA-256 of ``parts`` (JSON, keys sorted), ``FORMAT`` and
    the version of the Python that runs the pipeline's own steps."""
    data = json.dumps(
        {"format": FORMAT, "python": sys.version, **parts}, sort_keys=True, default=str
    )
    return hashlib.sha256(data.encode()).hexdigest()


@dataclass(frozen=True)
class Hit:
    """An entry found: its files (linked into a private folder, which the caller removes)
    and what the compile returned and said."""

    folder: Path
    files: dict[str, Path]
    returned: str  # what the compile returned, as JSON (the entry points, the imports)
    warnings: list[tuple[str, str]]  # (category name, message)


def _entries_folder() -> Path:
    return cache_dir() / "compile"


@contextmanager
def lookup(key: str) -> Iterator[Hit | None]:
    """The entry of ``key``, its files linked into a private folder (so that an entry
    removed meanwhile by another process cannot take them away half copied), which is
    removed when the block ends; None when there is none or it cannot be read."""
    try:
        entry = _entries_folder() / key
        index = json.loads((entry / _INDEX).read_text(encoding="utf-8"))
    except (OSError, ValueError, RuntimeError):  # RuntimeError: no home folder
        yield None
        return
    private: Path | None = None
    try:
        with signals_held():  # the folder is made and named at once (temporary.py)
            try:
                private = Path(tempfile.mkdtemp(prefix=".hit-", dir=_entries_folder()))
            except OSError:  # a cache that can be read only: copies in the temporary folder
                private = Path(tempfile.mkdtemp(prefix="rewriter-hit-"))
        yield _linked_entry(entry, index, private)
    finally:
        if private is not None:
            shutil.rmtree(private, ignore_errors=True)


def _linked_entry(entry: Path, index: dict, private: Path) -> Hit | None:
    try:
        files = {}
        for name in index["files"]:
            _private_copy(entry / name, private / name)
            files[name] = private / name
        os.utime(entry)  # recently used: pruned last
        return Hit(private, files, index["returned"], [tuple(w) for w in index["warnings"]])
    except (OSError, KeyError, TypeError, ValueError):
        return None


def store(
    key: str, files: Mapping[str, Path], returned: str, warnings: Iterable[tuple[str, str]]
) -> None:
    """Add the entry of ``key``: ``files`` (name -> the file to copy), what the compile
    returned as JSON and the warnings. Written in a temporary folder and renamed into
    place; an entry another compile wrote first is kept. Nothing is raised: a cache that
    cannot be written is passed by."""
    try:
        folder = _entries_folder()
        folder.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix=".new-", dir=folder))
    except (OSError, RuntimeError):
        return
    try:
        for name, source in files.items():
            shutil.copy2(source, partial / name)
        index = {"files": sorted(files), "returned": returned, "warnings": list(warnings)}
        (partial / _INDEX).write_text(json.dumps(index), encoding="utf-8")
        os.rename(partial, folder / key)
    except OSError:  # no room, no permission, or another compile stored it first
        shutil.rmtree(partial, ignore_errors=True)
        return
    prune(MAX_BYTES)


def prune(limit: int) -> None:
    """Remove the least recently used entries and objects until the rest take at most
    ``limit`` bytes, and temporary files a killed compile left an hour ago or more."""
    kept: list[tuple[float, int, Path]] = []
    now = time.time()
    for folder in (_entries_folder(), _objects_folder()):
        try:
            children = list(folder.iterdir())
        except OSError:
            continue
        for child in children:
            try:
                used = child.stat().st_mtime
                if child.name.startswith("."):
                    if now - used > 3600:
                        _remove(child)
                    continue
                files = list(child.iterdir()) if child.is_dir() else [child]
                size = sum(f.stat().st_size for f in files)
            except OSError:
                continue
            kept.append((used, size, child))
    total = sum(size for _, size, _ in kept)
    for _, size, child in sorted(kept, key=lambda item: item[0]):
        if total <= limit:
            break
        _remove(child)
        total -= size


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _objects_folder() -> Path:
    return cache_dir() / "objects"


def _private_copy(source: Path, target: Path) -> None:
    """``source`` at ``target``: a hard link where it can be, else a copy."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


class ObjectCache:
    """The objects of the package's own C sources (``abi/``: the BLAS calls, the sorts, the
    XLA FFI bridge, ...), which many modules compile alike: one per source, compile
    arguments and compiler. The key covers the source and the package (its headers are
    in ``abi/`` too), the arguments, the compiler's identity, the files of every include
    folder the arguments name and the environment the compiler reads."""

    def __init__(self, clang: str):
        self.clang = clang

    def key(self, source: Path, arguments: list[str]) -> str:
        folders = [a[2:] for a in arguments if a.startswith("-I")]
        included = {
            folder: [file_identity(f) for f in sorted(Path(folder).rglob("*")) if f.is_file()]
            for folder in folders
        }
        return key_of(
            {
                "source": str(source),
                "content": hashlib.sha256(source.read_bytes()).hexdigest(),
                "arguments": arguments,
                "compiler": file_identity(self.clang),
                "included": included,
                "rewriter": package_identity(),
                "environment": tool_environment(),
            }
        )

    def lookup(self, source: Path, arguments: list[str], target: Path) -> bool:
        """Put the object of ``source`` at ``target`` (a private link); whether there was one."""
        try:
            cached = _objects_folder() / f"{self.key(source, arguments)}.o"
            _private_copy(cached, target)
            os.utime(cached)
            return True
        except (OSError, RuntimeError):
            return False

    def store(self, source: Path, arguments: list[str], built: Path) -> None:
        """Keep the object ``built`` of ``source``: a temporary file renamed into place.
        Nothing is raised."""
        try:
            folder = _objects_folder()
            folder.mkdir(parents=True, exist_ok=True)
            descriptor, partial = tempfile.mkstemp(prefix=".new-", suffix=".o", dir=folder)
            os.close(descriptor)
        except (OSError, RuntimeError):
            return
        try:
            shutil.copy2(built, partial)
            os.replace(partial, folder / f"{self.key(source, arguments)}.o")
        except OSError:
            Path(partial).unlink(missing_ok=True)
