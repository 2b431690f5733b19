"""f32 sin, cos and tan on both runners (rewriter/compile/f32_in_f64.py): IREE's f32
polynomials reduce the argument in f32 (sin(1e4) 2.6e-4 off, sin(1e20) -inf, tan of large
arguments NaN); computed in f64, they are within 0.5 + 2^-26 ulp of the exact value (Cody
and Waite's reduction for a tensor within 2^19, Payne and Hanek's for one with an element
beyond), on a million inputs each, with numpy's special values."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from both_runners import RUNNERS, run_on, ulps_off
from mlir_tools import require_tool

import rewriter

pytestmark = [pytest.mark.iree, pytest.mark.jax, pytest.mark.slow]

F32 = np.finfo(np.float32)
SPECIAL = [
    0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-40, F32.tiny, F32.max, -F32.max,
    1e4, 1e10, 1e20, 1e38, np.pi / 2, -np.pi / 2, np.pi, 3 * np.pi / 2, 1.5707963, 1.5707964,
    102940.41, 8.9e6, 2.0**24, 2.0**100, 2.0**19, -(2.0**19), 252.89821,
]  # fmt: skip

# In ulp of the exact value: f32_in_f64.py derives 0.5 + 2^-26 for both reductions (the
# f64 result within 2^-50 relative, 2^-26 of an f32 ulp; the conversion to f32 rounds once
# more). The tensors with an element beyond 2^19 ("libm", the functions they took before
# Payne and Hanek's reduction) are held to 0.5 + 2^-29, which they meet on these inputs.
BOUNDS = {"libm": 0.5 + 2.0**-29, "within": 0.5 + 2.0**-26}
FUNCTIONS = {"sin": np.sin, "cos": np.cos, "tan": np.tan}


def _inputs() -> dict[str, np.ndarray]:
    """A million f32 inputs per path: for libm's, a few periods, where f32's own reduction
    is wrong (1e3 to 1e8), every magnitude from 1e-45 to 3.4e38 of both signs, and the
    special values; within 2^19, a few periods, up to 2^19, every magnitude from 1e-45 to
    2^19, and the special values within 2^19 (infinities and NaN too)."""
    rng = np.random.default_rng(0)

    def magnitudes(high: float, count: int) -> np.ndarray:
        return np.sign(rng.normal(size=count)) * 10.0 ** rng.uniform(-45, high, count)

    within = [value for value in SPECIAL if not 2**19 < abs(value) < np.inf]
    return {
        "libm": np.concatenate(
            [
                rng.uniform(-10, 10, 300_000),
                rng.uniform(1e3, 1e8, 200_000),
                magnitudes(38.53, 500_000),
                np.array(SPECIAL),
            ]
        ).astype(np.float32),
        "within": np.concatenate(
            [
                rng.uniform(-10, 10, 300_000),
                rng.uniform(-(2**19), 2**19, 300_000),
                magnitudes(np.log10(2**19), 400_000),
                np.array(within),
            ]
        ).astype(np.float32),
    }


@pytest.fixture(scope="module", params=RUNNERS)
def computed(request, tmp_path_factory):
    """The runner, the inputs, and sin, cos and tan of them on it, by path."""
    if request.param == "iree":
        require_tool("ld")  # IREE links libm's sin of the wide arguments as a system library
    inputs = _inputs()
    folder = tmp_path_factory.mktemp(request.param)

    def functions(a, b):
        return tuple(f(v) for v in (a, b) for f in (jnp.sin, jnp.cos, jnp.tan))

    results = run_on(request.param, functions, [inputs["libm"], inputs["within"]], folder)
    got = {
        (path, name): np.asarray(results[3 * index + position])
        for index, path in enumerate(inputs)
        for position, name in enumerate(FUNCTIONS)
    }
    return request.param, inputs, got


@pytest.mark.parametrize("path", BOUNDS)
@pytest.mark.parametrize("name", FUNCTIONS)
def test_within_bound_of_the_exact_value_with_numpy_s_special_values(computed, name, path):
    """Against libm's long double functions, and numpy's f32 results where they are not
    finite; subnormal results as numpy's flushed to zero of their sign, as both runners
    flush them in XLA:CPU's mode."""
    runner, inputs, results = computed
    x, got = inputs[path], results[path, name]
    function = FUNCTIONS[name]
    with np.errstate(all="ignore"):
        exact = function(x.astype(np.longdouble))
        expected = function(x)
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(np.signbit(got[~nan]), np.signbit(expected[~nan]))  # -0.0 too
    assert np.array_equal(np.isinf(got), np.isinf(expected))
    tiny = np.abs(expected) < F32.tiny
    flushed = np.where(tiny, np.float32(0) * expected, expected)
    assert np.array_equal(got[tiny], flushed[tiny])
    ulps = ulps_off(got, exact, np.float32)
    assert ulps.max() <= BOUNDS[path], x[np.argmax(ulps)]


