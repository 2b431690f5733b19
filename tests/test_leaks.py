"""No leaks across many calls of a compiled module, checked by valgrind outside Python.

Everything is built with the plain toolchain: the sample kernels as an ordinary shared
library (g++), each rewritten module linked against it (``compile_module(..., link=...)``),
and a small C harness (gcc) that builds its input descriptors with
``abi/include/rewriter/memref.h``, calls ``_mlir_ciface_rw_entry_main`` many times and frees
each result's ``allocated``, as abi/README.md says the caller must. valgrind must find no
definitely lost block. A negative control, the same harness built not to free its results,
shows that the check does catch a leak.
"""

from __future__ import annotations

import math
import re
import subprocess
import time
from pathlib import Path

import jax
import pytest
from kernel_library import REPO
from mlir_tools import valgrind_environment

from rewriter.compile import compile_module
from rewriter.compile.build import PORTABLE

pytestmark = [
    pytest.mark.toolchain,
    pytest.mark.toolchain("gcc", "g++", "valgrind"),
    pytest.mark.jax,
    pytest.mark.slow,
]

SAMPLES = REPO / "samples"
INCLUDE = REPO / "abi" / "include"

# sample -> input shapes of main. Every main here takes float32 tensors and returns one
# rank-2 float32 tensor.
MODELS = {"rms_norm": [(10, 10)], "mlp_model": [(8, 64), (64, 128), (128,)]}
CALLS = 1000

HARNESS = r"""#include <stdio.h>
#include <stdlib.h>

#include "rewriter/memref.h"

void _mlir_ciface_rw_entry_main(rw_memref_f32_2d *result, %(parameters)s);

/* A fixed pseudo-random pattern in [-1, 1). */
static void fill(float *data, int64_t count, unsigned state)
{
    int64_t k;
    for (k = 0; k < count; ++k) {
        state = state * 1103515245u + 12345u;
        data[k] = (float)((state >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
}

int main(int argc, char **argv)
{
    long calls = argc > 1 ? atol(argv[1]) : 1, i;
    double checksum = 0.0;
%(inputs)s
    for (i = 0; i < calls; ++i) {
        rw_memref_f32_2d result;
        _mlir_ciface_rw_entry_main(&result, %(arguments)s);
        checksum += result.aligned[result.offset];
#ifndef SKIP_FREE
        free(result.allocated);
#endif
    }
%(frees)s
    printf("%%ld calls, checksum %%g\n", calls, checksum);
    return 0;
}
"""


def harness_source(shapes: list[tuple[int, ...]]) -> str:
    types = [f"rw_memref_f32_{len(shape)}d" for shape in shapes]
    inputs = "".join(
        f"    {t} in{k};\n"
        f"    if ({t}_alloc(&in{k}, (const int64_t[]){{{', '.join(map(str, shape))}}}))\n"
        f"        abort();\n"
        f"    fill(in{k}.aligned, {t}_num_elements(&in{k}), {k + 1}u);\n"
        for k, (t, shape) in enumerate(zip(types, shapes, strict=True))
    )
    return HARNESS % {
        "parameters": ", ".join(f"{t} *in{k}" for k, t in enumerate(types)),
        "inputs": inputs,
        "arguments": ", ".join(f"&in{k}" for k in range(len(shapes))),
        "frees": "".join(f"    free(in{k}.allocated);\n" for k in range(len(shapes))),
    }


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, check=False, **kwargs)


def build(command: list[str]) -> None:
    process = run(command)
    assert process.returncode == 0, f"{' '.join(command)}\n{process.stderr}"


@pytest.fixture(scope="module")
def kernel_so(tmp_path_factory) -> Path:
    """samples/kernels as a plain shared library: no Python, no cffi."""
    output = tmp_path_factory.mktemp("kernels") / "libkernels.so"
    kernels = SAMPLES / "kernels"
    build(
        ["g++", "-std=c++17", "-O1", "-fPIC", "-shared", *map(str, sorted(kernels.glob("*.cc")))]
        + [f"-I{jax.ffi.include_dir()}", f"-I{INCLUDE}", f"-I{kernels}", "-o", str(output)]
    )
    return output


@pytest.fixture(scope="module")
def harness(tmp_path_factory, kernel_so):
    """harness(name, skip_free=False): an executable calling the compiled sample ``name``."""
    directory = tmp_path_factory.mktemp("harness")
    modules = {}

    def get(name: str, skip_free: bool = False) -> Path:
        if name not in modules:
            modules[name] = directory / f"lib{name}.so"
            rewritten = SAMPLES / name / f"{name}.rewritten.mlir"
            # Portable code: valgrind has no AVX-512, which native code uses on a CPU
            # that has it (SIGILL under valgrind).
            compile_module(rewritten, modules[name], link=[str(kernel_so)], target_cpu=PORTABLE)
        source = directory / f"{name}.c"
        source.write_text(harness_source(MODELS[name]), encoding="utf-8")
        executable = directory / f"{name}{'-skip-free' if skip_free else ''}"
        build(
            ["gcc", "-std=c99", "-Wall", "-Werror", "-O1", "-g", f"-I{INCLUDE}", str(source)]
            + (["-DSKIP_FREE"] if skip_free else [])
            + [str(modules[name]), f"-Wl,-rpath,{directory}", "-o", str(executable)]
        )
        return executable

    return get


def valgrind(executable: Path, calls: int) -> subprocess.CompletedProcess:
    command = ["valgrind", "--leak-check=full", "--error-exitcode=3"]
    command += ["--errors-for-leak-kinds=definite", str(executable), str(calls)]
    start = time.perf_counter()
    process = run(command, timeout=600, env=valgrind_environment())
    summary = re.findall(
        r"^==\d+== +((?:total heap|.* lost:|All heap|ERROR).*)$", process.stderr, re.M
    )
    seconds = time.perf_counter() - start
    print(
        f"\n{executable.name} x{calls}: {seconds:.1f} s under valgrind, exit {process.returncode}"
    )
    print("\n".join(f"  {line}" for line in summary))
    return process


def definitely_lost(process: subprocess.CompletedProcess) -> int:
    found = re.search(r"definitely lost: ([\d,]+) bytes", process.stderr)
    return int(found.group(1).replace(",", "")) if found else 0


@pytest.mark.parametrize("name", sorted(MODELS))
def test_many_calls_leak_nothing(name, harness):
    process = valgrind(harness(name), CALLS)
    assert process.returncode == 0, process.stderr
    checksum = re.fullmatch(rf"{CALLS} calls, checksum (\S+)\n", process.stdout)
    assert checksum and math.isfinite(float(checksum.group(1))), process.stdout
    assert "All heap blocks were freed" in process.stderr or definitely_lost(process) == 0
    assert re.search(r"ERROR SUMMARY: 0 errors", process.stderr), process.stderr


def test_negative_control_unfreed_results_are_definitely_lost(harness):
    """Without free(result.allocated) valgrind must fail: the check can see a leak."""
    calls = 20
    process = valgrind(harness("rms_norm", skip_free=True), calls)
    assert process.returncode == 3, process.stderr
    # Each result is 10 x 10 float32; the last one may still be held on the stack.
    assert definitely_lost(process) >= (calls - 1) * 10 * 10 * 4, process.stderr
