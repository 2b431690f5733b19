"""Matrix products on the compiled path go to a BLAS: which ones, with which strides, which BLAS.

The inputs hold small integers, so every product is exact in f32 whatever the order of its
sums, and the compiled results must equal numpy's bit for bit.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rewriter.compile import blas as blas_module
from rewriter.compile import compile_module, load
from rewriter.compile.blas import BUNDLED, probe, resolve_blas, system_blas

ROOT = Path(__file__).resolve().parent.parent

# A product that reads both operands transposed (indexing_maps), and one whose left operand
# is a view with stride 2 in both dimensions, which no gemm call can take as it is.
PRODUCTS = """\
func.func public @main(%a: tensor<5x3xf32>, %b: tensor<4x5xf32>, %big: tensor<10x12xf32>,
                       %w: tensor<6x4xf32>) -> (tensor<3x4xf32>, tensor<5x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x4xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>,
                                      affine_map<(d0, d1, d2) -> (d1, d2)>,
                                      affine_map<(d0, d1, d2) -> (d0, d1)>]
       ins(%a, %b : tensor<5x3xf32>, tensor<4x5xf32>) outs(%c : tensor<3x4xf32>) -> tensor<3x4xf32>
  %s = tensor.extract_slice %big[0, 0] [5, 6] [2, 2] : tensor<10x12xf32> to tensor<5x6xf32>
  %e2 = tensor.empty() : tensor<5x4xf32>
  %c2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<5x4xf32>) -> tensor<5x4xf32>
  %r2 = linalg.matmul ins(%s, %w : tensor<5x6xf32>, tensor<6x4xf32>)
        outs(%c2 : tensor<5x4xf32>) -> tensor<5x4xf32>
  return %r, %r2 : tensor<3x4xf32>, tensor<5x4xf32>
}
"""


def integer_inputs():
    rng = np.random.default_rng(0)
    shapes = [(5, 3), (4, 5), (10, 12), (6, 4)]
    return [rng.integers(-4, 5, shape).astype(np.float32) for shape in shapes]


def expected(a, b, big, w):
    return a.T @ b.T, big[::2, ::2][:5, :6] @ w


def compile_and_run(tmp_path: Path, **options):
    library = tmp_path / "libproducts.so"
    compile_module(PRODUCTS, library, keep_temps=tmp_path / "temps", **options)
    inputs = integer_inputs()
    got = load(library).main(*inputs)
    calls = (tmp_path / "temps" / "3-library-calls.mlir").read_text().count("call @rw_blas_")
    return got, expected(*inputs), calls


@pytest.mark.toolchain
@pytest.mark.toolchain("libopenblas.so.0")
def test_transposed_and_strided_operands_give_exact_products(tmp_path: Path):
    (r, r2), (want, want2), calls = compile_and_run(tmp_path)
    assert calls == 2  # both products went to the BLAS helper
    np.testing.assert_array_equal(r, want)
    np.testing.assert_array_equal(r2, want2)  # the strided view took the plain loop


@pytest.mark.toolchain
def test_without_blas_products_stay_in_compiled_loops(tmp_path: Path):
    (r, r2), (want, want2), calls = compile_and_run(tmp_path, blas=None)
    assert calls == 0
    np.testing.assert_array_equal(r, want)
    np.testing.assert_array_equal(r2, want2)


@pytest.mark.toolchain
def test_a_blas_with_32_bit_integers_is_called_right(tmp_path: Path):
    """SciPy's OpenBLAS has int32 arguments and other symbol names than NumPy's (int64)."""
    package, folder, pattern = BUNDLED[1]
    found = sorted((Path(__import__(package).__file__).parent.parent / folder).glob(pattern))
    assert found, "SciPy's wheel (a dependency of jaxlib) ships OpenBLAS on Linux x86-64"
    blas = probe(found[0])
    assert blas is not None and (blas.prefix, blas.suffix, blas.integer) == (
        "scipy_cblas_",
        "",
        "int32_t",
    )
    (r, r2), (want, want2), calls = compile_and_run(tmp_path, blas=found[0])
    assert calls == 2
    np.testing.assert_array_equal(r, want)
    np.testing.assert_array_equal(r2, want2)
    # A wheel's folder is no place the dynamic loader looks: a RUNPATH says where it is.
    assert not blas.by_soname
    assert blas.link_arguments()[-1] == f"-Wl,-rpath,{blas.library.parent}"


@pytest.mark.toolchain("libopenblas.so.0")
def test_the_default_blas_is_the_systems_openblas_by_soname():
    blas = resolve_blas("auto")
    assert blas == system_blas()
    assert blas is not None and blas.by_soname
    assert blas.library.name.startswith("libopenblas")  # the file behind libopenblas.so.0
    assert "site-packages" not in str(blas.library)
    assert blas.link_arguments() == [str(blas.library)]  # no RUNPATH
    assert (blas.prefix, blas.suffix, blas.integer) == ("cblas_", "", "int32_t")
    assert resolve_blas("none") is None and resolve_blas(None) is None


@pytest.mark.toolchain
def test_without_a_system_blas_products_are_loops_and_a_warning_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(blas_module, "SYSTEM_OPENBLAS", "libno-such-blas.so.0")
    with pytest.warns(UserWarning, match=r"no system OpenBLAS \(libno-such-blas.so.0\)"):
        (r, r2), (want, want2), calls = compile_and_run(tmp_path)
    assert calls == 0
    np.testing.assert_array_equal(r, want)
    np.testing.assert_array_equal(r2, want2)


@pytest.mark.toolchain
def test_blas_symbols_stay_local(tmp_path: Path):
    library = tmp_path / "libproducts.so"
    compile_module(PRODUCTS, library)
    listing = subprocess.run(
        ["nm", "-D", "--defined-only", str(library)], capture_output=True, text=True, check=True
    ).stdout
    assert {line.split()[-1] for line in listing.splitlines()} == {
        "_mlir_ciface_rw_entry_main",
        "rw_model_metadata",
    }


@pytest.mark.toolchain
def test_a_module_with_a_helper_name_keeps_it_and_the_helpers_take_another(tmp_path: Path):
    """An extern named like a helper is the module's own: the helpers are named
    ``rw_blas1_*`` instead, and the products are still computed by them."""
    module = PRODUCTS.replace(
        "func.func public @main",
        "func.func private @rw_blas_matmul_f32() attributes {llvm.emit_c_interface}\n"
        "func.func public @main",
    )
    library = tmp_path / "lib.so"
    compile_module(module, library, keep_temps=tmp_path / "temps")
    routed = (tmp_path / "temps" / "3-library-calls.mlir").read_text()
    assert routed.count("call @rw_blas1_matmul_f32(") == 2
    assert "call @rw_blas_matmul_f32(" not in routed
    inputs = integer_inputs()
    for got, want in zip(load(library).main(*inputs), expected(*inputs), strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.toolchain
@pytest.mark.parametrize(
    ("choice", "message"),
    [
        ("{tmp}/missing.so", "BLAS library {tmp}/missing.so does not exist"),
        ("{tmp}/empty.so", "{tmp}/empty.so is not a CBLAS library: it defines none of"),
    ],
)
def test_a_wrong_blas_is_a_clean_error(tmp_path: Path, choice: str, message: str):
    (tmp_path / "empty.so").write_bytes(b"")
    module = tmp_path / "products.mlir"
    module.write_text(PRODUCTS)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "rewriter.compile",
            str(module),
            "-o",
            str(tmp_path / "lib.so"),
            "--blas",
            choice.format(tmp=tmp_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert f"{module}: error: {message.format(tmp=tmp_path)}" in run.stderr


def jax_convolution(strides, padding, dilation, layout):
    import jax

    def conv(x, w):
        return jax.lax.conv_general_dilated(
            x, w, strides, padding, rhs_dilation=dilation, dimension_numbers=layout
        )

    return conv


CONVOLUTIONS = {
    "same": ((1, 1), "SAME", (1, 1), ("NHWC", "HWIO", "NHWC"), np.float32),
    "strided_valid": ((2, 2), "VALID", (1, 1), ("NHWC", "HWIO", "NHWC"), np.float32),
    "dilated": ((1, 2), "SAME", (2, 1), ("NHWC", "HWIO", "NHWC"), np.float32),
    "nchw": ((1, 1), "SAME", (1, 1), ("NCHW", "OIHW", "NCHW"), np.float32),
    "float64": ((2, 1), "SAME", (1, 1), ("NHWC", "HWIO", "NHWC"), np.float64),
}


@pytest.mark.toolchain
@pytest.mark.toolchain("libopenblas.so.0")
@pytest.mark.parametrize("case", sorted(CONVOLUTIONS))
def test_a_convolution_is_one_blas_call(case: str, tmp_path: Path):
    """IREE gives every 2-D convolution of jax as linalg.conv_2d_nhwc_hwcf (NCHW through
    transposes); it becomes one call of @rw_blas_conv2d_<t>, which must give jax's numbers
    (small integers: exact in any order of the sums)."""
    import jax

    import rewriter

    strides, padding, dilation, layout, dtype = CONVOLUTIONS[case]
    conv = jax_convolution(strides, padding, dilation, layout)
    rng = np.random.default_rng(0)
    x_shape, w_shape = ((2, 9, 10, 5), (3, 3, 5, 7))
    if layout[0] == "NCHW":
        x_shape, w_shape = (2, 5, 9, 10), (7, 5, 3, 3)
    x = rng.integers(-4, 5, x_shape).astype(dtype)
    w = rng.integers(-4, 5, w_shape).astype(dtype)
    with jax.enable_x64(dtype == np.float64):
        text = rewriter.export(conv, x, w).text
        expected = np.asarray(jax.jit(conv)(x, w))
    temps = tmp_path / "temps"
    compile_module(text, tmp_path / "lib.so", keep_temps=temps)
    calls = (temps / "3-library-calls.mlir").read_text()
    suffix = {np.float32: "f32", np.float64: "f64"}[dtype]
    assert calls.count(f"call @rw_blas_conv2d_{suffix}(") == 1
    assert "linalg.conv_2d" not in calls
    got = load(tmp_path / "lib.so").main(x, w)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


# A convolution on views that no gemm call takes as they are: channels of the input 2 apart,
# a filter that must be packed (every dimension but the first strided), and an output
# written in place into the middle of a wider tensor, so its rows of pixels are not evenly
# spaced; strides (2, 1) and dilations (1, 2).
STRIDED_CONVOLUTION = """\
func.func public @main(%x: tensor<2x9x11x6xf32>, %w: tensor<3x4x6x10xf32>)
    -> tensor<2x4x12x5xf32> {
  %zero = arith.constant 0.0 : f32
  %xs = tensor.extract_slice %x[0, 0, 0, 0] [2, 9, 11, 3] [1, 1, 1, 2]
        : tensor<2x9x11x6xf32> to tensor<2x9x11x3xf32>
  %ws = tensor.extract_slice %w[0, 0, 0, 0] [3, 2, 3, 5] [1, 2, 2, 2]
        : tensor<3x4x6x10xf32> to tensor<3x2x3x5xf32>
  %e = tensor.empty() : tensor<2x4x12x5xf32>
  %big = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x12x5xf32>) -> tensor<2x4x12x5xf32>
  %o = tensor.extract_slice %big[0, 0, 1, 0] [2, 4, 9, 5] [1, 1, 1, 1]
       : tensor<2x4x12x5xf32> to tensor<2x4x9x5xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<[1, 2]> : tensor<2xi64>,
                                 strides = dense<[2, 1]> : tensor<2xi64>}
       ins(%xs, %ws : tensor<2x9x11x3xf32>, tensor<3x2x3x5xf32>)
       outs(%o : tensor<2x4x9x5xf32>) -> tensor<2x4x9x5xf32>
  %r = tensor.insert_slice %c into %big[0, 0, 1, 0] [2, 4, 9, 5] [1, 1, 1, 1]
       : tensor<2x4x9x5xf32> into tensor<2x4x12x5xf32>
  return %r : tensor<2x4x12x5xf32>
}
"""


@pytest.mark.toolchain
@pytest.mark.toolchain("libopenblas.so.0")
def test_a_convolution_on_strided_views(tmp_path: Path):
    """out[n, y, x, f] = sum over (i, j, c) of xs[n, 2y + i, x + 2j, c] * ws[i, j, c, f],
    written to columns 1 to 9 of a zero tensor 12 wide (numpy computes the same sum). The
    copy of that result between strided views is a loop that clang vectorizes, not a call
    of MLIR's element-by-element ``memrefCopy``."""
    temps = tmp_path / "temps"
    compile_module(STRIDED_CONVOLUTION, tmp_path / "lib.so", keep_temps=temps)
    assert "call @rw_blas_conv2d_f32(" in (temps / "3-library-calls.mlir").read_text()
    assert "memref.copy" in (temps / "3-library-calls.mlir").read_text()
    assert "memrefCopy" not in (temps / "5-lower-to-llvm.mlir").read_text()
    rng = np.random.default_rng(1)
    x = rng.integers(-4, 5, (2, 9, 11, 6)).astype(np.float32)
    w = rng.integers(-4, 5, (3, 4, 6, 10)).astype(np.float32)
    xs, ws = x[..., ::2], w[:, ::2, ::2, ::2]
    expected = np.zeros((2, 4, 12, 5), np.float32)
    for i in range(3):
        for j in range(2):
            window = xs[:, i : i + 7 : 2, 2 * j : 2 * j + 9, :]
            expected[:, :, 1:10, :] += np.einsum("nyxc,cf->nyxf", window, ws[i, j])
    np.testing.assert_array_equal(load(tmp_path / "lib.so").main(x, w), expected)


