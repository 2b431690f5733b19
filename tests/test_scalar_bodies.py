"""A window's body of several ops as scalar ops (rewriter/compile/scalar_bodies.py): the
step a scan combines with, written op for op, and the initial values it may leave out."""

from __future__ import annotations

import math

import pytest

from rewriter.compile import contexts
from rewriter.compile.scalar_bodies import Combine, scalar_body

# jax's body of lax.cumlogsumexp, as it exports it.
LOGADDEXP = """
func.func @body(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.maximum %a, %b : tensor<f32>
  %1 = stablehlo.subtract %a, %b : tensor<f32>
  %2 = stablehlo.compare NE, %1, %1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %3 = stablehlo.add %a, %b : tensor<f32>
  %4 = stablehlo.abs %1 : tensor<f32>
  %5 = stablehlo.negate %4 : tensor<f32>
  %6 = stablehlo.exponential %5 : tensor<f32>
  %7 = stablehlo.log_plus_one %6 : tensor<f32>
  %8 = stablehlo.add %0, %7 : tensor<f32>
  %9 = stablehlo.select %2, %3, %8 : tensor<i1>, tensor<f32>
  return %9 : tensor<f32>
}
"""


def body_of(text: str) -> Combine | None:
    from iree.compiler import ir

    module = ir.Module.parse(text, contexts.context())
    return scalar_body(ir, module.body.operations[0].operation)


def test_logaddexp_becomes_scalar_ops_in_order():
    combine = body_of(LOGADDEXP)
    assert combine is not None and not combine.adds
    assert combine.lines("%x", "%y", "%r", indent="") == [
        "%r_0 = arith.maximumf %x, %y : f32",
        "%r_1 = arith.subf %x, %y : f32",
        "%r_2 = arith.cmpf une, %r_1, %r_1 : f32",
        "%r_3 = arith.addf %x, %y : f32",
        "%r_4 = math.absf %r_1 : f32",
        "%r_5 = arith.negf %r_4 : f32",
        "%r_6 = math.exp %r_5 : f32",
        "%r_7 = math.log1p %r_6 : f32",
        "%r_8 = arith.addf %r_0, %r_7 : f32",
        "%r = arith.select %r_2, %r_3, %r_8 : f32",
    ]


def test_only_the_identity_may_be_left_out():
    """-inf is logaddexp's identity (``logaddexp(-inf, v) == v`` for every v, infinities
    and zeros included); 0 is not (``logaddexp(0, 0) = log 2``)."""
    combine = body_of(LOGADDEXP)
    assert combine is not None
    assert combine.identity(-math.inf)
    assert not combine.identity(0.0)
    assert not combine.identity(-1e30)  # logaddexp(-1e30, -inf) is -1e30, not -inf


@pytest.mark.parametrize(
    "changed",
    [
        ("%0 = stablehlo.maximum %a, %b", "%0 = stablehlo.constant dense<1.0>"),  # a constant
        ("%6 = stablehlo.exponential %5", "%6 = stablehlo.tanh %5"),  # no scalar form here
        ("return %9", "return %8"),  # not what the last op makes
    ],
)
def test_a_body_with_an_op_it_cannot_write_is_left_alone(changed):
    old, new = changed
    assert body_of(LOGADDEXP.replace(old, new)) is None


def test_an_integer_body_is_left_alone():
    text = """
func.func @body(%a: tensor<i32>, %b: tensor<i32>) -> tensor<i32> {
  %0 = stablehlo.add %a, %b : tensor<i32>
  %1 = stablehlo.add %0, %b : tensor<i32>
  return %1 : tensor<i32>
}
"""
    assert body_of(text) is None
