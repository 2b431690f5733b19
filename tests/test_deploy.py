"""A compiled model shipped into a C program that runs where there is no Python and no venv.

The library ``python -m rewriter.compile`` writes by default is what a user ships: it must
record no path of the build machine's venv (its BLAS is the system's OpenBLAS, by soname),
and a C program linked against it must run with the venv and NumPy out of sight.
"""

from __future__ import annotations

import platform
import re
import shutil
import site
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rewriter.abi import include_dir

pytestmark = [pytest.mark.toolchain, pytest.mark.toolchain("gcc", "readelf"), pytest.mark.slow]

# A product (a BLAS call) and an elementwise function.
PRODUCT = """\
func.func public @main(%a: tensor<4x8xf32> loc("a"), %b: tensor<8x3xf32> loc("b"))
    -> (tensor<4x3xf32> {jax.result_info = "result"}) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]
       : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %1 = stablehlo.tanh %0 : tensor<4x3xf32>
  return %1 : tensor<4x3xf32>
}
"""

# Calls the entry with a[i] = (i % 5) / 4 - 0.5, b[i] = (i % 3) / 2 - 0.25 and prints the
# result, one value per line.
PRODUCT_HOST = r"""
#include <stdio.h>
#include <stdlib.h>

#include "rewriter/memref.h"

void _mlir_ciface_rw_entry_main(rw_memref_f32_2d *result, rw_memref_f32_2d *a,
                                rw_memref_f32_2d *b);

int main(void) {
    float a_data[32], b_data[24];
    for (int i = 0; i < 32; ++i) a_data[i] = (float)(i % 5) / 4.0f - 0.5f;
    for (int i = 0; i < 24; ++i) b_data[i] = (float)(i % 3) / 2.0f - 0.25f;
    rw_memref_f32_2d a = {a_data, a_data, 0, {4, 8}, {8, 1}};
    rw_memref_f32_2d b = {b_data, b_data, 0, {8, 3}, {3, 1}};
    rw_memref_f32_2d result;
    _mlir_ciface_rw_entry_main(&result, &a, &b);
    for (int i = 0; i < 12; ++i) printf("%.9g\n", result.aligned[result.offset + i]);
    free(result.allocated);
    return 0;
}
"""


def product_inputs() -> tuple[np.ndarray, np.ndarray]:
    a = (np.arange(32) % 5 / 4 - 0.5).astype(np.float32).reshape(4, 8)
    b = (np.arange(24) % 3 / 2 - 0.25).astype(np.float32).reshape(8, 3)
    return a, b


def compile_cli(module: Path, output: Path, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rewriter.compile", str(module), "-o", str(output), *options],
        capture_output=True,
        text=True,
        check=True,
    )


def dynamic_section(library: Path) -> str:
    return subprocess.run(
        ["readelf", "-d", str(library)], capture_output=True, text=True, check=True
    ).stdout


def build_machine_folders() -> list[str]:
    """Where this Python, its venv and its packages (NumPy's OpenBLAS included) live."""
    folders = {sys.prefix, sys.base_prefix, *site.getsitepackages()}
    folders.add(str(Path(np.__file__).resolve().parent.parent))
    return sorted(folder for folder in folders if Path(folder).is_dir())


def outermost(folders: list[str]) -> list[str]:
    """``folders`` without those inside another of them (hidden with it)."""
    return [f for f in folders if not any(Path(f).is_relative_to(o) and f != o for o in folders)]


@pytest.fixture(scope="module")
def shipped(tmp_path_factory) -> Path:
    """The default build of PRODUCT and a C program linked against it, copied together to
    a folder of their own (the program finds the library beside it: $ORIGIN)."""
    build = tmp_path_factory.mktemp("build")
    module = build / "product.mlir"
    module.write_text(PRODUCT)
    compile_cli(module, build / "libproduct.so")
    (build / "host.c").write_text(PRODUCT_HOST)
    subprocess.run(
        [
            "gcc",
            "-std=c99",
            "-Wall",
            "-Werror",
            f"-I{include_dir()}",
            str(build / "host.c"),
            f"-L{build}",
            "-lproduct",
            "-Wl,-rpath,$ORIGIN",
            "-o",
            str(build / "host"),
        ],
        check=True,
    )
    shipped = tmp_path_factory.mktemp("shipped")
    for name in ("libproduct.so", "host"):
        shutil.copy2(build / name, shipped / name)
    return shipped