# Bufferized products whose output a fill of zeros writes first: the fill is dropped and the
# helper writes the output (its last flag 1) only when nothing else can see the difference.
FILLED = """\
func.func @main(%a: memref<4x4xf32>, %arg: memref<4x4xf32>, %n: index) -> memref<4x4xf32> {{
  %zero = arith.constant {value} : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.alloc() : memref<4x4xf32>
  {body}
  return %m : memref<4x4xf32>
}}
"""
MATMUL = "linalg.matmul ins(%a, %a : memref<4x4xf32>, memref<4x4xf32>) outs({out} : {type})"
FILL = "linalg.fill ins(%zero : f32) outs(%m : memref<4x4xf32>)"
PLAIN = "memref<4x4xf32>"
FILLED_CASES = {
    "fill_then_product": ("0.0", f"{FILL}\n{MATMUL.format(out='%m', type=PLAIN)}", True),
    "filled_with_one": ("1.0", f"{FILL}\n{MATMUL.format(out='%m', type=PLAIN)}", False),
    "filled_with_minus_zero": ("-0.0", f"{FILL}\n{MATMUL.format(out='%m', type=PLAIN)}", False),
    "read_in_between": (
        "0.0",
        f"{FILL}\nmemref.copy %m, %arg : {PLAIN} to {PLAIN}\n{MATMUL.format(out='%m', type=PLAIN)}",
        False,
    ),
    "product_in_a_loop": (
        "0.0",
        f"{FILL}\nscf.for %i = %c0 to %n step %c1 {{\n{MATMUL.format(out='%m', type=PLAIN)}\n}}",
        False,
    ),
    "view_taken_before": (
        "0.0",
        "%v = memref.subview %m[0, 0] [4, 4] [1, 1] : memref<4x4xf32> to memref<4x4xf32, "
        f"strided<[4, 1]>>\n{FILL}\nlinalg.fill ins(%zero : f32) outs(%v : memref<4x4xf32, "
        f"strided<[4, 1]>>)\n{MATMUL.format(out='%m', type=PLAIN)}",
        False,
    ),
    "output_an_argument": (
        "0.0",
        "linalg.fill ins(%zero : f32) outs(%arg : memref<4x4xf32>)\n"
        + MATMUL.format(out="%arg", type=PLAIN),
        False,
    ),
}


@pytest.mark.iree
@pytest.mark.parametrize("case", sorted(FILLED_CASES))
def test_a_fill_of_zeros_before_a_product_is_dropped_only_when_unseen(case: str):
    from rewriter.compile.library_calls import route_products_to_blas

    value, body, dropped = FILLED_CASES[case]
    routed = route_products_to_blas(FILLED.format(value=value, body=body)).text
    fills = body.count("linalg.fill")
    assert routed.count("linalg.fill") == fills - dropped
    call = next(line for line in routed.splitlines() if "call @rw_blas_matmul_f32(" in line)
    flag = call.split("(")[1].split(")")[0].split(", ")[-1]
    assert f"{flag} = arith.constant {int(dropped)} : i32" in routed