@pytest.mark.toolchain("ld")
def test_iree_links_f32_sin_as_a_system_library_unless_embedded_linking_is_chosen(tmp_path):
    """f64 ``sin`` is not in IREE's embedded libm: the module is a system library from the
    start; with embedded linking chosen, a tensor within 2^19 takes the f64 polynomials
    (no undefined ``sin``)."""
    from test_iree_target import ARCH, executable_formats

    from rewriter.iree import compile_module, load

    x = np.linspace(-3, 3, 64, dtype=np.float32) * np.float32(1e4)
    with jax.enable_x64(True):
        text = rewriter.export(jnp.sin, x).text
    source = tmp_path / "sin.iree.mlir"
    source.write_text(rewriter.rewrite(text, abi="iree").text)
    system, embedded = tmp_path / "system.vmfb", tmp_path / "embedded.vmfb"
    compile_module(source, system, cache=False)
    assert executable_formats(system) == {f"system-elf-{ARCH}"}
    chosen = ("--iree-llvmcpu-link-embedded=true",)
    compile_module(source, embedded, cache=False, extra_args=chosen)
    assert executable_formats(embedded) == {f"embedded-elf-{ARCH}"}
    got = load(embedded, imports={}).main(x)
    ulps = ulps_off(got, np.sin(x.astype(np.longdouble)), np.float32)
    assert ulps.max() <= BOUNDS["within"]  # IREE's f32 sin(3e4) is far off


def _mixed() -> np.ndarray:
    """Small elements with one in a hundred beyond 2^19, the edges of Payne and Hanek's
    bands (2^49, 2^73, 2^97, 2^121) and their neighbours, the f32 nearest a multiple of
    pi/2 (16367173 2^72), and the special values."""
    rng = np.random.default_rng(1)
    x = rng.uniform(-10, 10, 200_000)
    x[::100] = np.sign(rng.normal(size=2_000)) * 10.0 ** rng.uniform(-45, 38.53, 2_000)
    edges = np.array([2.0**p for p in (19, 25, 49, 73, 97, 121)], dtype=np.float32)
    near = [np.nextafter(edges, 0), edges, np.nextafter(edges, np.inf)]
    worst = np.float32(16367173 * 2.0**72)
    extra = np.concatenate([*near, [worst, np.nextafter(worst, 0)], np.array(SPECIAL)])
    return np.concatenate([x, extra, -extra]).astype(np.float32)


