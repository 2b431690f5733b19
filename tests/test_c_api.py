"""A model's C API: ``python -m rewriter.compile ... -o libNAME.a --header NAME.h --prefix P``.

The header is C99 and C++17; every function checks its arguments before the compiled code
runs; every name the library exports starts with the prefix and nothing else is global, so
two models and their XLA FFI handlers link into one static C++ program.
"""

from __future__ import annotations

import ctypes
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from mlir_tools import valgrind_environment

from rewriter.plan.c_names import c_name_part, name_problem, safe_c_name

REPO = Path(__file__).resolve().parent.parent
BRIDGE_SAMPLES = REPO / "samples" / "ffi_bridge"

pytestmark = [pytest.mark.toolchain, pytest.mark.toolchain("gcc", "g++", "nm")]


def run_under_valgrind(source: str, library: Path, program: Path):
    """``source`` (C99, with the header beside ``library``) built into ``program`` against
    the static ``library``, then run under valgrind, leaks counted as errors."""
    (program.parent / f"{program.name}.c").write_text(source)
    subprocess.run(
        ["gcc", "-std=c99", "-Wall", "-Werror", f"-I{program.parent}",
         str(program.parent / f"{program.name}.c"), str(library), "-lm", "-o", str(program)],
        check=True,
    )  # fmt: skip
    return subprocess.run(
        ["valgrind", "--error-exitcode=3", "--leak-check=full", "--errors-for-leak-kinds=all",
         str(program)],
        capture_output=True,
        text=True,
        env=valgrind_environment(),
    )  # fmt: skip


def compile_cli(module: Path, output: Path, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rewriter.compile", str(module), "-o", str(output), *options],
        capture_output=True,
        text=True,
    )


NORM_TARGET = "rms_norm_c_api"  # the tutorial's RmsNorm
ROOT_TARGET = "checked_sqrt_c_api"  # CheckedSqrt of samples/ffi_bridge/checks.cc


def tutorial_rms_norm(x):
    import jax

    return jax.ffi.ffi_call(NORM_TARGET, jax.ShapeDtypeStruct(x.shape, x.dtype))(
        x, eps=np.float32(1e-5)
    )


def root_model(x):
    import jax

    root = jax.ffi.ffi_call(ROOT_TARGET, jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
    return root * 2.0 + 1.0, x.sum(axis=1)


@pytest.fixture(scope="module")
def jax_handlers(tmp_path_factory) -> None:
    """The tutorial's RmsNorm and CheckedSqrt registered with JAX, once, under targets of
    this file's own (JAX refuses a target registered twice with other addresses)."""
    import jax
    from kernel_library import build_handler_library

    folder = tmp_path_factory.mktemp("jax_handlers")
    norm = build_handler_library(BRIDGE_SAMPLES / "rms_norm.cc", folder / "librms.so")
    root = build_handler_library(BRIDGE_SAMPLES / "checks.cc", folder / "libchecks.so")
    for target, function in (
        (NORM_TARGET, ctypes.CDLL(str(norm)).RmsNorm),
        (ROOT_TARGET, ctypes.CDLL(str(root)).CheckedSqrt),
    ):
        jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(function), platform="cpu")


# Two models and two handlers in one static C++ program. norm_ (the tutorial's rms_norm)
# on a 4x16 matrix, root_ (checked_sqrt, then compiled ops, and a second result) on 3x5;
# then the errors: a negative element (the handler's), and a wrong shape (the entry's).
TWO_MODELS = r"""
#include <cstdio>
#include <vector>

#include "norm.h"
#include "root.h"

extern "C" struct XLA_FFI_Error *RmsNorm(struct XLA_FFI_CallFrame *);
extern "C" struct XLA_FFI_Error *CheckedSqrt(struct XLA_FFI_CallFrame *);

int main() {
  if (norm_register_handler(norm_required_target(0), RmsNorm) != NORM_STATUS_OK ||
      root_register_handler(root_required_target(0), CheckedSqrt) != ROOT_STATUS_OK) {
    std::printf("register: %s %s\n", norm_last_error(), root_last_error());
    return 1;
  }
  std::vector<float> x(4 * 16), y(4 * 16), a(3 * 5), b(3 * 5), s(3);
  for (int i = 0; i < 4 * 16; ++i) x[i] = float(i % 7) - 3.0f;
  for (int i = 0; i < 3 * 5; ++i) a[i] = float(i) / 4.0f;
  norm_f32_2d in{x.data(), {4, 16}}, out{y.data(), {4, 16}};
  root_f32_2d in2{a.data(), {3, 5}}, out2{b.data(), {3, 5}};
  root_f32_1d sums{s.data(), {3}};
  if (norm_main(&in, &out) != NORM_STATUS_OK) return std::printf("%s\n", norm_last_error()), 1;
  if (root_main(&in2, &out2, &sums) != ROOT_STATUS_OK)
    return std::printf("%s\n", root_last_error()), 1;
  for (float v : y) std::printf("%.9g\n", v);
  for (float v : b) std::printf("%.9g\n", v);
  for (float v : s) std::printf("%.9g\n", v);
  a[1] = -1.0f;
  int status = root_main(&in2, &out2, &sums);
  std::printf("status %d: %s\n", status, root_last_error());
  norm_f32_2d wrong{x.data(), {2, 16}};
  status = norm_main(&wrong, &out);
  std::printf("status %d: %s\n", status, norm_last_error());
  std::printf("after: %s\n", norm_last_error() ? "error kept" : "cleared");
  return 0;
}
"""


