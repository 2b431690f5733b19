"""Which BLAS computes the matrix products of a compiled module, and how to link it.

By default the system's OpenBLAS (Debian's ``libopenblas0``, ``libopenblas.so.0`` where the
compiler finds libraries), linked by its soname and nothing else: a built library carries no
path of the build machine, so it runs wherever that soname resolves, with no Python and no
venv. Without a system OpenBLAS the products stay in compiled loops. Any other library with
the CBLAS interface can be named instead (``--blas PATH``); its symbol names and integer
width are read from the library itself. NumPy's and SciPy's wheels ship an OpenBLAS too
(``BUNDLED``): it can be named by path, and is then found through a RUNPATH to the wheel's
folder, for use on the build machine only.

Finding the system's OpenBLAS asks clang (``-print-file-name``), loads the library and
reads the loader's cache: 40 ms, more than the rest of a compile served from the compile
cache. ``resolve_blas(..., remember=True)`` keeps what it found beside the compile cache
(``blas/``), with the identity of every file and folder the answer came from
(``_consulted``), and gives it again while they are all the same.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..abi import bridge_dir
from .toolchain import ToolchainError

if TYPE_CHECKING:
    import ctypes

# (symbol prefix, symbol suffix, integer type) of the CBLAS builds we know, most specific first.
NAMINGS = (
    ("scipy_cblas_", "64_", "int64_t"),  # NumPy's and scipy-openblas64 wheels (ILP64)
    ("scipy_cblas_", "", "int32_t"),  # SciPy's wheel (scipy-openblas32)
    ("cblas_", "64_", "int64_t"),  # ILP64 OpenBLAS built with a symbol suffix
    ("cblas_", "", "int32_t"),  # libopenblas, libcblas, BLIS, MKL's LP64 interface
)

# The soname of the system's OpenBLAS (Debian's libopenblas0-pthread, -openmp, -serial).
SYSTEM_OPENBLAS = "libopenblas.so.0"

# Where the wheels keep their OpenBLAS, relative to site-packages.
BUNDLED = (
    ("numpy", "numpy.libs", "libscipy_openblas64_*.so"),
    ("scipy", "scipy.libs", "libscipy_openblas*.so"),
)


@dataclass(frozen=True)
class Blas:
    library: Path
    prefix: str
    suffix: str
    integer: str
    # Whether the dynamic loader finds ``library`` by its soname alone (a system folder):
    # then the module records the soname and no path; otherwise a RUNPATH to its folder.
    by_soname: bool = True

    @property
    def soname(self) -> str:
        """The name the module records: the system's ``libopenblas.so.0``, or the file's."""
        return SYSTEM_OPENBLAS if self.library.name.startswith("libopenblas") else self.library.name

    def link_arguments(self) -> list[str]:
        """The linker's arguments: the file (the module records its soname), and a RUNPATH
        to its folder only when the dynamic loader would not find it by that soname."""
        if self.by_soname:
            return [str(self.library)]
        return [str(self.library), f"-Wl,-rpath,{self.library.parent}"]

    def split_flags(self) -> list[str]:
        """clang's flags for ``abi/blas_calls.c`` splitting large products over the async
        runtime's threads (a module compiled for several): only while the library runs one
        thread, as its ``openblas_get_num_threads`` (under this build's prefix and suffix)
        says; a library without that function keeps its products whole."""
        query = self.prefix.replace("cblas_", "openblas_") + "get_num_threads" + self.suffix
        return ["-DRW_BLAS_SPLIT", f"-DRW_BLAS_THREADS={query}"]

    def compile_flags(self) -> list[str]:
        """clang's flags for ``abi/blas_calls.c`` calling this library."""
        return [
            f"-DRW_CBLAS_PREFIX={self.prefix}",
            f"-DRW_CBLAS_SUFFIX={self.suffix}",
            f"-DRW_BLAS_INT={self.integer}",
        ]


def blas_calls_source() -> Path:
    return Path(bridge_dir()) / "blas_calls.c"


def sort_calls_source() -> Path:
    """The stable sort that sorts of a compiled module call (``library_calls.py``)."""
    return Path(bridge_dir()) / "sort_calls.c"


def resolve_blas(
    choice: str | Path | None,
    clang: str | None = None,
    target: list[str] | None = None,
    remember: bool = False,
) -> Blas | None:
    """``"auto"``: the system's OpenBLAS (``system_blas``; None when there is none); ``None``
    or ``"none"``: no BLAS; otherwise the path of a CBLAS library (ToolchainError when it is
    not one). ``clang`` is the compiler whose library search path ``"auto"`` looks in, for
    the ``target`` (``["--target=T"]`` for another machine: its libraries are read, not
    loaded). With ``remember`` the answer is kept in the compile cache's folder and given
    again while nothing it came from changed (``_remembered``)."""
    if choice is None or choice == "none":
        return None
    if remember:
        return _remembered(choice, clang, target or [])
    if choice == "auto":
        return system_blas(clang, target)
    path = Path(choice)
    if not path.is_file():
        raise ToolchainError(f"BLAS library {path} does not exist")
    found = probe_symbols(path) if target else probe(path)
    if found is None:
        names = ", ".join(f"{p}sgemm{s}" for p, s, _ in NAMINGS)
        raise ToolchainError(f"{path} is not a CBLAS library: it defines none of {names}")
    return found


def system_blas(clang: str | None = None, target: list[str] | None = None) -> Blas | None:
    """The system's OpenBLAS (``libopenblas.so.0``) where ``clang`` (by default the one on
    $PATH) finds libraries for ``target`` (its ``--target=T``; none: this machine); None
    when it finds none, or none with the CBLAS interface."""
    import subprocess

    compiler = clang or shutil.which("clang-22") or shutil.which("cc")
    if compiler is None:
        return None
    found = subprocess.run(
        [compiler, *(target or []), f"-print-file-name={SYSTEM_OPENBLAS}"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    if not found or not Path(found).is_absolute() or not Path(found).is_file():
        return None
    return probe_symbols(Path(found)) if target else probe(Path(found))


def _remembered(choice: str | Path, clang: str | None, target: list[str]) -> Blas | None:
    """``resolve_blas(choice, clang, target)``, from the record of an earlier answer when
    every file and folder it consulted (``_consulted``) has the identity it had then
    (``cache.file_identity``: path, size, time, inode), else found again and recorded. The
    identities are taken before the answer is sought: a change meanwhile makes the record
    stale at once. A record that cannot be read or written is passed by."""
    from . import cache

    compiler = clang or shutil.which("clang-22") or shutil.which("cc")
    question = {
        "choice": str(choice),
        "soname": SYSTEM_OPENBLAS,
        "compiler": cache.file_identity(compiler),
        "target": target,
        "environment": cache.tool_environment(),
    }
    try:
        record_file = cache.cache_dir() / "blas" / f"{cache.key_of(question)}.json"
    except RuntimeError:  # no home folder: nowhere to keep it
        return resolve_blas(choice, clang, target)
    try:
        record = json.loads(record_file.read_text(encoding="utf-8"))
        if all(cache.file_identity(path) == identity for path, identity in record["consulted"]):
            return _blas_of(record["found"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    consulted = [[path, cache.file_identity(path)] for path in _consulted(choice, compiler, target)]
    found = resolve_blas(choice, clang, target)
    try:
        record_file.parent.mkdir(parents=True, exist_ok=True)
        partial = record_file.with_name(f".{record_file.name}.{os.getpid()}")
        text = json.dumps({"consulted": consulted, "found": _record_of(found)})
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, record_file)
    except OSError:
        pass
    return found


def _consulted(choice: str | Path, compiler: str | None, target: list[str]) -> list[str]:
    """What the answer of ``resolve_blas(choice, compiler, target)`` depends on besides the
    compiler, its arguments and environment: the loader's cache (``loader_finds``); for a
    path, that file; for ``"auto"``, every folder clang looks for libraries in
    (``-print-search-dirs``), the folder that holds each (a new GCC's folder beside the
    others is a new search folder) and ``libopenblas.so.0`` in each, through its links (an
    OpenBLAS installed, removed, or switched by ``update-alternatives``)."""
    import subprocess

    paths = ["/etc/ld.so.cache"]
    if choice != "auto":
        return [*paths, str(choice), *([shutil.which("nm") or "nm"] if target else [])]
    if compiler is None:
        return paths
    listed = subprocess.run(
        [compiler, *target, "-print-search-dirs"], capture_output=True, text=True, check=False
    ).stdout
    for line in listed.splitlines():
        if line.startswith("libraries: ="):
            for folder in line.removeprefix("libraries: =").split(os.pathsep):
                folder = os.path.realpath(folder)
                paths += [folder, os.path.dirname(folder), os.path.join(folder, SYSTEM_OPENBLAS)]
    return paths


def _record_of(found: Blas | None) -> dict[str, object] | None:
    if found is None:
        return None
    return {
        "library": str(found.library),
        "prefix": found.prefix,
        "suffix": found.suffix,
        "integer": found.integer,
        "by_soname": found.by_soname,
    }


def _blas_of(record: dict[str, object] | None) -> Blas | None:
    if record is None:
        return None
    return Blas(
        Path(str(record["library"])),
        str(record["prefix"]),
        str(record["suffix"]),
        str(record["integer"]),
        bool(record["by_soname"]),
    )


def bundled_blas() -> Blas | None:
    """The OpenBLAS of NumPy's wheel, else of SciPy's; None when neither ships one."""
    for package, folder, pattern in BUNDLED:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            continue
        libraries = Path(next(iter(spec.submodule_search_locations))).parent / folder
        for library in sorted(libraries.glob(pattern)):
            found = probe(library)
            if found:
                return found
    return None


def probe(path: Path) -> Blas | None:
    """The CBLAS naming that ``path`` defines, read by loading it (an OpenBLAS picks its
    kernels as it loads, for the rest of the process: ``openblas_core.py``)."""
    import ctypes

    from .openblas_core import name_openblas_core

    name_openblas_core([path.name])
    try:
        library = ctypes.CDLL(str(path))
    except OSError:
        return None
    for prefix, suffix, integer in NAMINGS:
        if all(hasattr(library, f"{prefix}{t}gemm{suffix}") for t in "sdcz"):
            if integer == "int32_t" and _openblas_with_64_bit_integers(library):
                integer = "int64_t"  # an ILP64 OpenBLAS that kept the plain names
            return Blas(path.resolve(), prefix, suffix, integer, loader_finds(path))
    return None


def probe_symbols(path: Path) -> Blas | None:
    """The CBLAS naming that ``path``, a library of another machine, defines, read from its
    dynamic symbols (``nm -D``) without loading it; plain names are taken as 32-bit
    integers (an ILP64 OpenBLAS that kept them cannot be told apart without running it).
    It is linked by soname alone: where it runs, the target's loader finds it."""
    import subprocess

    nm = shutil.which("nm")
    if nm is None:
        return None
    listed = subprocess.run(
        [nm, "-D", "--defined-only", "--format=just-symbols", str(path)],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split()
    symbols = set(listed)
    for prefix, suffix, integer in NAMINGS:
        if all(f"{prefix}{t}gemm{suffix}" in symbols for t in "sdcz"):
            return Blas(path.resolve(), prefix, suffix, integer, by_soname=True)
    return None


def loader_finds(path: Path) -> bool:
    """Whether the dynamic loader finds ``path`` by its soname alone: one of the libraries
    its cache lists (``ldconfig -p``) is that file."""
    import subprocess

    ldconfig = shutil.which("ldconfig") or shutil.which("ldconfig", path="/sbin:/usr/sbin")
    if ldconfig is None:
        return False
    listing = subprocess.run(
        [ldconfig, "-p"], capture_output=True, text=True, check=False
    ).stdout.splitlines()
    try:
        target = os.stat(path)
    except OSError:
        return False
    for line in listing:
        _, arrow, listed = line.partition(" => ")
        if not arrow:
            continue
        try:
            found = os.stat(listed.strip())  # the file a listed name leads to
        except OSError:
            continue
        if (found.st_dev, found.st_ino) == (target.st_dev, target.st_ino):
            return True
    return False


def _openblas_with_64_bit_integers(library: ctypes.CDLL) -> bool:
    """OpenBLAS says how it was built in ``openblas_get_config()``; other BLAS are LP64."""
    import ctypes

    if not hasattr(library, "openblas_get_config"):
        return False
    library.openblas_get_config.restype = ctypes.c_char_p
    return b"USE64BITINT" in (library.openblas_get_config() or b"")
