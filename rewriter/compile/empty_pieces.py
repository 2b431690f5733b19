"""Concatenations of pieces of which some are empty, without those pieces.

``jnp.pad(x, ..., mode="edge")`` of an array of symbolic size concatenates, along each
dimension, the edge repeated as often as the pad is wide and the array: a pad of 0 along a
dimension makes pieces of size 0 there (``tensor<0x?x4xf32>``). IREE 3.13 lowers a
concatenation of dynamic shape to a loop that reads each element from its piece, and an
empty piece to a buffer on the stack inside that loop, which it refuses ("'memref.alloca'
op all stack allocations need to be hoisted to the entry block of the function"), on both
paths.

``empty_pieces`` drops from every ``stablehlo.concatenate`` the operands of static size 0
along the concatenated dimension (they hold no element of the result, as XLA's simplifier
drops them); a concatenation left with one operand of the result's type is that operand.
"""

from __future__ import annotations

from typing import Any

from .mlir_walk import fold_each, op_result

CONCATENATE = "stablehlo.concatenate"


def empty_pieces(module: Any) -> int:
    """Drop, in place, the empty operands of the concatenations of the
    ``iree.compiler.ir`` ``module`` (in its context); return how many concatenations
    changed."""
    return fold_each(module, (CONCATENATE,), _without_empty_pieces)


def _without_empty_pieces(ir: Any, operation: Any) -> Any:
    """The concatenation without its empty operands (made at the insertion point), or None
    when it has none, or nothing but them."""
    dimension = ir.IntegerAttr(operation.attributes["dimension"]).value
    pieces = list(operation.operands)
    kept = [piece for piece in pieces if ir.RankedTensorType(piece.type).shape[dimension] != 0]
    if len(kept) == len(pieces) or not kept:
        return None
    result = operation.results[0].type
    if len(kept) == 1 and str(kept[0].type) == str(result):
        return kept[0]
    return op_result(ir, CONCATENATE, result, *kept, dimension=operation.attributes["dimension"])