def expected_product() -> np.ndarray:
    a, b = product_inputs()
    return np.tanh(a.astype(np.float64) @ b.astype(np.float64)).ravel()


def assert_product_output(stdout: str) -> None:
    got = np.array(stdout.split(), np.float32)
    # 8 exact products of short binary fractions, then tanh: within a few ulps of f32.
    np.testing.assert_allclose(got, expected_product(), rtol=0, atol=4e-7)


@pytest.mark.toolchain("libopenblas.so.0")
def test_the_default_library_records_no_path_of_the_build_machine(shipped: Path):
    """The BLAS is the system's OpenBLAS, by its soname; no RUNPATH, no venv, no numpy.libs
    (NumPy's OpenBLAS was found through one), no LLVM folder (MLIR's runner utilities)."""
    section = dynamic_section(shipped / "libproduct.so")
    assert "Shared library: [libopenblas.so.0]" in section
    assert "RUNPATH" not in section and "RPATH" not in section
    for folder in build_machine_folders():
        assert folder not in section


@pytest.mark.toolchain("libopenblas.so.0")
def test_the_program_runs_with_an_empty_environment(shipped: Path):
    run = subprocess.run(
        ["env", "-i", str(shipped / "host")], capture_output=True, text=True, cwd=shipped
    )
    assert run.returncode == 0, run.stderr
    assert_product_output(run.stdout)


@pytest.mark.toolchain("libopenblas.so.0")
def test_the_program_runs_with_python_and_numpy_out_of_sight(shipped: Path):
    """In a mount namespace with an empty tmpfs over this Python, its venv and its
    site-packages (NumPy's OpenBLAS among them), as on a machine that never had them."""
    if subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare -rm (an unprivileged mount namespace) is not allowed here")
    numpy_init = Path(np.__file__).resolve()
    hidden = outermost(build_machine_folders())
    hide = " && ".join(f"mount -t tmpfs none '{folder}'" for folder in hidden)
    script = f"{hide} && test ! -e '{numpy_init}' && exec env -i '{shipped / 'host'}'"
    run = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert_product_output(run.stdout)


