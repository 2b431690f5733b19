"""The C side of the calling contract (abi/), checked with the system C compiler.

(a) abi/include/rewriter/memref.h matches the MLIR C interface's descriptor layout and
    its allocation helper keeps the ownership rule; as C99, C11 and C++17.
(b) The rms_norm kernel in abi/README.md, taken verbatim from the README's fenced C
    block, compiles and computes the right numbers.
"""

import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.toolchain("cc", "g++")

ABI = Path(__file__).resolve().parents[1] / "abi"
INCLUDE = ABI / "include"
README = ABI / "README.md"

CC = os.environ.get("CC", "cc")
CXX = os.environ.get("CXX", "g++")
STRICT = ["-Wall", "-Wextra", "-Werror", "-pedantic"]
C99 = [CC, "-std=c99", *STRICT]


def build_and_run(tmp_path: Path, command: list[str], source: str, name: str) -> str:
    """Writes `source` to tmp_path, compiles it with `command`, runs it, returns stdout."""
    src = tmp_path / name
    src.write_text(source)
    exe = tmp_path / src.stem
    cmd = [*command, f"-I{INCLUDE}", str(src), "-o", str(exe), "-lm"]
    built = subprocess.run(cmd, check=False, capture_output=True, text=True)
    assert built.returncode == 0, f"{' '.join(cmd)}\n{built.stderr}"
    ran = subprocess.run([str(exe)], check=False, capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, f"{exe} exited {ran.returncode}\n{ran.stdout}{ran.stderr}"
    return ran.stdout


# --- (a) layout and allocation helper --------------------------------------------------

LAYOUT_PROGRAM = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "rewriter/memref.h"

#if defined(__cplusplus)
#define STATIC_CHECK(name, cond) static_assert(cond, #name)
#elif __STDC_VERSION__ >= 201112L
#define STATIC_CHECK(name, cond) _Static_assert(cond, #name)
#else /* C99 has no _Static_assert: a negative array size stops the build instead. */
#define STATIC_CHECK(name, cond) typedef char name[(cond) ? 1 : -1]
#endif

/* MLIR's descriptor {T *allocated, *aligned; int64_t offset, sizes[N], strides[N]}. */
STATIC_CHECK(allocated_at_0, offsetof(rw_memref_f32_2d, allocated) == 0);
STATIC_CHECK(aligned_at_8, offsetof(rw_memref_f32_2d, aligned) == 8);
STATIC_CHECK(offset_at_16, offsetof(rw_memref_f32_2d, offset) == 16);
STATIC_CHECK(sizes_at_24, offsetof(rw_memref_f32_2d, sizes) == 24);
STATIC_CHECK(strides_at_40, offsetof(rw_memref_f32_2d, strides) == 40);
#define FIELD_SIZE(M, field) sizeof(((M *)0)->field)
STATIC_CHECK(offset_is_8_bytes, FIELD_SIZE(rw_memref_f32_2d, offset) == 8);
STATIC_CHECK(strides_are_8_bytes, FIELD_SIZE(rw_memref_f32_2d, strides[1]) == 8);
STATIC_CHECK(size_2d_is_56, sizeof(rw_memref_f32_2d) == 56);
STATIC_CHECK(size_0d_is_24, sizeof(rw_memref_f32_0d) == 24);
STATIC_CHECK(size_4d_is_88, sizeof(rw_memref_i1_4d) == 88);

/* Element sizes follow the MLIR element type. */
#define ELEM_SIZE(M) FIELD_SIZE(M, aligned[0])
STATIC_CHECK(f16_is_2_bytes, ELEM_SIZE(rw_memref_f16_1d) == 2);
STATIC_CHECK(bf16_is_2_bytes, ELEM_SIZE(rw_memref_bf16_1d) == 2);
STATIC_CHECK(i1_is_1_byte, ELEM_SIZE(rw_memref_i1_1d) == 1);
STATIC_CHECK(ui64_is_8_bytes, ELEM_SIZE(rw_memref_ui64_3d) == 8);
STATIC_CHECK(f64_is_8_bytes, ELEM_SIZE(rw_memref_f64_4d) == 8);

/* Several results: one struct of descriptors in order, laid out like LLVM's struct. */
typedef struct two_results { rw_memref_f32_2d r0; rw_memref_i32_0d r1; } two_results;
STATIC_CHECK(second_result_at_56, offsetof(two_results, r1) == 56);
STATIC_CHECK(two_results_size_80, sizeof(two_results) == 80);

#define CHECK(cond)                                                  \
    do {                                                             \
        if (!(cond)) {                                               \
            printf("line %d: check failed: %s\n", __LINE__, #cond);  \
            return 1;                                                \
        }                                                            \
    } while (0)

int main(void)
{
    static const int64_t sizes[2] = {3, 4};
    static const int64_t too_big[2] = {INT64_MAX, 2};
    static const int64_t negative[2] = {3, -1};
    rw_memref_f32_2d m;
    rw_memref_i64_0d s;
    int64_t i;

    CHECK(rw_memref_f32_2d_alloc(&m, sizes) == 0);
    CHECK(m.allocated != NULL && m.allocated == m.aligned);
    CHECK((uintptr_t)m.aligned % 64 == 0);
    CHECK(m.offset == 0);
    CHECK(m.sizes[0] == 3 && m.sizes[1] == 4);
    CHECK(m.strides[0] == 4 && m.strides[1] == 1);
    CHECK(rw_memref_f32_2d_num_elements(&m) == 12);
    for (i = 0; i < 12; ++i) /* the whole buffer is writable */
        m.aligned[i] = (float)i;
    free(m.allocated); /* what the compiled caller does */

    CHECK(rw_memref_i64_0d_alloc(&s, NULL) == 0);
    CHECK(s.allocated == s.aligned && (uintptr_t)s.aligned % 64 == 0 && s.offset == 0);
    CHECK(rw_memref_i64_0d_num_elements(&s) == 1);
    s.aligned[0] = 42;
    free(s.allocated);

    CHECK(rw_memref_f32_2d_alloc(&m, too_big) != 0 && m.allocated == NULL);
    CHECK(rw_memref_f32_2d_alloc(&m, negative) != 0 && m.aligned == NULL);
    printf("ok\n");
    return 0;
}
"""


@pytest.mark.parametrize(
    ("command", "name"),
    [
        pytest.param(C99, "layout.c", id="c99"),
        pytest.param([CC, "-std=c11", *STRICT], "layout.c", id="c11"),
        pytest.param([CXX, "-std=c++17", *STRICT], "layout.cpp", id="c++17"),
    ],
)
def test_descriptor_layout_and_alloc_helper(tmp_path, command, name):
    assert build_and_run(tmp_path, command, LAYOUT_PROGRAM, name) == "ok\n"


# --- (b) the README's worked example ---------------------------------------------------


def readme_kernel() -> str:
    """The README's fenced C block that includes the header: the complete kernel."""
    blocks = re.findall(r"^```c\n(.*?)^```", README.read_text(), re.MULTILINE | re.DOTALL)
    kernels = [b for b in blocks if '#include "rewriter/memref.h"' in b]
    assert len(kernels) == 1, f"want one C block including the header, got {len(kernels)}"
    return kernels[0]


def readme_prototype() -> str:
    found = re.findall(r"^void _mlir_ciface_rms_norm\(.*\);$", README.read_text(), re.MULTILINE)
    assert len(found) == 1, found
    return found[0]


RMS_NORM_MAIN = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "rms_norm.c" /* the README's kernel, verbatim */

/* The README's prototype: a mismatch with the definition above stops the build. */
%(prototype)s

static const float input[100] = {%(input)s}; /* row-major 10x10 */

/* Calls the kernel as compiled code would, checks the result descriptor, prints it. */
static int call(rw_memref_f32_2d *x)
{
    rw_memref_f32_2d y;
    int64_t i;
    _mlir_ciface_rms_norm(&y, x, %(eps)s);
    if (y.allocated != y.aligned || (uintptr_t)y.aligned %% 64 != 0 || y.offset != 0
        || y.sizes[0] != 10 || y.sizes[1] != 10 || y.strides[0] != 10 || y.strides[1] != 1)
        return 1;
    for (i = 0; i < 100; ++i)
        printf("%%.9g\n", y.aligned[i]);
    free(y.allocated);
    return 0;
}

int main(void)
{
    float plain[100], transposed[1 + 100];
    rw_memref_f32_2d x;
    int i, j;
    for (i = 0; i < 10; ++i) {
        for (j = 0; j < 10; ++j) {
            plain[10 * i + j] = input[10 * i + j];
            transposed[1 + 10 * j + i] = input[10 * i + j];
        }
    }
    /* Row-major, as an identity-layout memref arrives. */
    x.allocated = x.aligned = plain;
    x.offset = 0;
    x.sizes[0] = x.sizes[1] = 10;
    x.strides[0] = 10;
    x.strides[1] = 1;
    if (call(&x) != 0)
        return 1;
    /* The same tensor as a strided view with an offset: the kernel reads through both. */
    x.allocated = x.aligned = transposed;
    x.offset = 1;
    x.strides[0] = 1;
    x.strides[1] = 10;
    return call(&x);
}
"""


def test_readme_rms_norm_example(tmp_path):
    (tmp_path / "rms_norm.c").write_text(readme_kernel())
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((10, 10)) * np.arange(1, 11)[:, None]).astype(np.float32)
    eps = np.float32(1e-5)
    source = RMS_NORM_MAIN % {
        "prototype": readme_prototype(),
        "input": ", ".join(f"{float(v)!r}f" for v in x.ravel()),
        "eps": f"{float(eps)!r}f",
    }

    out = build_and_run(tmp_path, C99, source, "main.c")

    got = np.array(out.split(), dtype=np.float64).reshape(2, 10, 10)
    x64 = x.astype(np.float64)
    want = x64 / np.sqrt(np.mean(x64**2, axis=1, keepdims=True) + float(eps))
    np.testing.assert_allclose(got[0], want, rtol=1e-6)
    np.testing.assert_allclose(got[1], want, rtol=1e-6)
