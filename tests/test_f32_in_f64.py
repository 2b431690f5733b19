"""f32 sin, cos and tan on both runners (rewriter/compile/f32_in_f64.py): IREE's f32
polynomials reduce the argument in f32 (sin(1e4) 2.6e-4 off, sin(1e20) -inf, tan of large
arguments NaN); computed in f64, they are within 0.5 + 2^-29 ulp (libm's, for a tensor with
an element beyond 2^19) or 0.5 + 2^-26 (the f64 polynomials, for one within) of the exact
value, on a million inputs each, with numpy's special values."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from both_runners import RUNNERS, run_on, ulps_off

import rewriter

pytestmark = [pytest.mark.iree, pytest.mark.jax, pytest.mark.slow]

F32 = np.finfo(np.float32)
SPECIAL = [
    0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-40, F32.tiny, F32.max, -F32.max,
    1e4, 1e10, 1e20, 1e38, np.pi / 2, -np.pi / 2, np.pi, 3 * np.pi / 2, 1.5707963, 1.5707964,
    102940.41, 8.9e6, 2.0**24, 2.0**100, 2.0**19, -(2.0**19), 252.89821,
]  # fmt: skip

# In ulp of the exact value, as rewriter/compile/f32_in_f64.py derives them: a tensor with
# an element beyond 2^19 takes libm's f64 functions (within 1 f64 ulp, 2^-29 of an f32 ulp),
# one within takes the f64 reduction and polynomials (within 2^-50 relative, 2^-26 of an
# f32 ulp); the conversion to f32 rounds once more.
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
    finite; subnormal results as numpy's, which IREE flushes to zero of their sign."""
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
    flushed = np.where(tiny & (runner == "iree"), np.float32(0) * expected, expected)
    assert np.array_equal(got[tiny], flushed[tiny])
    ulps = ulps_off(got, exact, np.float32)
    assert ulps.max() <= BOUNDS[path], x[np.argmax(ulps)]


def test_iree_links_f32_sin_as_a_system_library_unless_embedded_linking_is_chosen(tmp_path):
    """f64 ``sin`` is not in IREE's embedded libm: the module is a system library from the
    start; with embedded linking chosen, a tensor within 2^19 still takes the f64
    polynomials, and one beyond IREE's own f32 ``sin`` (no undefined ``sin``)."""
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