@pytest.mark.toolchain("aarch64-linux-gnu-gcc", "qemu-aarch64", "aarch64:libopenblas.so.0")
def test_a_cross_compiled_model_links_the_targets_openblas_by_soname(tmp_path: Path):
    """--target-triple aarch64-linux-gnu with the default BLAS: the OpenBLAS of that triple
    (Debian's arm64 libopenblas0), found by clang for the triple, read without loading it
    and linked by its soname; the program runs under qemu-aarch64 with it."""
    module = tmp_path / "product.mlir"
    module.write_text(PRODUCT)
    library = tmp_path / "libproduct.so"
    compile_cli(module, library, "--target-triple", "aarch64-linux-gnu")
    section = dynamic_section(library)
    assert "Shared library: [libopenblas.so.0]" in section
    assert "RUNPATH" not in section and "RPATH" not in section
    (tmp_path / "host.c").write_text(PRODUCT_HOST)
    host = tmp_path / "host"
    subprocess.run(
        ["aarch64-linux-gnu-gcc", "-std=c99", "-Wall", "-Werror", f"-I{include_dir()}"]
        + [str(tmp_path / "host.c"), f"-L{tmp_path}", "-lproduct", "-Wl,-rpath,$ORIGIN"]
        + ["-Wl,-rpath-link,/usr/lib/aarch64-linux-gnu", "-o", str(host)],
        check=True,
    )
    # OpenBLAS's thread pool never starts under qemu-user: a plain C program calling
    # cblas_sgemm of the same libopenblas0-pthread:arm64 spins there forever, with no
    # model in it. One thread is the emulator's limit, not the library's.
    run = subprocess.run(
        ["qemu-aarch64", "-L", AARCH64_ROOT, "-E", "OPENBLAS_NUM_THREADS=1", str(host)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert_product_output(run.stdout)


def test_memref_copy_copies_between_strided_views(tmp_path: Path):
    """abi/memref_copy.c, compiled into a module whose LLVM IR calls MLIR's ``memrefCopy``
    (so that it needs no libmlir_c_runner_utils where it runs), copies as MLIR's does: from
    a strided view into another, every element, and nothing for an empty shape."""
    import ctypes

    from rewriter.abi import bridge_dir

    library = tmp_path / "libcopy.so"
    subprocess.run(
        ["gcc", "-std=c99", "-Wall", "-Werror", "-O2", "-fPIC", "-shared"]
        + [str(Path(bridge_dir()) / "memref_copy.c"), "-o", str(library)],
        check=True,
    )
    copy = ctypes.CDLL(str(library)).memrefCopy

    def unranked(view: np.ndarray, base: np.ndarray):
        rank = view.ndim
        fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p)]
        fields += [("offset", ctypes.c_int64), ("shape", ctypes.c_int64 * (2 * rank))]
        ranked = type("Ranked", (ctypes.Structure,), {"_fields_": fields})()
        ranked.allocated = ranked.aligned = base.ctypes.data
        ranked.offset = (view.ctypes.data - base.ctypes.data) // view.itemsize
        ranked.shape[:] = [*view.shape, *(s // view.itemsize for s in view.strides)]
        pair = [("rank", ctypes.c_int64), ("descriptor", ctypes.c_void_p)]
        unranked_type = type("Unranked", (ctypes.Structure,), {"_fields_": pair})
        return unranked_type(rank, ctypes.addressof(ranked)), ranked

    source = np.arange(4 * 6 * 10, dtype=np.float64).reshape(4, 6, 10)
    target = np.zeros((5, 7, 9), np.float64)
    cases = [  # (view of the source, the same view of the target)
        (np.s_[::2, 1::2, ::3], np.s_[1:3, 2:5, 1:5]),  # rank 3, strided on both sides
        (np.s_[1, 2:5, 7], np.s_[4, 1:4, 8]),  # rank 1
        (np.s_[0, 0, 0:0], np.s_[0, 0, 0:0]),  # an empty shape: nothing
    ]
    for view, into in cases:
        expected = target.copy()
        expected[into] = source[view]
        src, kept_source = unranked(source[view], source)
        dst, kept_target = unranked(target[into], target)
        copy(ctypes.c_int64(8), ctypes.byref(src), ctypes.byref(dst))
        np.testing.assert_array_equal(target, expected)
        del kept_source, kept_target


def test_a_bridged_compile_imports_no_jax(tmp_path: Path):
    """The XLA FFI header is found without importing jax (most of a small module's compile
    time went to that import), and nothing else of a compile imports it either."""
    module = Path(__file__).resolve().parent.parent / "samples/rms_norm/rms_norm.rewritten.mlir"
    script = (
        "import sys\n"
        "from rewriter.compile.__main__ import main\n"
        f"status = main([{str(module)!r}, '-o', {str(tmp_path / 'lib.so')!r}, '--ffi-bridge'])\n"
        "print(status, sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib')))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-1] == "0 []"
    assert (tmp_path / "lib.so").is_file()


@pytest.mark.jax
def test_the_xla_ffi_header_folder_is_jaxs():
    import jax.ffi

    from rewriter.compile.bridge import C_API_HEADER, xla_ffi_include_dir

    assert xla_ffi_include_dir() == jax.ffi.include_dir()
    assert (Path(xla_ffi_include_dir()) / C_API_HEADER).is_file()


CROSS_TOOLS = ("aarch64-linux-gnu-gcc", "aarch64-linux-gnu-g++", "qemu-aarch64")
AARCH64_ROOT = "/usr/aarch64-linux-gnu"  # Debian's cross libraries: qemu's -L
# The tutorial's RmsNorm, registered with JAX under a target of this file's own: JAX refuses
# a target registered twice with other addresses (test_ffi_bridge registers its own).
CROSS_TARGET = "rms_norm_cross"


def tutorial_rms_norm(x):
    import jax

    return jax.ffi.ffi_call(CROSS_TARGET, jax.ShapeDtypeStruct(x.shape, x.dtype))(
        x, eps=np.float32(1e-5)
    )


def tutorial_rms_norm_rounded(ops, x):
    """samples/ffi_bridge/rms_norm.cc's float32 operations, each a rounding site."""
    import jax.numpy as jnp

    eps = float(np.float32(1e-5))
    total = ops.sum(ops.rounded(x * x))
    mean = ops.rounded(ops.rounded(total / x.shape[-1]) + eps)
    scale = ops.rounded(1.0 / ops.rounded(jnp.sqrt(mean)), roundings=2)
    return ops.rounded(x * scale)


@pytest.mark.jax
@pytest.mark.toolchain("g++", *CROSS_TOOLS)
def test_a_model_cross_compiled_for_aarch64_runs_under_qemu(tmp_path: Path):
    """--target-triple aarch64-linux-gnu --target-cpu cortex-a76 with --ffi-bridge; the
    tutorial's handler and samples/ffi_bridge/host.c built with Debian's cross compilers;
    run under qemu-aarch64. The numbers are those of jax.jit within the float32 bound of
    tests/error_bounds.py (docs/paths.md): both within it of the exact value."""
    import ctypes

    import error_bounds as eb
    import jax
    from kernel_library import BRIDGE_SAMPLES, build_handler_library

    import rewriter
    from rewriter.abi import bridge_dir
    from rewriter.compile.bridge import xla_ffi_include_dir

    host_handler = build_handler_library(BRIDGE_SAMPLES / "rms_norm.cc", tmp_path / "host.so")
    handler = ctypes.CDLL(str(host_handler)).RmsNorm
    jax.ffi.register_ffi_target(CROSS_TARGET, jax.ffi.pycapsule(handler), platform="cpu")
    rows, cols = 8, 128
    x = ((np.arange(rows * cols) % 7) - 3).astype(np.float32).reshape(rows, cols)
    module = tmp_path / "model.rewritten.mlir"
    module.write_text(rewriter.export(tutorial_rms_norm, x).text)
    library = tmp_path / "libmodel.so"
    compile_cli(
        module,
        library,
        "--ffi-bridge",
        "--target-triple",
        "aarch64-linux-gnu",
        "--target-cpu",
        "cortex-a76",
    )
    handlers = tmp_path / "librms_norm.so"
    include = xla_ffi_include_dir()
    subprocess.run(
        ["aarch64-linux-gnu-g++", "-std=c++17", "-O2", "-fPIC", "-shared", "-w"]
        + [f"-I{include}", str(BRIDGE_SAMPLES / "rms_norm.cc"), "-o", str(handlers)],
        check=True,
    )
    host = tmp_path / "host"
    subprocess.run(
        ["aarch64-linux-gnu-gcc", "-std=c11", "-Wall", "-Werror", f"-I{bridge_dir()}"]
        + [f"-I{include}", str(BRIDGE_SAMPLES / "host.c"), "-ldl", "-o", str(host)],
        check=True,
    )
    header = subprocess.run(["readelf", "-h", str(library)], capture_output=True, text=True)
    assert re.search(r"Machine:\s+AArch64", header.stdout)
    run = subprocess.run(
        ["qemu-aarch64", "-L", AARCH64_ROOT, str(host), str(library), str(handlers)]
        + [CROSS_TARGET, "RmsNorm", str(rows), str(cols)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    first, *values = run.stdout.splitlines()
    assert first.startswith(f"before registration: @{CROSS_TARGET}: no XLA FFI handler")
    got = np.array(values, np.float32).reshape(rows, cols)
    expected = np.asarray(jax.jit(tutorial_rms_norm)(x))
    bound = eb.error_bound(tutorial_rms_norm_rounded, [x], lam=8.0)
    for name, result in (("aarch64 under qemu", got), ("jax.jit", expected)):
        off = np.abs(result.astype(np.float64) - bound.value)
        used = np.divide(off, bound.error, out=np.zeros_like(off), where=bound.error > 0)
        print(f"{name}: at most {used.max():.1%} of the bound")
        assert np.all(off <= bound.error), f"{name}: {used.max():.3g} of the bound"


@pytest.mark.parametrize(
    ("options", "message", "named"),
    [
        (
            ["--target-triple", "aarch64-linux-gnu", "--target-cpu", "znver3"],
            "error: unknown CPU 'znver3' for aarch64-unknown-linux-gnu; clang knows: a64fx, ",
            "cortex-a76",
        ),
        (
            ["--target-cpu", "cortex-a76"],
            "error: unknown CPU 'cortex-a76' for x86_64-",
            "znver3",
        ),
        (
            ["--target-triple", "aarch64-linux-gnu", "--target-cpu", "native"],
            "error: --target-cpu native is the CPU of this machine (x86_64), not one of "
            "aarch64-unknown-linux-gnu",
            "generic",
        ),
        (
            ["--target-triple", "nonsense-triple"],
            "error: clang cannot compile for the target triple nonsense-triple",
            "nonsense-triple",
        ),
    ],
    ids=["aarch64", "host", "native", "triple"],
)
def test_a_wrong_target_fails_before_any_stage(tmp_path: Path, options, message, named):
    """Named once, with the triple's CPUs, before the pipeline runs: no stage is written."""
    if "x86_64" in message and platform.machine() != "x86_64":
        pytest.skip("the message names an x86-64 build machine")
    module = Path(__file__).resolve().parent.parent / "samples/rms_norm/rms_norm.rewritten.mlir"
    temps = tmp_path / "temps"
    run = subprocess.run(
        [sys.executable, "-m", "rewriter.compile", str(module), "-o", str(tmp_path / "lib.so")]
        + ["--keep-temps", str(temps), *options],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    (line,) = run.stderr.splitlines()
    assert line.startswith(f"{module}: {message}")
    assert named in line
    assert not temps.exists() and not (tmp_path / "lib.so").exists()


@pytest.mark.jax
@pytest.mark.toolchain(*CROSS_TOOLS)
def test_the_deploy_sample_cross_compiled_runs_statically_under_qemu(tmp_path: Path):
    """samples/deploy's program, the model's static library and C API for aarch64
    (llvm-objcopy and llvm-ar on aarch64 objects), the handler by Debian's cross g++, one
    static executable; 1,000 calls with the workspace under qemu-aarch64, the numbers
    within the float32 bound of the exact rms_norm (samples/rms_norm: 10x10, eps 1e-5)."""
    import error_bounds as eb

    repo = Path(__file__).resolve().parent.parent
    include = tmp_path / "include"
    include.mkdir()
    compile_cli(
        repo / "samples/rms_norm/rms_norm.rewritten.mlir",
        tmp_path / "libmodel.a",
        "--ffi-bridge",
        "--header",
        str(include / "model.h"),
        "--prefix",
        "model_",
        "--include-dir",
        str(include),
        "--target-triple",
        "aarch64-linux-gnu",
    )
    program = tmp_path / "deploy"
    subprocess.run(
        ["aarch64-linux-gnu-g++", "-std=c++17", "-O2", "-w", "-static", f"-I{include}"]
        + [str(repo / "samples/deploy/main.cc"), str(repo / "samples/ffi_bridge/rms_norm.cc")]
        + [str(tmp_path / "libmodel.a"), "-lm", "-o", str(program)],
        check=True,
    )
    run = subprocess.run(["qemu-aarch64", str(program), "1000"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    got = np.array(run.stdout.split(), np.float32).reshape(10, 10)
    x = ((np.arange(100) % 7) - 3).astype(np.float32).reshape(10, 10)
    bound = eb.error_bound(tutorial_rms_norm_rounded, [x], lam=8.0)
    assert np.all(np.abs(got.astype(np.float64) - bound.value) <= bound.error)