@pytest.mark.parametrize("runner", RUNNERS)
def test_a_tensor_with_elements_beyond_2_19_within_bound(runner, tmp_path):
    """Payne and Hanek's reduction in f64 for every element, within 0.5 + 2^-26 ulp as
    f32_in_f64.py derives it, with -0.0, infinities and NaN as numpy's."""
    if runner == "iree":
        require_tool("ld")  # libm's sin of the wide arguments, linked as a system library
    x = _mixed()
    results = run_on(runner, lambda a: (jnp.sin(a), jnp.cos(a), jnp.tan(a)), [x], tmp_path)
    for got, function in zip(results, FUNCTIONS.values(), strict=True):
        got = np.asarray(got)
        with np.errstate(all="ignore"):
            exact = function(x.astype(np.longdouble))
            expected = function(x)
        nan = np.isnan(expected)
        assert np.array_equal(np.isnan(got), nan)
        assert np.array_equal(np.signbit(got[~nan]), np.signbit(expected[~nan]))
        ulps = ulps_off(got, exact, np.float32)  # 0 where the result is subnormal
        assert ulps.max() <= BOUNDS["within"], x[np.argmax(ulps)]


def test_iree_with_embedded_linking_gets_a_tensor_beyond_2_19_right(tmp_path):
    """Payne and Hanek's reduction needs no libm: with embedded linking chosen, a tensor
    with elements up to 1e30 is within bound too (IREE's f32 sin is far off there)."""
    from rewriter.iree import compile_module, load

    x = _mixed()
    with jax.enable_x64(True):
        text = rewriter.export(jnp.sin, x).text
    source = tmp_path / "sin.iree.mlir"
    source.write_text(rewriter.rewrite(text, abi="iree").text)
    chosen = ("--iree-llvmcpu-link-embedded=true",)
    compile_module(source, tmp_path / "embedded.vmfb", cache=False, extra_args=chosen)
    got = np.asarray(load(tmp_path / "embedded.vmfb", imports={}).main(x))
    finite = np.isfinite(x)
    exact = np.sin(x[finite].astype(np.longdouble))
    assert ulps_off(got[finite], exact, np.float32).max() <= BOUNDS["within"]


@pytest.mark.toolchain("ld")
def test_iree_sin_of_a_static_tensor_calls_no_libm_and_is_vector_code(tmp_path):
    """Both reductions are f64 arithmetic without calls: the dispatch has no ``sin`` call
    (libm's, one element at a time) and multiplies packed f64 (``vmulpd``, ``fmul v.2d``)."""
    from rewriter.iree import compile_module

    x = _mixed()
    with jax.enable_x64(True):
        text = rewriter.export(jnp.sin, x).text
    source = tmp_path / "sin.iree.mlir"
    source.write_text(rewriter.rewrite(text, abi="iree").text)
    dump = tmp_path / "executables"
    flag = f"--iree-hal-dump-executable-files-to={dump}"
    compile_module(source, tmp_path / "program.vmfb", extra_args=(flag,), cache=False)
    assembly = "\n".join(path.read_text(encoding="utf-8") for path in dump.glob("*.s"))
    assert re.search(r"vmulpd|fmul\s+v\d+\.2d", assembly)  # x86-64, arm64
    assert not re.search(r"call\w*\s+(sin|cos|tan)\b", assembly)


def test_the_compiled_sin_calls_no_libm_and_is_vector_code(tmp_path):
    """The same on the compiled path: the library's code (clang vectorizes the loops) has
    no ``sin`` call and multiplies packed f64 (``mulpd`` on x86-64, ``fmul v.2d`` on
    arm64)."""
    import subprocess

    from mlir_tools import LLVM_TOOLS, require_tool

    from rewriter.compile import compile_module

    for tool in LLVM_TOOLS:
        require_tool(tool)
    objdump = require_tool("objdump")
    x = _mixed()
    with jax.enable_x64(True):
        text = rewriter.export(jnp.sin, x).text
    library = tmp_path / "sin.so"
    compile_module(rewriter.rewrite(text).text, library, blas=None)
    done = subprocess.run([objdump, "-d", str(library)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert re.search(r"mulpd|fmul\s+v\d+\.2d", done.stdout)
    assert not re.search(r"(call|bl)\s+[0-9a-f]*\s*<(sin|cos|tan)(@plt)?>", done.stdout)
