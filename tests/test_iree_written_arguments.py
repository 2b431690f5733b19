"""Which arguments IREE may write into (rewriter/iree/written_arguments.py), on StableHLO
texts: the arguments an in-place op's operand is made of, through any chain of ops, and all
of them when the chain leaves what the walk can follow."""

from __future__ import annotations

import pytest

from rewriter.iree.written_arguments import written_arguments

pytestmark = pytest.mark.iree

# %x scattered into (x.at[i].add(v)): only x.
SCATTER = """
func.func public @main(%x: tensor<8xf32>, %i: tensor<2x1xi32>, %v: tensor<2xf32>) -> tensor<8xf32> {
  %r = "stablehlo.scatter"(%x, %i, %v) <{scatter_dimension_numbers = #stablehlo.scatter<
      inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }) : (tensor<8xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}
"""
# the operand of an update of a slice made from %y through an add: y (more than IREE writes,
# never less); %x only read.
UPDATE_OF_SUM = """
func.func public @main(%x: tensor<4xf32>, %y: tensor<8xf32>, %k: tensor<i32>) -> tensor<8xf32> {
  %d = stablehlo.add %y, %y : tensor<8xf32>
  %r = stablehlo.dynamic_update_slice %d, %x, %k
       : (tensor<8xf32>, tensor<4xf32>, tensor<i32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}
"""
# no in-place op: nothing written.
READ_ONLY = """
func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = stablehlo.add %x, %x : tensor<4xf32>
  return %r : tensor<4xf32>
}
"""
# an update of a slice inside a private function: its operand is the private function's
# argument, which the walk does not follow: every argument counts as written.
IN_A_CALLEE = """
func.func private @update(%a: tensor<8xf32>, %b: tensor<4xf32>) -> tensor<8xf32> {
  %k = stablehlo.constant dense<0> : tensor<i32>
  %r = stablehlo.dynamic_update_slice %a, %b, %k
       : (tensor<8xf32>, tensor<4xf32>, tensor<i32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}
func.func public @main(%x: tensor<8xf32>, %y: tensor<4xf32>) -> tensor<8xf32> {
  %r = call @update(%x, %y) : (tensor<8xf32>, tensor<4xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}
"""


def _written(text: str) -> list[list[int]]:
    from iree.compiler import ir

    from rewriter.iree.build import _public_functions

    with ir.Context() as context:
        context.allow_unregistered_dialects = True
        module = ir.Module.parse(text)
        return written_arguments(module, _public_functions(module))


@pytest.mark.parametrize(
    "text, written",
    [(SCATTER, [[0]]), (UPDATE_OF_SUM, [[1]]), (READ_ONLY, [[]]), (IN_A_CALLEE, [[0, 1]])],
    ids=["scatter", "update_of_sum", "read_only", "in_a_callee"],
)
def test_the_arguments_an_in_place_operand_is_made_of(text, written):
    assert _written(text) == written
