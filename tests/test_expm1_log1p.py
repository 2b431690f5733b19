"""f64 expm1 and log1p on both runners (rewriter/compile/expm1_log1p.py): IREE lowers them
to exp(x) - 1 and log(1 + x), 6e-9 relative off at 1e-8 and 0 at 1e-20; rewritten, they are
within 2.5 ulp of the exact value over a million inputs, with numpy's special values."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from both_runners import RUNNERS, run_on

pytestmark = [pytest.mark.iree, pytest.mark.jax, pytest.mark.slow]

SPECIAL = [
    0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1e-310, 2.0**-54, -(2.0**-54),
    1e-20, 1e-8, -1e-8, 0.5, -0.5, np.nextafter(0.5, 1), 0.70710678118654752440 - 1,
    0.41421356237309504880, -1.0, -2.0, 709.78, 709.79, -745.2, -1e300, 1e300,
]  # fmt: skip

# Bounds in ulp of the exact value. expm1: the Taylor polynomial is within 0.9 ulp; above
# |x| = 1/2, exp(x) - 1 is within 2 e + 1/2 for an exp within e ulp (exp(x) has twice the
# ulp of the result at worst, and the subtraction rounds once), and both runners' f64 exp
# are within 1 (libm's; the compiled path's polynomial, rewriter/compile/f64_math.py, 0.87).
# log1p: the rounding of 1 + x is up to 2 ulp of log(1 + x) (1 + x in [1/2, 1/sqrt 2)),
# and libm's log adds 1/2.
BOUNDS = {"expm1": 2.5, "log1p": 2.5}


def _functions(x):
    return jnp.expm1(x), jnp.log1p(x)


def _inputs() -> np.ndarray:
    """A million f64 inputs: exp's whole range, both sides of each branch, magnitudes from
    1e-320 to 1000 of both signs, and the special values."""
    rng = np.random.default_rng(0)
    magnitudes = np.sign(rng.normal(size=250_000)) * 10.0 ** rng.uniform(-320, 3, 250_000)
    return np.concatenate(
        [
            rng.uniform(-750, 750, 200_000),
            rng.uniform(-1, 1, 300_000),
            rng.uniform(-0.75, 0.75, 150_000),
            rng.normal(size=100_000) * 1e-4,
            magnitudes,
            np.array(SPECIAL),
        ]
    )


@pytest.fixture(scope="module", params=RUNNERS)
def computed(request, tmp_path_factory) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The inputs, and expm1 and log1p of them on one runner."""
    x = _inputs()
    expm1, log1p = run_on(request.param, _functions, [x], tmp_path_factory.mktemp(request.param))
    return x, {"expm1": np.asarray(expm1), "log1p": np.asarray(log1p)}


@pytest.mark.parametrize("name", ["expm1", "log1p"])
def test_within_bound_of_the_exact_value_with_numpy_s_special_values(computed, name):
    """Against libm's long double functions (11 more bits than f64 on x86-64), and numpy's
    f64 results where they are not finite, zero or subnormal (kept, not flushed)."""
    x, results = computed
    got = results[name]
    function = np.expm1 if name == "expm1" else np.log1p
    with np.errstate(all="ignore"):
        exact = function(x.astype(np.longdouble))
        expected = function(x)
        nearest = exact.astype(np.float64)  # inf above f64's largest
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(np.signbit(got[~nan]), np.signbit(expected[~nan]))  # -0.0 too
    assert np.array_equal(np.isinf(got), np.isinf(expected))
    tiny = np.abs(expected) < np.finfo(np.float64).tiny
    assert np.array_equal(got[tiny], expected[tiny])  # zeros and subnormals: x itself
    normal = np.isfinite(nearest) & ~tiny
    spacing = np.spacing(np.abs(nearest[normal])).astype(np.longdouble)
    ulps = np.abs(got[normal].astype(np.longdouble) - exact[normal]) / spacing
    assert ulps.max() <= BOUNDS[name], x[normal][np.argmax(ulps)]
