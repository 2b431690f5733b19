"""Build the sample kernels (samples/kernels/) into one shared library and hand them to JAX.

The library is a cffi extension module (API mode): its ``lib`` exposes the ``_mlir_ciface_``
entries and the counter functions declared in ``CDEF``, and cffi checks those declarations
against ``samples/kernels/kernels.h`` when it compiles. The same file also exports the XLA
FFI handler symbols (``HANDLERS``), which ``register_with_jax`` loads with ctypes. Both
loaders open the same file, so they share one copy of the kernels' global state.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util
import re
import runpy
import subprocess
import types
from pathlib import Path

import cffi
import jax

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"
KERNELS = REPO / "samples" / "kernels"
MODULE_NAME = "_rewriter_sample_kernels"

# FFI target name -> handler symbol in the library.
HANDLERS = {
    "rms_norm": "RmsNorm",
    "sum_and_max": "SumAndMax",
    "attr_kernel": "AttrKernel",
    "count_calls": "CountCalls",
    "row_scale": "RowScale",
    "scale": "Scale",
    "offset": "Offset",
    "step": "Step",
    "col_major_kernel": "ColMajor",
}


def _descriptor(name: str, c_type: str, rank: int) -> str:
    return (
        f"typedef struct {{ {c_type} *allocated; {c_type} *aligned; int64_t offset;"
        f" int64_t sizes[{rank}]; int64_t strides[{rank}]; }} {name};\n"
    )


def _kernel_declarations() -> str:
    """The declarations of samples/kernels/kernels.h, without comments and preprocessor lines
    (what cffi's cdef can read), so the header stays the one list of entry points."""
    text = (KERNELS / "kernels.h").read_text()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
    body = text[
        text.index('extern "C" {') + len('extern "C" {') : text.rindex("#ifdef __cplusplus")
    ]
    lines = [line for line in body.splitlines() if not line.lstrip().startswith("#")]
    return "\n".join(lines)


# What Python calls: the descriptor types of abi/include/rewriter/memref.h that the entries
# use, and the declarations of samples/kernels/kernels.h.
CDEF = (
    "".join(
        _descriptor(f"rw_memref_{element}_{rank}d", c_type, rank)
        for element, c_type, rank in [
            ("f32", "float", 1),
            ("f32", "float", 2),
            ("f64", "double", 1),
            ("i8", "int8_t", 1),
            ("i32", "int32_t", 1),
            ("i64", "int64_t", 1),
        ]
    )
    + _kernel_declarations()
    + "\nvoid free(void *ptr);\n"
)


def build_kernel_library(build_dir: Path) -> Path:
    """Compile every ``samples/kernels/*.cc`` into one shared library; return its path."""
    builder = cffi.FFI()
    builder.cdef(CDEF)
    builder.set_source(
        MODULE_NAME,
        '#include <stdlib.h>\n#include "kernels.h"\n',
        source_extension=".cpp",
        sources=[str(path) for path in sorted(KERNELS.glob("*.cc"))],
        include_dirs=[jax.ffi.include_dir(), str(REPO / "abi" / "include"), str(KERNELS)],
        extra_compile_args=["-std=c++17", "-O2"],
        libraries=["stdc++"],
    )
    return Path(builder.compile(tmpdir=str(build_dir)))


BRIDGE_SAMPLES = REPO / "samples" / "ffi_bridge"


def build_handler_library(source: Path, output: Path) -> Path:
    """A C++ file of XLA FFI handlers, and nothing else, as a shared library (g++)."""
    subprocess.run(
        [
            "g++",
            "-std=c++17",
            "-O2",
            "-fPIC",
            "-shared",
            "-w",
            f"-I{jax.ffi.include_dir()}",
            str(source),
            "-o",
            str(output),
        ],
        check=True,
    )
    return output


@functools.cache
def load_kernels(library_path: Path):
    """The built library as its cffi module: ``.lib`` (the C functions) and ``.ffi``."""
    spec = importlib.util.spec_from_file_location(MODULE_NAME, library_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Targets registered in this process. jax keeps registrations for the life of the process,
# so a second registration (another fixture, another build) is skipped, not repeated.
_REGISTERED: set[str] = set()


def register_with_jax(library_path: Path) -> None:
    """Register every handler of the library as a CPU FFI target, once per process."""
    library = ctypes.CDLL(str(library_path))
    for target, symbol in HANDLERS.items():
        if target not in _REGISTERED:
            handler = jax.ffi.pycapsule(getattr(library, symbol))
            jax.ffi.register_ffi_target(target, handler, platform="cpu")
            _REGISTERED.add(target)


def sample(name: str) -> types.SimpleNamespace:
    """The globals of ``samples/NAME/export.py``; its ``__main__`` block does not run."""
    return types.SimpleNamespace(**runpy.run_path(str(SAMPLES / name / "export.py")))


# Samples whose rewritten module runs against this library with plain float32 inputs:
# sample -> (function in its export.py, input shapes).
ROUND_TRIP = {
    "rms_norm": ("rms_norm", [(10, 10)]),
    "name_clash": ("f", [(10, 10)]),
    "two_targets": ("f", [(6,)]),
    "while_and_private": ("f", [(4,)]),
    "two_results": ("sum_and_max", [(4, 6)]),
    "column_major": ("f", [(3, 5)]),
}


# How the two paths must agree with JAX: floats to rtol 1e-6, everything else exactly.
RTOL = 1e-6


def assert_agree(got, expected) -> None:
    """One result of a compiled (or IREE) run against JAX's."""
    import numpy as np

    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype
    assert got.shape == expected.shape
    if np.issubdtype(expected.dtype, np.floating):
        np.testing.assert_allclose(got, expected, rtol=RTOL, atol=0)
    else:
        np.testing.assert_array_equal(got, expected)


def assert_all_agree(got, expected) -> None:
    """A result or a tuple of results against JAX's."""
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for one, other in zip(got, expected, strict=True):
            assert_agree(one, other)
    else:
        assert_agree(got, expected)