@pytest.fixture(scope="module")
def two_models(tmp_path_factory, jax_handlers):
    """The two models as static and as shared libraries with headers, and their
    handlers' objects."""
    import jax

    import rewriter
    from rewriter.compile.bridge import xla_ffi_include_dir

    folder = tmp_path_factory.mktemp("two")
    x = ((np.arange(4 * 16) % 7) - 3).astype(np.float32).reshape(4, 16)
    a = (np.arange(3 * 5) / 4).astype(np.float32).reshape(3, 5)
    for name, function, argument in (("norm", tutorial_rms_norm, x), ("root", root_model, a)):
        module = folder / f"{name}.rewritten.mlir"
        module.write_text(rewriter.export(function, argument).text)
        for suffix in (".a", ".so"):
            run = compile_cli(
                module,
                folder / f"lib{name}{suffix}",
                "--ffi-bridge",
                "--header",
                str(folder / f"{name}.h"),
                "--prefix",
                f"{name}_",
            )
            assert run.returncode == 0, run.stderr
    objects = []
    for source in ("rms_norm.cc", "checks.cc"):
        objects.append(folder / source.replace(".cc", ".o"))
        subprocess.run(
            ["g++", "-std=c++17", "-O2", "-w", f"-I{xla_ffi_include_dir()}", "-c"]
            + [str(BRIDGE_SAMPLES / source), "-o", str(objects[-1])],
            check=True,
        )
    expected = [
        np.asarray(jax.jit(tutorial_rms_norm)(x)),
        *(np.asarray(r) for r in jax.jit(root_model)(a)),
    ]
    return folder, objects, expected


def test_two_models_and_two_handlers_link_into_one_static_program(two_models):
    folder, objects, (normed, rooted, sums) = two_models
    (folder / "main.cc").write_text(TWO_MODELS)
    program = folder / "two_models"
    link = subprocess.run(
        ["g++", "-std=c++17", "-Wall", "-Werror", "-static", f"-I{folder}"]
        + [str(folder / "main.cc"), *map(str, objects), str(folder / "libnorm.a")]
        + [str(folder / "libroot.a"), "-lm", "-o", str(program)],
        capture_output=True,
        text=True,
    )
    assert link.returncode == 0, link.stderr
    run = subprocess.run([str(program)], capture_output=True, text=True, env={})
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    values = np.array(lines[: 64 + 15 + 3], np.float32)
    np.testing.assert_array_equal(values[:64], normed.ravel())  # the same handler, bit for bit
    np.testing.assert_allclose(values[64:79], rooted.ravel(), rtol=1e-6)
    np.testing.assert_allclose(values[79:], sums, rtol=1e-6)
    assert lines[82:] == [
        "status 2: main: XLA FFI handler for 'checked_sqrt_c_api' failed: checked_sqrt: "
        "element 1 is negative",
        "status 1: main: argument 0 ('x') is 2x16, declared 4x16",
        "after: error kept",
    ]


def test_two_shared_models_and_two_handlers_link_into_one_program(two_models):
    """The same program, linked against the two models' shared objects: each library
    exports its own names only, so neither binds to the other's bridge or entries."""
    folder, objects, (normed, rooted, sums) = two_models
    (folder / "main_shared.cc").write_text(TWO_MODELS)
    program = folder / "two_shared_models"
    link = subprocess.run(
        ["g++", "-std=c++17", "-Wall", "-Werror", f"-I{folder}", str(folder / "main_shared.cc")]
        + [*map(str, objects), str(folder / "libnorm.so"), str(folder / "libroot.so")]
        + [f"-Wl,-rpath,{folder}", "-lm", "-o", str(program)],
        capture_output=True,
        text=True,
    )
    assert link.returncode == 0, link.stderr
    run = subprocess.run([str(program)], capture_output=True, text=True, env={})
    assert run.returncode == 0, run.stdout + run.stderr
    values = np.array(run.stdout.splitlines()[: 64 + 15 + 3], np.float32)
    np.testing.assert_array_equal(values[:64], normed.ravel())
    np.testing.assert_allclose(values[64:79], rooted.ravel(), rtol=1e-6)
    np.testing.assert_allclose(values[79:], sums, rtol=1e-6)


