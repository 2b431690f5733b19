"""Which BLAS computes the matrix products of a compiled module, and how to link it.

By default the OpenBLAS that NumPy's wheel ships (``numpy.libs/libscipy_openblas64_*.so``)
and, failing that, SciPy's (``scipy.libs/libscipy_openblas*.so``): every user of the compiled
path has NumPy, so no BLAS needs installing. Any other library with the CBLAS interface can
be named instead (``--blas PATH``); its symbol names and integer width are read from the
library itself.
"""

from __future__ import annotations

import ctypes
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from ..abi import bridge_dir
from .toolchain import ToolchainError

# (symbol prefix, symbol suffix, integer type) of the CBLAS builds we know, most specific first.
NAMINGS = (
    ("scipy_cblas_", "64_", "int64_t"),  # NumPy's and scipy-openblas64 wheels (ILP64)
    ("scipy_cblas_", "", "int32_t"),  # SciPy's wheel (scipy-openblas32)
    ("cblas_", "64_", "int64_t"),  # ILP64 OpenBLAS built with a symbol suffix
    ("cblas_", "", "int32_t"),  # libopenblas, libcblas, BLIS, MKL's LP64 interface
)

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
    """The merge sort that sorts of a compiled module call (``library_calls.py``)."""
    return Path(bridge_dir()) / "sort_calls.c"


def resolve_blas(choice: str | Path | None) -> Blas | None:
    """``"auto"``: the bundled OpenBLAS (None when there is none); ``None`` or ``"none"``: no
    BLAS; otherwise the path of a CBLAS library (ToolchainError when it is not one)."""
    if choice is None or choice == "none":
        return None
    if choice == "auto":
        return bundled_blas()
    path = Path(choice)
    if not path.is_file():
        raise ToolchainError(f"BLAS library {path} does not exist")
    found = probe(path)
    if found is None:
        names = ", ".join(f"{p}sgemm{s}" for p, s, _ in NAMINGS)
        raise ToolchainError(f"{path} is not a CBLAS library: it defines none of {names}")
    return found


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
    """The CBLAS naming that ``path`` defines, read by loading it."""
    try:
        library = ctypes.CDLL(str(path))
    except OSError:
        return None
    for prefix, suffix, integer in NAMINGS:
        if all(hasattr(library, f"{prefix}{t}gemm{suffix}") for t in "sdcz"):
            if integer == "int32_t" and _openblas_with_64_bit_integers(library):
                integer = "int64_t"  # an ILP64 OpenBLAS that kept the plain names
            return Blas(path.resolve(), prefix, suffix, integer)
    return None


def _openblas_with_64_bit_integers(library: ctypes.CDLL) -> bool:
    """OpenBLAS says how it was built in ``openblas_get_config()``; other BLAS are LP64."""
    if not hasattr(library, "openblas_get_config"):
        return False
    library.openblas_get_config.restype = ctypes.c_char_p
    return b"USE64BITINT" in (library.openblas_get_config() or b"")
