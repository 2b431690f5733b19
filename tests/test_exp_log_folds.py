"""Products, quotients and logarithms of ``exp`` and ``pow`` written as XLA's simplifier
writes them, on both paths (rewriter/compile/exp_log_folds.py): ``jnp.log(jnp.exp(x))``
is ``x`` under ``jax.jit``, ``exp(a) * exp(b)`` is ``exp(a + b)``, ``log((-3) ** 3)`` is
``3 log 3``; both paths computed each exp and log, a unit or two off, and NaN for the
last."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, assert_jax_jits_bits, main_on, on_both_paths
from jax import lax

import rewriter
from rewriter.compile.exp_log_folds import exp_log_folds

pytestmark = [pytest.mark.iree, pytest.mark.jax]

RNG = np.random.default_rng(3)
X = RNG.standard_normal(4096).astype(np.float32)
Y = (RNG.random(4096) * 5 + 0.01).astype(np.float32)
# bases with negative ones and exponents with zeros: log(pow) of a negative base is finite
BASES = np.array([-2.0, -3.0, 2.0, -0.5, 0.0, 1.5], np.float32)
POWERS = np.array([2.0, 3.0, 0.0, 2.0, 0.0, -1.0], np.float32)


def folded(x, y):
    """What XLA folds, each computed by the ops both paths agree with XLA on."""
    e = jnp.exp(x)
    return (
        e * jnp.exp(y),  # exp(x + y)
        e / jnp.exp(y),  # exp(x - y)
        x / jnp.exp(y),  # x * exp(-y)
        jnp.log(jnp.exp(x)),  # x
        jnp.exp(x) ** y,  # exp(x * y)
        jnp.log(e * jnp.exp(y)),  # x + y: two folds in a row
        e,  # read on its own too
        lax.pow(x, 3.0),  # x * (x * x)
    )


def test_each_rule_folds_once():
    def rules(x, y, a, b):
        return (*folded(x, y), x / y**x, jnp.log(lax.pow(a, b)))

    changed, _ = applied(exp_log_folds, rules, X, Y, BASES, POWERS)
    # exp * exp, exp / exp, x / exp, log(exp), pow(exp), exp * exp and the log of it,
    # pow(x, 3), x / pow, log(pow)
    assert changed == 10
    changed, text = applied(exp_log_folds, logs_of_roots, NEAR_ONE)
    assert changed == 3 and "stablehlo.sqrt" in text  # the root kept: it is read


# Near 1, where the root's rounding is large beside its log: 0.5 * log(x) and
# log(sqrt(x)) differ there by up to hundreds of units in the last place.
NEAR_ONE = np.concatenate([RNG.uniform(0.99, 1.01, 100_000), RNG.uniform(1e-3, 9.0, 100_000)])
NEAR_ONE = np.concatenate([NEAR_ONE, [0.0, -1.0, np.inf, np.nan, 1.0]]).astype(np.float32)


def logs_of_roots(x):
    """What XLA folds to log(x) * 0.5 and log(x) * -0.5, the root read on its own too, and
    ``ndtri``'s log of a root of a log."""
    root = jnp.sqrt(x)
    return jnp.log(root), jnp.log(lax.rsqrt(x)), root, jnp.log(jnp.sqrt(-2.0 * jnp.log(x)))


@on_both_paths
def test_logs_of_roots_are_jax_jits_bits(path, tmp_path):
    assert_jax_jits_bits(path, logs_of_roots, tmp_path, NEAR_ONE)


@on_both_paths
def test_folds_are_jax_jits_bits(path, tmp_path):
    assert_jax_jits_bits(path, folded, tmp_path, X, Y)


@on_both_paths
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cubes_are_jax_jits_bits(path, dtype, tmp_path):
    """``lax.pow(x, 3.0)`` is ``x * (x * x)`` under ``jax.jit``: a unit off in one value of
    4 when computed as a power (f64 too, whose exp and log are each path's own)."""
    x = (X * 1e3).astype(dtype)

    def cube(x):
        return lax.pow(x, 3.0), lax.pow(x, jnp.full_like(x, 3.0))

    assert_jax_jits_bits(path, cube, tmp_path, x, x64=dtype == np.float64)


@on_both_paths
def test_the_log_of_a_power_of_a_negative_base_is_xlas(path, tmp_path):
    def log_of_power(a, b):
        return jnp.log(lax.pow(a, b))

    text = rewriter.export(log_of_power, BASES, POWERS).text
    got = np.asarray(main_on(path, text, tmp_path)(BASES, POWERS))
    expected = np.asarray(jax.jit(log_of_power)(BASES, POWERS))
    # B == 0 ? 0 : log(|A|) * B, by hand: 2 log 2, 3 log 3, 0, 2 log 0.5, 0, -log 1.5
    by_hand = np.array([2 * np.log(2), 3 * np.log(3), 0, 2 * np.log(0.5), 0, -np.log(1.5)])
    np.testing.assert_allclose(expected, by_hand, rtol=2e-7)
    np.testing.assert_allclose(got, by_hand, rtol=2e-7)  # each log within an ulp
