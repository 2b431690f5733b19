"""f32 cbrt on both runners (rewriter/compile/cbrt.py): IREE's f32 cbrt is 12 ulp off over
the whole range; rewritten, it is within 0.5 + 2^-25 ulp of the exact value, on a million
inputs, with numpy's special values. (f32 erf, whose IREE polynomial underflowed near 0,
is XLA's own: tests/test_xla_math.py.)"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from both_runners import RUNNERS, as_read_by, run_on, ulps_off

pytestmark = [pytest.mark.iree, pytest.mark.jax, pytest.mark.slow]

F32 = np.finfo(np.float32)
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, F32.tiny, -F32.tiny, 1.5e-5]
# In ulp of the exact value, as rewriter/compile/cbrt.py derives it: in f64 within 2^-49
# relative (pow's 2 ulp and the rounded 1/3), 2^-25 of an f32 ulp; rounded once to f32.
BOUND = 0.5 + 2.0**-25


def _inputs() -> np.ndarray:
    """A million f32 inputs of both signs, every magnitude from 1e-45 to 3.4e38; the
    special values."""
    rng = np.random.default_rng(0)
    signs = np.sign(rng.normal(size=1_000_000))
    magnitudes = 10.0 ** rng.uniform(-45, 38.53, 1_000_000)
    return np.concatenate([signs * magnitudes, SPECIAL]).astype(np.float32)


@pytest.fixture(scope="module", params=RUNNERS)
def computed(request, tmp_path_factory):
    """The runner, the inputs, and cbrt of them on it."""
    inputs = _inputs()
    folder = tmp_path_factory.mktemp(request.param)
    return request.param, inputs, np.asarray(run_on(request.param, jnp.cbrt, [inputs], folder))


def test_within_bound_of_the_exact_value_with_numpy_s_special_values(computed):
    """Against long double cbrt, numpy's results where not finite; subnormal results as
    numpy's flushed to zero of their sign, as both runners flush them in XLA:CPU's mode
    (which reads subnormal inputs as zeros too)."""
    runner, inputs, got = computed
    x = as_read_by(runner, inputs)
    with np.errstate(all="ignore"):
        exact = np.cbrt(x.astype(np.longdouble))
        expected = exact.astype(np.float32)
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(np.signbit(got[~nan]), np.signbit(expected[~nan]))
    assert np.array_equal(np.isinf(got), np.isinf(expected))
    tiny = np.abs(expected) < F32.tiny
    assert np.array_equal(got[tiny], as_read_by(runner, expected[tiny]))
    ulps = ulps_off(got, exact, np.float32)
    assert ulps.max() <= BOUND, x[np.argmax(ulps)]
