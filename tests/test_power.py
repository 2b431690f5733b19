"""f32 and f64 pow on both runners (rewriter/compile/power.py): IREE expands it into
exp(y * log(x)) in the operands' type, up to 1000 f64 ulp and 130 f32 ulp off, with
pow(x, 0) NaN; rewritten, it is within 2 f64 ulp and 0.5 + 2^-28 f32 ulp of the exact value
over a million pairs, with C99's special values (numpy's) on a grid of them."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from both_runners import RUNNERS, as_read_by, run_on, ulps_off

pytestmark = [pytest.mark.iree, pytest.mark.jax, pytest.mark.slow]

SPECIAL = [
    0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, 1.5, -1.5, 1e-30, -1e-30, 1e30,
    -1e30, 2.0**53, 2.0**53 + 2, -(2.0**53), 0.9999999, 1.0000001, np.inf, -np.inf, np.nan,
]  # fmt: skip

# In ulp of the exact value, as rewriter/compile/power.py derives them. f64: exp(t_hi)
# within 1 ulp (tests/test_iree_fast_exp.py), times 1 + t_lo rounded once by an fma (0.5),
# and t = y log|x| within 2^-54 relative for |t| <= 745 (0.5). f32: 2 f64 ulp are 2^-28 of
# an f32 ulp, and the result rounds once more to f32.
BOUNDS = {np.float64: 2.0, np.float32: 0.5 + 2.0**-28}


def _inputs(dtype) -> tuple[np.ndarray, np.ndarray]:
    """A million pairs of ``dtype``: ``x`` near 1 with large ``|y|``, every magnitude of
    ``x`` with the ``y`` that keep the result in range (and beyond), negative ``x`` with
    integer ``y``, and every pair of the special values."""
    rng = np.random.default_rng(0)
    finfo = np.finfo(dtype)
    low, high = np.log10(finfo.smallest_subnormal), np.log10(finfo.max)
    magnitude = 10.0 ** rng.uniform(low, high, 400_000)
    reach = np.log(float(finfo.max)) * 1.05 / np.abs(np.log(magnitude))  # |t| to 1.05 x max
    spread = rng.uniform(-1, 1, 400_000) * reach
    negative = -(10.0 ** rng.uniform(-3, 3, 200_000))
    whole = np.round(rng.uniform(-1, 1, 200_000) * np.log(float(finfo.max)) / np.log(-negative))
    near = rng.uniform(0.5, 2, 200_000)
    steep = rng.uniform(-1, 1, 200_000) * np.log(float(finfo.max)) / np.abs(np.log(near))
    grid_x, grid_y = np.meshgrid(SPECIAL, SPECIAL)
    x = np.concatenate([magnitude, negative, near, grid_x.ravel()])
    y = np.concatenate([spread, whole, steep, grid_y.ravel()])
    return x.astype(dtype), y.astype(dtype)


@pytest.fixture(
    scope="module",
    params=[(runner, kind) for runner in RUNNERS for kind in (np.float64, np.float32)],
    ids=lambda param: f"{param[0]}-{param[1].__name__}",
)
def computed(request, tmp_path_factory):
    """The runner, the type, the inputs, and pow of them on that runner."""
    runner, dtype = request.param
    x, y = _inputs(dtype)
    folder = tmp_path_factory.mktemp(runner)
    return runner, dtype, x, y, np.asarray(run_on(runner, jnp.power, [x, y], folder))


def test_within_bound_of_the_exact_value_with_c99_s_special_values(computed):
    """Against libm's long double pow (11 more bits than f64 on x86-64), and numpy's
    results where they are not finite; results below the smallest normal flushed to zero
    of their sign, as both runners flush them in XLA:CPU's mode."""
    runner, dtype, x, y, got = computed
    x, y = as_read_by(runner, x), as_read_by(runner, y)
    with np.errstate(all="ignore"):
        exact = np.power(x.astype(np.longdouble), y.astype(np.longdouble))
        expected = np.power(x, y)
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(got), nan), (x[np.isnan(got) != nan], y[np.isnan(got) != nan])
    assert np.array_equal(np.signbit(got[~nan]), np.signbit(expected[~nan]))
    assert np.array_equal(np.isinf(got), np.isinf(expected)), x[np.isinf(got) != np.isinf(expected)]
    tiny = np.abs(expected) < np.finfo(dtype).tiny
    assert np.array_equal(got[tiny], dtype(0) * expected[tiny])
    ulps = ulps_off(got, exact, dtype)
    print(runner, dtype.__name__, "ulps", ulps.max())
    assert ulps.max() <= BOUNDS[dtype], (x[np.argmax(ulps)], y[np.argmax(ulps)])


def test_iree_f64_cbrt_is_within_one_ulp(tmp_path):
    """The IREE path's f64 cbrt, pow(|x|, 1/3) and a Newton step
    (rewriter/iree/exact_math.py: 0.84 ulp), on a million normal values of both signs;
    pow alone is up to 120 ulp off, the 1/3 being rounded."""
    rng = np.random.default_rng(0)
    x = np.sign(rng.normal(size=1_000_000)) * 10.0 ** rng.uniform(-307, 308, 1_000_000)
    got = run_on("iree", jnp.cbrt, [x], tmp_path)
    ulps = ulps_off(got, np.cbrt(x.astype(np.longdouble)), np.float64)
    assert ulps.max() <= 1, x[np.argmax(ulps)]
