"""The math fixes on dynamic shapes (shape-polymorphic exports), on both runners: each fix
makes its constants and buffers of the operand's runtime sizes (``mlir_walk.Splats``,
``replace_by_template``), so a program exported for ``n`` elements gives, bit for bit, what
the same program exported for the static shape of its input gives. Before, dynamic shapes
kept IREE's own lowering: ``log1p(1e-12)`` hundreds of billions of ulp off, ``pow`` 12 ulp,
f32 ``cbrt`` 11, and f64 ``cbrt`` did not compile on IREE ("failed to legalize
operation 'math.cbrt'"). The IREE path's f64 ``exp`` and ``tanh`` (written for speed) take
dynamic shapes too, so that ``expm1``, which uses ``exp``, is the same on both."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from both_runners import RUNNERS, run_text_on
from jax import export

pytestmark = [pytest.mark.iree, pytest.mark.jax, pytest.mark.slow]


def _values(dtype) -> np.ndarray:
    """Magnitudes from tiny to huge, both signs, zeros, infinities and NaN."""
    rng = np.random.default_rng(0)
    finfo = np.finfo(dtype)
    low, high = np.log10(finfo.smallest_subnormal), np.log10(finfo.max)
    magnitudes = 10.0 ** rng.uniform(low, high, 3000)
    near_zero = 10.0 ** rng.uniform(-20, 0, 3000)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5]
    signs = np.where(rng.random(6000) < 0.5, -1.0, 1.0)
    values = np.concatenate([signs * np.concatenate([magnitudes, near_zero]), special])
    with np.errstate(over="ignore"):
        return values.astype(dtype)


# name: (function, dtype, symbolic shape of its one argument, the static shape)
PROGRAMS = {
    "expm1 f64": (jnp.expm1, np.float64, "n", (6008,)),
    "log1p f64": (lambda x: jnp.log1p(jnp.abs(x)), np.float64, "n", (6008,)),
    "pow f64": (lambda x: jnp.power(jnp.abs(x), 0.37), np.float64, "n", (6008,)),
    "pow f32": (lambda x: jnp.power(jnp.abs(x), 1.7), np.float32, "n, 8", (751, 8)),
    "cbrt f64": (jnp.cbrt, np.float64, "4, n", (4, 1502)),
    "cbrt f32": (jnp.cbrt, np.float32, "n", (6008,)),
    "erf f32": (lambda x: jax.scipy.special.erf(x * 1e-30), np.float32, "n, m", (8, 751)),
    "exp f64": (jnp.exp, np.float64, "n", (6008,)),
    "tanh f64": (jnp.tanh, np.float64, "n", (6008,)),
}


def _exported(function, dtype, shape) -> str:
    with jax.enable_x64(True):
        argument = jax.ShapeDtypeStruct(shape, dtype)
        return export.export(jax.jit(function))(argument).mlir_module()


@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.parametrize("name", PROGRAMS)
def test_a_dynamic_shape_gives_the_static_shapes_numbers(runner, name, tmp_path):
    function, dtype, symbolic, static = PROGRAMS[name]
    values = _values(dtype).reshape(static)
    dynamic_text = _exported(function, dtype, export.symbolic_shape(symbolic))
    assert "?" in dynamic_text.split("func.func", 2)[1].split("\n", 1)[0]
    static_text = _exported(function, dtype, static)
    (tmp_path / "dynamic").mkdir()
    (tmp_path / "static").mkdir()
    got = run_text_on(runner, dynamic_text, [values], tmp_path / "dynamic")
    want = run_text_on(runner, static_text, [values], tmp_path / "static")
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
