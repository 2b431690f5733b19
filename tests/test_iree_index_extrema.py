"""argmax and argmin of the IREE path as two reductions (rewriter/iree/index_extrema.py):
which reduces change, that compile_module changes them, and that programs keep jax.jit's
indices (ties, NaNs, signed zeros, infinities; f32 with i32 indices, f64 with i64; 1-D and
along either axis of 2-D)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, counts_in_compile_module, run_with_fix

from rewriter.iree.index_extrema import index_extrema

pytestmark = [pytest.mark.iree, pytest.mark.jax]

MATRIX = np.zeros((5, 7), np.float32)
PROGRAMS = {
    "argmax": jnp.argmax,
    "argmin": jnp.argmin,
    "argmax_axis_0": lambda x: jnp.argmax(x, axis=0),
    "argmin_axis_1": lambda x: jnp.argmin(x, axis=1),
}


def test_argmax_and_argmin_of_floats_become_two_reductions():
    for name, function in PROGRAMS.items():
        changed, text = applied(index_extrema, function, MATRIX)
        assert changed == 1, name
        assert "stablehlo.maximum" in text or "stablehlo.minimum" in text
        assert "stablehlo.select" in text and text.count("stablehlo.reduce(") == 2, name


def test_other_reductions_stay():
    for function, inputs in (
        (jnp.max, MATRIX),  # one operand
        (jnp.argmax, MATRIX.astype(np.int32)),  # no NaN test in the body
    ):
        changed, _ = applied(index_extrema, function, inputs)
        assert changed == 0


READ_VALUE = """module {
  func.func public @main(%x: tensor<6xf32>) -> (tensor<f32>, tensor<i32>) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %iota = stablehlo.iota dim = 0 : tensor<6xi32>
    %r:2 = stablehlo.reduce(%x init: %cst), (%iota init: %c) across dimensions = [0] :
        (tensor<6xf32>, tensor<6xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)
     reducer(%a: tensor<f32>, %b: tensor<f32>) (%i: tensor<i32>, %j: tensor<i32>)  {
      %2 = stablehlo.compare GT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %3 = stablehlo.compare NE, %a, %a, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %4 = stablehlo.or %2, %3 : tensor<i1>
      %5 = stablehlo.compare EQ, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %6 = stablehlo.compare LT, %i, %j, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %7 = stablehlo.and %5, %6 : tensor<i1>
      %8 = stablehlo.or %4, %7 : tensor<i1>
      %9 = stablehlo.select %4, %a, %b : tensor<i1>, tensor<f32>
      %10 = stablehlo.select %8, %i, %j : tensor<i1>, tensor<i32>
      stablehlo.return %9, %10 : tensor<f32>, tensor<i32>
    }
    return %r#0, %r#1 : tensor<f32>, tensor<i32>
  }
}
"""


def changed_in(text: str) -> int:
    from iree.compiler import ir

    with ir.Context() as context:
        context.allow_unregistered_dialects = True
        module = ir.Module.parse(text)
        changed = index_extrema(module)
        assert module.operation.verify()
        return changed


def test_only_the_body_jax_writes_with_its_value_unread_changes():
    """The value result read (an element equal to the maximum may be -0 where it is +0):
    the reduce stays. Read only the index, it changes; with any op of the body altered,
    or the indices not an iota along the dimension, it stays."""
    assert changed_in(READ_VALUE) == 0
    index_only = (
        READ_VALUE.replace("return %r#0, %r#1", "return %r#1")
        .replace("-> (tensor<f32>, tensor<i32>) {", "-> (tensor<i32>) {")
        .replace("%r#1 : tensor<f32>, tensor<i32>", "%r#1 : tensor<i32>")
    )
    assert changed_in(index_only) == 1
    altered = (
        index_only.replace("compare NE, %a, %a", "compare NE, %b, %b"),  # the other's NaN
        index_only.replace("compare LT, %i, %j", "compare GT, %i, %j"),  # later on ties
        index_only.replace("select %4, %a, %b", "select %8, %a, %b"),
        index_only.replace("stablehlo.or %4, %7", "stablehlo.and %4, %7"),
        index_only.replace("stablehlo.iota dim = 0 : tensor<6xi32>", "stablehlo.constant "
                           "dense<[5, 4, 3, 2, 1, 0]> : tensor<6xi32>"),
    )  # fmt: skip
    for text in altered:
        assert text != index_only
        assert changed_in(text) == 0


@pytest.mark.toolchain
def test_compile_module_rewrites_them(tmp_path, monkeypatch):
    from rewriter.iree import index_extrema as module

    counts = counts_in_compile_module(
        monkeypatch, module, "index_extrema", jnp.argmax, MATRIX, folder=tmp_path
    )
    assert counts == [1]


def special(shape, dtype, seed):
    """Values with many ties: small integers, signed zeros, infinities and NaNs."""
    rng = np.random.default_rng(seed)
    values = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, 2.0], dtype)
    return rng.choice(values, size=shape).astype(dtype)


def lines(dtype) -> list[np.ndarray]:
    """Lines whose extremum is each kind of tie: NaNs at several places, +-inf only, zeros
    of both signs only, no NaN and repeated maxima, one element."""
    return [
        np.array([1.0, np.nan, 3.0, np.nan, 3.0], dtype),
        np.array([-np.inf, -np.inf, -np.inf], dtype),
        np.array([np.inf, -np.inf, np.inf], dtype),
        np.array([-0.0, 0.0, -0.0, 0.0], dtype),
        np.array([0.0, -0.0, 0.0], dtype),
        np.array([2.0, -1.0, 2.0, -1.0, 2.0], dtype),
        np.array([5.0], dtype),
    ]


@pytest.mark.toolchain
@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_argmax_and_argmin_keep_jax_indices(name, dtype, tmp_path):
    function = PROGRAMS[name]
    inputs = [special((9, 13), dtype, seed) for seed in range(3)]
    if name in ("argmax", "argmin"):
        inputs += lines(dtype)
    for number, x in enumerate(inputs):
        got, expected = run_with_fix(index_extrema, function, x, tmp_path / f"{number}.mlir")
        np.testing.assert_array_equal(got, expected, err_msg=f"{name} of {x!r}")
