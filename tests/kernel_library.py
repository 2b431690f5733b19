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
from pathlib import Path

import cffi
import jax

REPO = Path(__file__).resolve().parent.parent
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
}


def _descriptor(name: str, c_type: str, rank: int) -> str:
    return (
        f"typedef struct {{ {c_type} *allocated; {c_type} *aligned; int64_t offset;"
        f" int64_t sizes[{rank}]; int64_t strides[{rank}]; }} {name};\n"
    )


# What Python calls: the descriptor types of abi/include/rewriter/memref.h that the entries
# use, and the prototypes of samples/kernels/kernels.h.
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
    + """
typedef struct { rw_memref_f32_1d result0; rw_memref_i32_1d result1; } sum_and_max_results;

void _mlir_ciface_rms_norm(rw_memref_f32_2d *result, rw_memref_f32_2d *x, float eps);
void _mlir_ciface_sum_and_max(sum_and_max_results *results, rw_memref_f32_2d *x, float scale);
void _mlir_ciface_attr_kernel(rw_memref_f64_1d *result, rw_memref_f32_1d *x, uint16_t bf16,
                              bool boolean, uint16_t f16, float f32, double f64,
                              rw_memref_f32_1d *farr, int16_t i16, int32_t i32, int64_t i64,
                              int8_t i8, rw_memref_i64_1d *iarr, rw_memref_i8_1d *text,
                              uint16_t u16, uint32_t u32, uint64_t u64, uint8_t u8);
void _mlir_ciface_count_calls(rw_memref_f32_1d *x, int32_t tag);
int64_t count_calls_value(void);
void count_calls_reset(void);
void _mlir_ciface_row_scale(rw_memref_f32_2d *result, rw_memref_f32_2d *x,
                            rw_memref_i32_1d *result_shape, float factor);
void _mlir_ciface_scale(rw_memref_f32_1d *result, rw_memref_f32_1d *x, float factor);
void _mlir_ciface_offset(rw_memref_f32_1d *result, rw_memref_f32_1d *x, float delta);
void _mlir_ciface_step(rw_memref_f32_1d *result, rw_memref_f32_1d *x, float rate);

void free(void *ptr);
"""
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