@pytest.mark.parametrize("suffix", [".a", ".so"])
def test_every_exported_symbol_carries_the_prefix(two_models, suffix):
    folder, _, _ = two_models
    dynamic = ["-D"] if suffix == ".so" else []
    for name in ("norm", "root"):
        listing = subprocess.run(
            ["nm", *dynamic, "--defined-only", "--extern-only", "--format=just-symbols"]
            + [str(folder / f"lib{name}{suffix}")],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        symbols = [line for line in listing.splitlines() if line and not line.endswith(":")]
        assert f"{name}_main" in symbols and f"{name}_main_alloc" in symbols
        assert [s for s in symbols if not s.startswith(f"{name}_")] == []


def test_python_loads_a_shared_model_whose_names_carry_its_prefix(two_models, jax_handlers):
    """``load`` finds the prefix in the symbol table and serves the bridge's targets."""
    from kernel_library import build_handler_library

    from rewriter.compile import load

    folder, _, (normed, _, _) = two_models
    handlers = build_handler_library(BRIDGE_SAMPLES / "rms_norm.cc", folder / "librms_py.so")
    model = load(
        folder / "libnorm.so", ffi_handlers={NORM_TARGET: ctypes.CDLL(str(handlers)).RmsNorm}
    )
    x = ((np.arange(4 * 16) % 7) - 3).astype(np.float32).reshape(4, 16)
    np.testing.assert_array_equal(model.main(x), normed)


def test_the_header_is_c99_and_cpp17_and_names_jaxs_arguments(two_models):
    folder, _, _ = two_models
    header = folder / "root.h"
    for compiler, language, standard in (("gcc", "c", "c99"), ("g++", "c++", "c++17")):
        run = subprocess.run(
            [compiler, f"-std={standard}", "-x", language, "-fsyntax-only", "-Wall"]
            + ["-Wextra", "-pedantic", "-Werror", str(header)],
            capture_output=True,
            text=True,
        )
        assert run.returncode == 0, run.stderr
    text = header.read_text()
    assert ' *   arg0: f32[3,5] (JAX: "x")' in text
    assert ' *   result0: f32[3,5] (JAX: "result[0]")' in text
    assert ' *   result1: f32[3] (JAX: "result[1]")' in text
    assert (
        "int root_main(const root_f32_2d *arg0, root_f32_2d *result0, root_f32_1d *result1);"
        in text
    )


# Passes a 32x128 buffer where 64x128 is declared, a NULL argument, a result buffer of the
# wrong shape, then calls right (both variants) and queries the shapes.
CHECKS = r"""
#include <stdio.h>
#include <stdlib.h>

#include "model.h"

int main(void) {
    float *small = malloc(32 * 128 * sizeof *small), *big = calloc(64 * 128, sizeof *big);
    float *out = malloc(64 * 128 * sizeof *out);
    model_f32_2d x = {small, {32, 128}}, y = {out, {64, 128}}, z = {out, {64, 127}};
    model_f32_2d right = {big, {64, 128}}, got = {NULL, {0, 0}};
    const model_tensor_info *info = model_main_argument(0);
    int status;
    status = model_main(&x, &y);
    printf("%d %s\n", status, model_last_error());
    status = model_main(NULL, &y);
    printf("%d %s\n", status, model_last_error());
    status = model_main(&right, &z);
    printf("%d %s\n", status, model_last_error());
    status = model_main(&right, &y);
    printf("%d %s %g\n", status, model_last_error() ? "error" : "ok", out[0]);
    status = model_main_alloc(&right, &got);
    printf("%d %lldx%lld %g\n", status, (long long)got.dims[0], (long long)got.dims[1],
           got.data[64 * 128 - 1]);
    model_free(got.data);
    printf("%d %d %s %s %d %lldx%lld %p\n", model_main_num_arguments(),
           model_main_num_results(), info->name, info->dtype, info->rank,
           (long long)info->dims[0], (long long)info->dims[1], (void *)model_main_argument(1));
    free(small);
    free(big);
    free(out);
    return 0;
}
"""

CHECKED = """\
func.func public @main(%x: tensor<64x128xf32> loc("x"))
    -> (tensor<64x128xf32> {jax.result_info = "y"}) {
  %one = stablehlo.constant dense<1.0> : tensor<64x128xf32>
  %0 = stablehlo.add %x, %one : tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}
"""


@pytest.mark.slow
@pytest.mark.toolchain("valgrind")
def test_the_entry_checks_its_arguments_and_reads_no_byte_past_them(tmp_path: Path):
    """Under valgrind: a 32x128 buffer where 64x128 is declared is an error status and a
    message, never a read past it; so are a NULL argument and a result of another shape."""
    module = tmp_path / "model.mlir"
    module.write_text(CHECKED)
    # portable code: valgrind has no AVX-512
    run = compile_cli(
        module, tmp_path / "libmodel.a", "--header", str(tmp_path / "model.h"),
        "--target-cpu", "generic",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "module @" not in CHECKED  # no module name: the prefix comes from -o libmodel.a
    run = run_under_valgrind(CHECKS, tmp_path / "libmodel.a", tmp_path / "checks")
    assert run.returncode == 0, run.stderr[-3000:]
    assert "ERROR SUMMARY: 0 errors" in run.stderr
    assert run.stdout.splitlines() == [
        "1 main: argument 0 ('x') is 32x128, declared 64x128",
        "1 main: argument 0 ('x') is NULL",
        "1 main: result 0 ('y') is 64x127, declared 64x128",
        "0 ok 1",
        "0 64x128 1",
        "1 1 x f32 2 64x128 (nil)",
    ]


@pytest.mark.parametrize(
    ("prefix", "message"),
    [
        ("", "the prefix is empty"),
        ("2fast_", "--prefix '2fast_' is no C identifier"),
        ("_Model_", "--prefix '_Model_' is reserved to the implementation"),
        ("a-b_", "--prefix 'a-b_' is no C identifier"),
    ],
)
def test_a_prefix_that_is_no_c_name_fails_before_any_stage(tmp_path: Path, prefix, message):
    module = tmp_path / "model.mlir"
    module.write_text(CHECKED)
    run = compile_cli(module, tmp_path / "libmodel.a", "--prefix", prefix)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert run.stderr.startswith(f"{module}: error: {message}")
    assert not (tmp_path / "libmodel.a").exists()


def test_c_names():
    assert safe_c_name("jit_rms_norm", "m") == "jit_rms_norm"
    assert safe_c_name("jit.f$g", "m") == "jit_f_g"
    assert safe_c_name("2d", "m") == "m2d"
    assert safe_c_name("int", "m") == "int_" and safe_c_name("errno", "m") == "errno_"
    assert safe_c_name("__x", "m") == "x" and safe_c_name("_Bool", "m") == "Bool"
    assert c_name_part("main") == "main" and c_name_part("f..g_") == "f_g"
    for name in ("class", "and", "NULL", "stdin", "__y", "_X", "a__b", "1a", "a-b", ""):
        assert name_problem(name), name
    assert name_problem("model_main") is None


def test_the_default_prefix_is_the_modules_name():
    from rewriter.compile.c_api import default_prefix

    assert default_prefix("module @jit_rms_norm attributes {} {", "lib.a") == "jit_rms_norm_"
    assert default_prefix('module @"jit f.g" {', "lib.a") == "jit_f_g_"
    assert default_prefix("func.func @main() {", "out/libmodel.a") == "model_"
    assert default_prefix("func.func @main() {", "my-model.so") == "my_model_"


@pytest.mark.slow
def test_a_shared_object_with_a_header_serves_both_c_and_python(tmp_path: Path):
    """With --header a shared object exports the C API and what ``load`` reads, every name
    under the prefix: ``load`` finds the prefix in the library's symbol table."""
    from rewriter.compile import load

    module = tmp_path / "model.mlir"
    module.write_text(CHECKED)
    library = tmp_path / "libmodel.so"
    run = compile_cli(module, library, "--header", str(tmp_path / "m.h"), "--prefix", "m_")
    assert run.returncode == 0, run.stderr
    x = np.arange(64 * 128, dtype=np.float32).reshape(64, 128)
    np.testing.assert_array_equal(load(library).main(x), x + 1)
    c = ctypes.CDLL(str(library))
    assert (c.m_main_num_arguments(), c.m_main_num_results()) == (1, 1)
    listing = subprocess.run(
        ["nm", "-D", "--defined-only", "--format=just-symbols", str(library)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert [s for s in listing if not s.startswith("m_")] == []
    assert {"m_rw_model_metadata", "m_mlir_ciface_rw_entry_main"} <= set(listing)


def controller(x):
    """A control step: the tutorial's rms_norm (an FFI handler through the bridge), then
    compiled ops with temporaries and two results."""
    import jax.numpy as jnp

    y = tutorial_rms_norm(x)
    return jnp.tanh(y) * x.sum(axis=1, keepdims=True), jnp.max(y * y, axis=0)


# Counts every allocation the program's objects make (-Wl,--wrap): one call without a
# workspace, then 1,000 calls with the workspace the first one measured.
CONTROL_LOOP = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

extern struct XLA_FFI_Error *RmsNorm(struct XLA_FFI_CallFrame *);

static long allocations;
void *__real_malloc(size_t);
void *__real_calloc(size_t, size_t);
void *__real_realloc(void *, size_t);
int __real_posix_memalign(void **, size_t, size_t);
void *__real_aligned_alloc(size_t, size_t);
void *__wrap_malloc(size_t n) { ++allocations; return __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t m) { ++allocations; return __real_calloc(n, m); }
void *__wrap_realloc(void *p, size_t n) { ++allocations; return __real_realloc(p, n); }
int __wrap_posix_memalign(void **p, size_t a, size_t n) {
    ++allocations;
    return __real_posix_memalign(p, a, n);
}
void *__wrap_aligned_alloc(size_t a, size_t n) { ++allocations; return __real_aligned_alloc(a, n); }

int main(void) {
    static float x[8 * 32], y[8 * 32], m[32], first[8 * 32];
    ctl_f32_2d in = {x, {8, 32}}, out = {y, {8, 32}};
    ctl_f32_1d peak = {m, {32}};
    int i, call;
    for (i = 0; i < 8 * 32; ++i) x[i] = (float)(i % 7) - 3.0f;
    if (ctl_register_handler(ctl_required_target(0), RmsNorm) != 0) return 1;
    allocations = 0;
    if (ctl_main(&in, &out, &peak) != 0) return printf("%s\n", ctl_last_error()), 1;
    memcpy(first, y, sizeof y);
    printf("first call: %s\n", allocations > 0 ? "allocates" : "no allocation");
    long long size = (long long)ctl_main_workspace_size();
    void *workspace = malloc((size_t)size);
    if (ctl_set_workspace(workspace, size) != 0) return 1;
    allocations = 0;
    for (call = 0; call < 1000; ++call) {
        if (ctl_main(&in, &out, &peak) != 0) return printf("%s\n", ctl_last_error()), 1;
    }
    printf("1000 calls: %ld allocations, %lld misses, same: %d, workspace %s\n",
           allocations, (long long)ctl_workspace_misses(), !memcmp(first, y, sizeof y),
           size > 0 ? "measured" : "empty");
    ctl_set_workspace(NULL, 0);
    free(workspace);
    return 0;
}
"""


@pytest.mark.slow
@pytest.mark.jax
def test_a_control_loop_allocates_nothing_after_set_up(tmp_path: Path):
    """With the caller's result buffers and a workspace of the size the first call measured,
    1,000 calls (the bridge, the handler and the compiled code) make no allocation."""
    import rewriter
    from rewriter.compile.bridge import xla_ffi_include_dir

    x = ((np.arange(8 * 32) % 7) - 3).astype(np.float32).reshape(8, 32)
    module = tmp_path / "ctl.rewritten.mlir"
    module.write_text(rewriter.export(controller, x).text)
    run = compile_cli(
        module, tmp_path / "libctl.a", "--ffi-bridge", "--header", str(tmp_path / "ctl.h"),
        "--prefix", "ctl_",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    (tmp_path / "loop.c").write_text(CONTROL_LOOP)
    subprocess.run(
        ["g++", "-std=c++17", "-O2", "-w", f"-I{xla_ffi_include_dir()}", "-c"]
        + [str(BRIDGE_SAMPLES / "rms_norm.cc"), "-o", str(tmp_path / "rms_norm.o")],
        check=True,
    )
    wrapped = ",".join(
        f"--wrap={f}" for f in ("malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc")
    )
    program = tmp_path / "loop"
    subprocess.run(
        ["g++", "-x", "c", "-std=c99", "-Wall", "-Werror", f"-I{tmp_path}"]
        + [str(tmp_path / "loop.c"), "-x", "none", str(tmp_path / "rms_norm.o")]
        + [str(tmp_path / "libctl.a"), f"-Wl,{wrapped}", "-lm", "-o", str(program)],
        check=True,
    )
    run = subprocess.run([str(program)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines() == [
        "first call: allocates",
        "1000 calls: 0 allocations, 0 misses, same: 1, workspace measured",
    ]


# Every kind of view: rank 0, bool (i1), uint8_t (ui8), complex<f32>, several results, a
# second function whose name is no C name and whose dimension is dynamic.
KINDS = """\
module @"my.model" {
func.func public @main(%s: tensor<f32> loc("scale"), %v: tensor<4xui8> loc("v"),
                       %c: tensor<2xcomplex<f32>>)
    -> (tensor<4xi1>, tensor<2xcomplex<f32>>, tensor<f32>) {
  %z = stablehlo.constant dense<3> : tensor<4xui8>
  %b = stablehlo.compare GT, %v, %z : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  %cs = stablehlo.add %c, %c : tensor<2xcomplex<f32>>
  %t = stablehlo.multiply %s, %s : tensor<f32>
  return %b, %cs, %t : tensor<4xi1>, tensor<2xcomplex<f32>>, tensor<f32>
}
func.func public @"second.fn"(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = stablehlo.add %x, %x : tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
}
"""

KINDS_PROGRAM = r"""
#include <stdio.h>

#include "kinds.h"

int main(void) {
    float s = 1.5f, t = 0.0f, x[6] = {0, 1, 2, 3, 4, 5}, y[6] = {0};
    uint8_t v[4] = {1, 5, 3, 9};
    bool b[4];
    my_model_c64 c[2] = {{1, 2}, {3, -4}}, cs[2];
    my_model_f32_0d a0 = {&s}, r2 = {&t};
    my_model_ui8_1d a1 = {v, {4}};
    my_model_c64_1d a2 = {c, {2}}, r1 = {cs, {2}};
    my_model_i1_1d r0 = {b, {4}};
    my_model_f32_2d xa = {x, {2, 3}}, ya = {y, {2, 3}}, yb = {y, {3, 3}}, yc = {NULL, {0, 0}};
    const my_model_tensor_info *info = my_model_second_fn_argument(0);
    int status = my_model_main(&a0, &a1, &a2, &r0, &r1, &r2);
    printf("%d %d%d%d%d %g %g %g %g %g\n", status, b[0], b[1], b[2], b[3], cs[0].real,
           cs[0].imag, cs[1].real, cs[1].imag, t);
    status = my_model_second_fn(&xa, &ya);
    printf("%d %g %g %g %g %g %g\n", status, y[0], y[1], y[2], y[3], y[4], y[5]);
    status = my_model_second_fn(&xa, &yb);
    printf("%d %s\n", status, my_model_last_error());
    status = my_model_second_fn_alloc(&xa, &yc);
    printf("%d %lldx%lld %g\n", status, (long long)yc.dims[0], (long long)yc.dims[1],
           yc.data[5]);
    my_model_free(yc.data);
    printf("%d %lld %lld %s\n", info->rank, (long long)info->dims[0], (long long)info->dims[1],
           info->name ? info->name : "no name");
    return 0;
}
"""


@pytest.mark.slow
@pytest.mark.toolchain("valgrind")
def test_every_kind_of_view_and_a_dynamic_result(tmp_path: Path):
    module = tmp_path / "kinds.mlir"
    module.write_text(KINDS)
    run = compile_cli(
        module, tmp_path / "libkinds.a", "--header", str(tmp_path / "kinds.h"),
        "--target-cpu", "generic",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stderr.splitlines() == [
        f"{tmp_path / 'libkinds.a'}: my_model_main (main)",
        f"{tmp_path / 'libkinds.a'}: my_model_second_fn (second.fn)",
    ]
    run = run_under_valgrind(KINDS_PROGRAM, tmp_path / "libkinds.a", tmp_path / "kinds")
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.splitlines() == [
        "0 0101 2 4 6 -8 2.25",
        "0 0 2 4 6 8 10",
        "1 second.fn: result 0 is 3x3, computed 2x3",
        "0 2x3 10",
        "2 -1 3 no name",
    ]


def product_of_sums(x, y):
    return x.sum(axis=1) * y.sum(axis=1)


AGREEING = r"""
#include <stdio.h>

#include "poly.h"

int main(void) {
    float x[4 * 8], y[4 * 4], r[4];
    int i, status;
    for (i = 0; i < 32; ++i) x[i] = 1.0f;
    for (i = 0; i < 16; ++i) y[i] = 0.5f;
    poly_f32_2d xa = {x, {4, 8}}, ya = {y, {4, 4}}, yb = {y, {3, 4}};
    poly_f32_1d ra = {r, {4}};
    status = poly_main(&xa, &yb, &ra);
    printf("%d %s\n", status, poly_last_error());
    status = poly_main(&xa, &ya, &ra);
    printf("%d %g %g\n", status, r[0], r[3]);
    return 0;
}
"""


@pytest.mark.slow
@pytest.mark.jax
@pytest.mark.toolchain("valgrind")
def test_dynamic_sizes_of_one_dimension_variable_must_agree(tmp_path: Path):
    """Exported for (b, 8) and (b, 4): a call with 4 and 3 rows is an error naming 'b'
    (the module would read past the shorter buffer), one with 4 and 4 runs."""
    import jax
    import jax.numpy as jnp

    (b, eight) = jax.export.symbolic_shape("b, 8")
    specs = [jax.ShapeDtypeStruct((b, n), jnp.float32) for n in (eight, 4)]
    module = tmp_path / "poly.mlir"
    module.write_text(jax.export.export(jax.jit(product_of_sums))(*specs).mlir_module())
    run = compile_cli(
        module, tmp_path / "libpoly.a", "--header", str(tmp_path / "poly.h"),
        "--prefix", "poly_", "--target-cpu", "generic",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    header = (tmp_path / "poly.h").read_text()
    assert ' *   arg0 dimension 0, arg1 dimension 0: JAX\'s "b", checked to agree' in header
    run = run_under_valgrind(AGREEING, tmp_path / "libpoly.a", tmp_path / "agree")
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.splitlines() == [
        "1 main: argument 1 dimension 0 is 3, argument 0 dimension 0 is 4: both are JAX's "
        "dimension variable 'b'",
        "0 16 16",
    ]


def two_largest(x):
    import jax

    return jax.lax.top_k(x, 2)[0]


def export_and_its_error(function, spec, broken, module: Path) -> str:
    """``function`` exported at ``spec`` and written to ``module``; the message
    ``Exported.call`` raises for the argument ``broken``."""
    import jax

    exported = jax.export.export(jax.jit(function))(spec)
    with pytest.raises(ValueError) as raised:
        exported.call(broken)
    module.write_text(exported.mlir_module())
    return str(raised.value)


def constrained_export(folder: Path) -> tuple[Path, str]:
    """``two_largest`` exported for ``b >= 2``, written to ``folder``, and the message
    ``Exported.call`` raises for one element."""
    import jax
    import numpy as np

    spec = jax.ShapeDtypeStruct(jax.export.symbolic_shape("b", constraints=["b >= 2"]), np.float32)
    module = folder / "largest.mlir"
    return module, export_and_its_error(two_largest, spec, np.ones(1, np.float32), module)


def c_program_output(module: Path, prefix: str, program: str, folder: Path) -> list[str]:
    """The lines ``program`` prints, run under valgrind, built against ``module``
    compiled into a static library with its header ``{prefix}.h`` (names ``{prefix}_``)."""
    library, header = folder / f"lib{prefix}.a", folder / f"{prefix}.h"
    run = compile_cli(
        module, library, "--header", str(header), "--prefix", f"{prefix}_",
        "--target-cpu", "generic",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    run = run_under_valgrind(program, library, folder / prefix)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout.splitlines()


CONSTRAINED = r"""
#include <stdio.h>

#include "largest.h"

int main(void) {
    float x[4] = {3, 9, 1, 7}, r[2] = {0, 0};
    largest_f32_1d one = {x, {1}}, four = {x, {4}};
    largest_f32_1d ra = {r, {2}};
    int status = largest_main(&one, &ra);
    printf("%d %g\n%s\n", status, r[0], largest_last_error());
    status = largest_main(&four, &ra);
    printf("%d %g %g\n", status, r[0], r[1]);
    return 0;
}
"""


@pytest.mark.slow
@pytest.mark.jax
@pytest.mark.toolchain("valgrind")
def test_a_broken_shape_constraint_is_an_error_with_jaxs_message(tmp_path: Path):
    """Exported for ``b >= 2``: a call with one element returns STATUS_INVALID_ARGUMENT
    and the message ``Exported.call`` raises, its numbers in place, before the compiled
    code reads the argument (``lax.top_k(x, 2)`` would read past it); four elements run."""
    module, message = constrained_export(tmp_path)
    lines = c_program_output(module, "largest", CONSTRAINED, tmp_path)
    assert lines == ["1 0", f"main: {message}", "0 9 7"]


def halves_added(x):
    return x.reshape(2, -1).sum(0)


HALVES = r"""
#include <stdio.h>

#include "halves.h"

int main(void) {
    float x[6] = {1, 2, 3, 4, 5, 6}, r[3] = {0, 0, 0};
    halves_f32_1d five = {x, {5}}, six = {x, {6}};
    halves_f32_1d three = {r, {3}};
    int status = halves_main(&five, &three);
    printf("%d\n%s\n", status, halves_last_error());
    status = halves_main(&six, &three);
    printf("%d %g %g %g\n", status, r[0], r[1], r[2]);
    return 0;
}
"""


@pytest.mark.slow
@pytest.mark.jax
@pytest.mark.toolchain("valgrind")
def test_a_size_of_two_n_broken_is_an_error_with_jaxs_message(tmp_path: Path):
    """Exported for a size ``2*n``, whose ``n`` jax computes by calls of its ``@divmod``
    (which the check copies): 5 elements return STATUS_INVALID_ARGUMENT and the message
    ``Exported.call`` raises, where the compiled code aborted the process; 6 run."""
    import jax
    import numpy as np

    spec = jax.ShapeDtypeStruct(jax.export.symbolic_shape("2*n"), np.float32)
    module = tmp_path / "halves.mlir"
    message = export_and_its_error(halves_added, spec, np.ones(5, np.float32), module)
    lines = c_program_output(module, "halves", HALVES, tmp_path)
    assert lines == ["1", f"main: {message}", "0 5 7 9"]


@pytest.mark.parametrize("clash", ["module", "output"])
def test_a_header_that_is_the_module_or_the_output_is_a_usage_error(tmp_path: Path, clash):
    module = tmp_path / "model.mlir"
    module.write_text(CHECKED)
    output = tmp_path / "libmodel.a"
    header = module if clash == "module" else output
    run = compile_cli(module, output, "--header", str(header))
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert f"--header {header} is the" in run.stderr
    assert module.read_text() == CHECKED and not output.exists()


GROWING = """\
func.func public @main(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %0 = stablehlo.add %x, %x : tensor<?x64xf32>
  %1 = stablehlo.multiply %0, %x : tensor<?x64xf32>
  return %1 : tensor<?x64xf32>
}
"""

# A call of 256 rows on another thread, then one of 2 rows here: the size is the larger
# call's, seen from this thread too, and it serves both shapes with no miss.
WORKSPACE_QUERY = r"""
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "grow.h"

static float x[256 * 64], y[256 * 64];
static long long on_the_other_thread;

static void *large_call(void *unused) {
    grow_f32_2d in = {x, {256, 64}}, out = {y, {256, 64}};
    (void)unused;
    if (grow_main(&in, &out) != 0) return NULL;
    on_the_other_thread = (long long)grow_main_workspace_size();
    return NULL;
}

int main(void) {
    pthread_t thread;
    grow_f32_2d small_in = {x, {2, 64}}, small_out = {y, {2, 64}};
    grow_f32_2d in = {x, {256, 64}}, out = {y, {256, 64}};
    long long before = (long long)grow_main_workspace_size(), size;
    void *workspace;
    if (pthread_create(&thread, NULL, large_call, NULL) != 0) return 1;
    pthread_join(thread, NULL);
    if (grow_main(&small_in, &small_out) != 0) return 1;
    size = (long long)grow_main_workspace_size();
    printf("%lld %d %d\n", before, on_the_other_thread > 0, size == on_the_other_thread);
    workspace = malloc((size_t)size);
    if (grow_set_workspace(workspace, size) != 0) return 1;
    if (grow_main(&in, &out) != 0 || grow_main(&small_in, &small_out) != 0) return 1;
    printf("misses %lld\n", (long long)grow_workspace_misses());
    grow_set_workspace(NULL, 0);
    free(workspace);
    return 0;
}
"""


@pytest.mark.slow
def test_the_workspace_size_is_the_largest_call_on_any_thread(tmp_path: Path):
    module = tmp_path / "grow.mlir"
    module.write_text(GROWING)
    library = tmp_path / "libgrow.a"
    run = compile_cli(module, library, "--header", str(tmp_path / "grow.h"), "--prefix", "grow_")
    assert run.returncode == 0, run.stderr
    (tmp_path / "query.c").write_text(WORKSPACE_QUERY)
    program = tmp_path / "query"
    subprocess.run(
        ["gcc", "-std=c99", "-Wall", "-Werror", "-pthread", f"-I{tmp_path}"]
        + [str(tmp_path / "query.c"), str(library), "-lm", "-o", str(program)],
        check=True,
    )
    run = subprocess.run([str(program)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines() == ["0 1 1", "misses 0"]


@pytest.mark.slow
@pytest.mark.jax
def test_a_shared_object_with_a_header_checks_shape_constraints_from_python(tmp_path: Path):
    """The check runs under the prefix too (``Pmlir_ciface_rw_check_main``): ``load``
    raises ``Exported.call``'s ``ValueError`` for one element, and four run."""
    import numpy as np

    from rewriter.compile import load

    module, message = constrained_export(tmp_path)
    library = tmp_path / "liblargest.so"
    run = compile_cli(
        module, library, "--header", str(tmp_path / "largest.h"), "--prefix", "largest_"
    )
    assert run.returncode == 0, run.stderr
    exported_names = subprocess.run(
        ["nm", "-D", "--defined-only", str(library)], capture_output=True, text=True, check=True
    ).stdout
    assert "largest_mlir_ciface_rw_check_main" in exported_names
    main = load(library).main
    with pytest.raises(ValueError) as raised:
        main(np.ones(1, np.float32))
    assert str(raised.value) == f"main: {message}"
    np.testing.assert_array_equal(main(np.array([3, 9, 1, 7], np.float32)), [9, 7])


SHAPE_MESSAGES = r"""
#include <stdio.h>

#include "rewriter_c_api_support.h"

int main(void) {
    static char long_message[3000];
    const int64_t values[2] = {-1, 12345678901LL};
    int i, status = rw_fail_shape_check("main", "b = {1}, b - 2 = {0}", values, 2);
    printf("%d %s\n", status, rw_last_error());
    rw_fail_shape_check("f", "{2} {x} {} {-1} {0 {1", values, 2);
    printf("%s\n", rw_last_error());
    for (i = 0; i < 2999; ++i) long_message[i] = i % 2 ? 'a' : '{';
    rw_fail_shape_check("g", long_message, values, 2);
    printf("%d\n", (int)strlen(rw_last_error()));
    for (i = 0; i < 2997; i += 3) {
        long_message[i] = '{';
        long_message[i + 1] = '1';
        long_message[i + 2] = '}';
    }
    rw_fail_shape_check("h", long_message, values, 2);
    printf("%d %.24s\n", (int)strlen(rw_last_error()), rw_last_error());
    return 0;
}
"""


@pytest.mark.toolchain("valgrind")
def test_a_shape_checks_message_fills_in_only_the_numbers_it_has(tmp_path: Path):
    """``rw_fail_shape_check`` (abi/rewriter_c_api_support.h): ``{N}`` becomes the N-th
    value; a placeholder without one, or no placeholder, stays as it is; a message longer
    than the error buffer is cut, never written past it (valgrind)."""
    source = tmp_path / "messages.c"
    source.write_text(SHAPE_MESSAGES)
    program = tmp_path / "messages"
    subprocess.run(
        ["gcc", "-std=c11", "-Wall", "-Werror", "-Wno-unused-function", f"-I{REPO / 'abi'}",
         str(source), "-o", str(program)],
        check=True,
    )  # fmt: skip
    run = subprocess.run(
        ["valgrind", "--error-exitcode=3", str(program)],
        capture_output=True,
        text=True,
        env=valgrind_environment(),
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.splitlines() == [
        "1 main: b = 12345678901, b - 2 = -1",
        "f: {2} {x} {} {-1} {0 {1",
        "1023",
        "1023 h: 123456789011234567890",
    ]
