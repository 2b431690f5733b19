"""OpenBLAS's kernels named from the CPU's features before it loads (``openblas_core.py``).

An OpenBLAS older than the CPU takes it for the oldest x86-64 (``Prescott``, SSE3) and its
products run 6x slower; ``load`` names the kernels the CPU's features allow first.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest
from mlir_tools import require_tool

from rewriter.compile.elf_symbols import needed_libraries
from rewriter.compile.openblas_core import VARIABLE, core_for, cpu_flags, name_openblas_core

ROOT = Path(__file__).resolve().parents[1]
AVX512 = {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"}


@pytest.mark.parametrize(
    ("flags", "core"),
    [
        ({"sse3", "avx", "avx2", "fma", *AVX512}, "SkylakeX"),
        ({"sse3", "avx", "avx2", "fma", "avx512f"}, "Haswell"),  # F alone: no SkylakeX kernel
        ({"sse3", "avx", "avx2", "fma"}, "Haswell"),
        ({"sse3", "avx", "avx2"}, "Sandybridge"),  # AVX2 without FMA
        ({"sse3", "avx"}, "Sandybridge"),
        ({"sse3", "ssse3", "sse4_2"}, None),  # OpenBLAS's own choice
    ],
)
def test_the_kernels_are_the_best_the_features_allow(flags, core):
    assert core_for(frozenset(flags)) == core


def _cpuinfo(tmp_path: Path, flags: str) -> str:
    path = tmp_path / "cpuinfo"
    path.write_text(f"processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: {flags}\n\n")
    return str(path)


@pytest.mark.skipif(
    (platform.system(), platform.machine()) != ("Linux", "x86_64"), reason="x86-64 Linux only"
)
def test_the_variable_is_set_for_a_library_that_needs_openblas(tmp_path):
    cpuinfo = _cpuinfo(tmp_path, "fpu sse3 avx avx2 fma")
    environ: dict[str, str] = {}
    assert name_openblas_core(["libm.so.6", "libc.so.6"], environ, cpuinfo) is None
    assert environ == {}  # no OpenBLAS: nothing set
    assert name_openblas_core(["libopenblas.so.0", "libm.so.6"], environ, cpuinfo) == "Haswell"
    assert environ == {VARIABLE: "Haswell"}


def test_a_variable_the_user_set_is_kept(tmp_path):
    cpuinfo = _cpuinfo(tmp_path, "fpu sse3 avx avx2 fma")
    for value in ("Prescott", ""):
        environ = {VARIABLE: value}
        assert name_openblas_core(["libopenblas.so.0"], environ, cpuinfo) is None
        assert environ == {VARIABLE: value}


def test_flags_are_read_from_the_first_cpu(tmp_path):
    assert cpu_flags(_cpuinfo(tmp_path, "fpu avx avx2")) == {"fpu", "avx", "avx2"}
    assert cpu_flags(str(tmp_path / "missing")) == frozenset()


_CHILD = """
import ctypes, sys
from rewriter.compile import load
load(sys.argv[1])
blas = ctypes.CDLL("libopenblas.so.0")
blas.openblas_get_corename.restype = ctypes.c_char_p
print(blas.openblas_get_corename().decode())
"""


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.iree
@pytest.mark.jax
def test_a_loaded_model_runs_openblas_with_the_kernels_of_this_cpu(tmp_path):
    """OpenBLAS, loaded with a model in a process without the variable, says it runs the
    kernels this CPU's features allow (Debian's 0.3.21 said Prescott on this machine's
    Xeon without ``load`` naming them)."""
    require_tool("libopenblas.so.0")
    expected = core_for(cpu_flags())
    if expected is None or (platform.system(), platform.machine()) != ("Linux", "x86_64"):
        pytest.skip("a CPU without AVX, or not x86-64 Linux: OpenBLAS's own choice stands")
    import numpy as np

    import rewriter
    from rewriter.compile import compile_module

    matrix = np.ones((64, 64), np.float32)
    library = tmp_path / "libmodel.so"
    compile_module(
        rewriter.rewrite(rewriter.export(lambda a, b: a @ b, matrix, matrix).text).text, library
    )
    environment = {k: v for k, v in os.environ.items() if k != VARIABLE}
    run = subprocess.run(
        [sys.executable, "-c", _CHILD, str(library)],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "libopenblas.so.0" in needed_libraries(library)
    assert run.stdout.strip().lower() == expected.lower()
