"""Calls and composites inlined before the input fixes, as XLA inlines them
(rewriter/compile/composites.py): XLA's folds reach into a decomposition or a callee,
``jnp.arccosh(x + 1)`` is ``log1p(sqrt(x) * (sqrt(x + 2) + sqrt(x)))`` under ``jax.jit``
(``(x + 1) - 1`` folded to ``x``); both paths were a unit or more off in 8 values of 100
while the decomposition stood apart."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, assert_jax_jits_bits, on_both_paths
from jax import lax

from rewriter.compile.composites import inline_calls

pytestmark = [pytest.mark.iree, pytest.mark.jax]

X = (np.abs(np.random.default_rng(6).standard_normal(100_000)) * 5 + 0.05).astype(np.float32)


def across(x):
    """Folds that reach into jax's private functions and composites."""
    return jnp.arccosh(x + 1), jnp.arcsinh(x * 2.0) / 3.0, jnp.cosh(x * 0.5) + 1.0


def test_calls_and_composites_are_inlined_but_top_k_and_erf():
    def program(x):
        return (*across(x), jax.scipy.special.erf(x), lax.top_k(x, 3)[0])

    changed, text = applied(inline_calls, program, jax.ShapeDtypeStruct((16,), np.float32))
    # jax's call of @arccosh, the composite inside it, arcsinh's and cosh's composites;
    # erf's and top_k's kept, the function no call names any more dropped
    assert changed == 4
    assert "call @" not in text and "@arccosh" not in text
    assert 'composite "chlo.acosh"' not in text and 'composite "chlo.asinh"' not in text
    assert 'composite "chlo.erf"' in text and 'composite "chlo.top_k"' in text


@on_both_paths
def test_folds_across_calls_are_jax_jits_bits(path, tmp_path):
    assert_jax_jits_bits(path, across, tmp_path, X)
