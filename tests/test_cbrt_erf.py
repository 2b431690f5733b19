"""f32 cbrt and f32 erf near zero on both runners (rewriter/compile/cbrt_erf.py): IREE's
f32 cbrt is 12 ulp off over the whole range, and its f32 erf underflows below about 1e-36
(millions of ulp off on IREE, 36 near 2e-38 compiled); rewritten, cbrt is within
0.5 + 2^-25 ulp and erf of |x| < 2^-16 within 0.5 + 2^-9 ulp of the exact value, on a
million inputs each, with numpy's special values."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special
from both_runners import RUNNERS, as_read_by, run_on, ulps_off

pytestmark = [pytest.mark.iree, pytest.mark.jax, pytest.mark.slow]

F32 = np.finfo(np.float32)
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, F32.tiny, -F32.tiny, 1.5e-5]
# In ulp of the exact value, as rewriter/compile/cbrt_erf.py derives them: cbrt in f64
# within 2^-49 relative (pow's 2 ulp and the rounded 1/3), 2^-25 of an f32 ulp; erf below
# 2^-16 as x 2/sqrt(pi) in f64, the dropped x^3 term below 2^-33 relative, 2^-9 of an f32
# ulp; each rounded once to f32.
BOUNDS = {"cbrt": 0.5 + 2.0**-25, "erf": 0.5 + 2.0**-9}


def _inputs() -> dict[str, np.ndarray]:
    """A million f32 inputs per function, of both signs: for cbrt every magnitude from
    1e-45 to 3.4e38, for erf every magnitude from 1e-45 to 2^-16; the special values."""
    rng = np.random.default_rng(0)

    def magnitudes(high: float) -> np.ndarray:
        signs = np.sign(rng.normal(size=1_000_000))
        return np.concatenate([signs * 10.0 ** rng.uniform(-45, high, 1_000_000), SPECIAL])

    return {
        "cbrt": magnitudes(38.53).astype(np.float32),
        "erf": magnitudes(np.log10(2.0**-16)).astype(np.float32),
    }


@pytest.fixture(scope="module", params=RUNNERS)
def computed(request, tmp_path_factory):
    """The runner, the inputs, and cbrt and erf of them on it."""
    inputs = _inputs()
    folder = tmp_path_factory.mktemp(request.param)

    def functions(a, b):
        return jnp.cbrt(a), jax.scipy.special.erf(b)

    cbrt, erf = run_on(request.param, functions, [inputs["cbrt"], inputs["erf"]], folder)
    return request.param, inputs, {"cbrt": np.asarray(cbrt), "erf": np.asarray(erf)}


@pytest.mark.parametrize("name", BOUNDS)
def test_within_bound_of_the_exact_value_with_numpy_s_special_values(computed, name):
    """Against long double cbrt and f64 erf (scipy's, within a few f64 ulp: 2^-27 of an
    f32 ulp), numpy's results where not finite; subnormal results as numpy's flushed to
    zero of their sign, as both runners flush them in XLA:CPU's mode (which reads subnormal
    inputs as zeros too)."""
    runner, inputs, results = computed
    x, got = as_read_by(runner, inputs[name]), results[name]
    with np.errstate(all="ignore"):
        if name == "cbrt":
            exact = np.cbrt(x.astype(np.longdouble))
        else:
            exact = scipy.special.erf(x.astype(np.float64)).astype(np.longdouble)
        expected = exact.astype(np.float32)
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(np.signbit(got[~nan]), np.signbit(expected[~nan]))
    assert np.array_equal(np.isinf(got), np.isinf(expected))
    tiny = np.abs(expected) < F32.tiny
    assert np.array_equal(got[tiny], as_read_by(runner, expected[tiny]))
    ulps = ulps_off(got, exact, np.float32)
    assert ulps.max() <= BOUNDS[name], x[np.argmax(ulps)]
