"""f64 exp and tanh are polynomials in the module, not libm calls, within 2 ulp of the exact
value (rewriter/compile/f64_math.py)."""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rewriter
from rewriter.compile import compile_module, load
from rewriter.compile.f64_math import vectorizable_f64_math

pytestmark = [pytest.mark.jax]

# Bufferized elementwise exp and tanh in f64 and f32.
ELEMENTWISE = """\
func.func @f(%x: memref<8xf64>, %y: memref<8xf32>, %out: memref<8xf64>, %o: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
                                   affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%x, %y : memref<8xf64>, memref<8xf32>) outs(%out, %o : memref<8xf64>, memref<8xf32>) {
  ^bb0(%a: f64, %b: f32, %c: f64, %d: f32):
    %e = math.exp %a : f64
    %t = math.tanh %e : f64
    %u = math.tanh %b : f32
    linalg.yield %t, %u : f64, f32
  }
  return
}
"""


def test_f64_exp_and_tanh_become_calls_of_the_module_s_polynomials():
    text = vectorizable_f64_math(ELEMENTWISE)
    assert "math.exp" not in text
    assert "call @rw_math_exp_f64(%" in text and "call @rw_math_tanh_f64(%" in text
    assert "math.tanh %" in text and ": f32" in text  # f32 is IREE's math transform's
    assert text.count("func.func private @rw_math_") == 2
    assert "#llvm.linkage<internal>" in text  # inlined and gone from the library


def test_a_module_without_them_is_left_alone():
    without = ELEMENTWISE.replace("math.exp %a : f64", "arith.negf %a : f64").replace(
        "math.tanh %e : f64", "arith.negf %e : f64"
    )
    assert vectorizable_f64_math(without) == without


def test_a_module_that_has_the_names_already_is_refused():
    clash = ELEMENTWISE + "func.func private @rw_math_exp_f64(f64) -> f64\n"
    with pytest.raises(ValueError, match="rw_math_exp_f64"):
        vectorizable_f64_math(clash)


def _functions(x):
    return jnp.exp(x), jnp.tanh(x)


SPECIAL = [
    0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, -1e-300, 5e-324, 0.625, -0.625,
    np.nextafter(0.625, 0.0), 19.0, 22.0, -22.0, 400.0, 709.782712893384, 709.79, -708.4,
    -745.13, -745.14, -800.0, 1024 * np.log(2.0), -1022 * np.log(2.0), -1074 * np.log(2.0),
]  # fmt: skip


def _inputs() -> np.ndarray:
    """A million f64 inputs: all of exp's range, tanh's two branches, magnitudes from 1e-320
    to 1000, and the special values."""
    rng = np.random.default_rng(0)
    magnitudes = np.sign(rng.normal(size=200_000)) * 10.0 ** rng.uniform(-320, 3, 200_000)
    return np.concatenate(
        [
            rng.uniform(-750, 750, 300_000),
            rng.uniform(-1, 1, 300_000),
            rng.normal(size=200_000) * 5,
            magnitudes,
            np.array(SPECIAL),
        ]
    )


@pytest.fixture(scope="module")
def computed(tmp_path_factory) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray], Path]:
    """The inputs, exp and tanh of them on the compiled path, and the kept stages."""
    from mlir_tools import LLVM_TOOLS, require_tool

    for tool in LLVM_TOOLS:
        require_tool(tool)
    x = _inputs()
    with jax.enable_x64(True):
        text = rewriter.export(_functions, x).text
    work = tmp_path_factory.mktemp("f64_math")
    library = work / "functions.so"
    compile_module(rewriter.rewrite(text).text, library, keep_temps=work / "stages", blas=None)
    exp, tanh = load(library).main(x)
    return x, (np.asarray(exp), np.asarray(tanh)), work / "stages"


def test_the_library_calls_no_libm_exp_or_tanh(computed):
    """The LLVM IR clang compiles has neither libm's functions nor LLVM's intrinsics for
    them (which become libm calls, one element at a time)."""
    _, _, stages = computed
    llvm_ir = next(stages.glob("*.ll")).read_text(encoding="utf-8")
    for name in ("@exp(", "@tanh(", "@llvm.exp.f64", "@llvm.tanh.f64", "@expm1("):
        assert name not in llvm_ir


@pytest.mark.parametrize("name", ["exp", "tanh"])
def test_within_2_ulp_of_the_exact_value_with_libm_s_special_values(computed, name):
    """Against libm's long double functions (11 more bits than f64 on x86-64), and libm's
    f64 results where they are not finite or zero, in XLA:CPU's mode, which the compiled
    code runs in (``abi/rewriter_float_mode.h``): subnormal inputs read as zeros of their
    sign, subnormal results flushed to zeros of their sign."""
    x, (exp, tanh), _ = computed
    got = exp if name == "exp" else tanh
    function = np.exp if name == "exp" else np.tanh
    x = flushed(x)
    with np.errstate(over="ignore"):
        exact = function(x.astype(np.longdouble))
        expected = flushed(function(x))
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(np.signbit(got[~nan]), np.signbit(expected[~nan]))  # -0.0 too
    assert np.array_equal(np.isinf(got), np.isinf(expected))
    assert np.array_equal(got == 0, expected == 0)
    with np.errstate(over="ignore"):
        nearest = exact.astype(np.float64)  # inf above f64's largest
    finite = np.isfinite(nearest) & (np.abs(nearest) >= np.finfo(np.float64).tiny)
    spacing = np.spacing(np.abs(nearest[finite])).astype(np.longdouble)
    ulps = np.abs(got[finite].astype(np.longdouble) - exact[finite]) / spacing
    assert ulps.max() <= 2.0, x[finite][np.argmax(ulps)]


@pytest.mark.parametrize("name", ["exp", "tanh"])
def test_agrees_with_jax_jit(computed, name):
    """Both flush subnormal results to zero and read subnormal inputs as zeros: the same
    zeros, infinities and NaNs; elsewhere the two are a few ulp apart."""
    x, (exp, tanh), _ = computed
    got = exp if name == "exp" else tanh
    with jax.enable_x64(True):
        expected = np.asarray(jax.jit(jnp.exp if name == "exp" else jnp.tanh)(x))
    normal = np.isfinite(expected) & (np.abs(expected) >= np.finfo(np.float64).tiny)
    np.testing.assert_array_equal(got[~normal], expected[~normal])
    np.testing.assert_allclose(got[normal], expected[normal], rtol=4 * 2.0**-52, atol=0)


def flushed(values: np.ndarray) -> np.ndarray:
    """``values`` with every subnormal number a zero of its sign, as XLA:CPU's mode reads
    and writes them."""
    tiny = np.abs(values) < np.finfo(values.dtype).tiny
    return np.where(tiny, np.copysign(0.0, values), values)


def test_exp_has_no_division_and_no_roundeven():
    """A division per element held up the vectorized loop, and IREE's math transform
    expands ``math.roundeven`` into ``round`` and two ``copysign``: exp has neither."""
    from rewriter.compile.f64_math import _FUNCTIONS

    exp = _FUNCTIONS[: _FUNCTIONS.index("func.func private @rw_math_tanh_f64")]
    assert "@rw_math_exp_f64" in exp
    assert "divf" not in exp and "roundeven" not in exp
