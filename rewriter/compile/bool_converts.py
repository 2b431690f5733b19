"""Booleans converted to numbers as a select of 1 and 0.

jax multiplies by a boolean array converted to numbers: ``x @ mask.astype(jnp.float32)``,
``x @ jnp.eye(n)`` (``eye`` is ``iota == iota`` converted). IREE 3.13's input pipeline
folds that ``stablehlo.convert`` into the product, a ``linalg.matmul`` of an ``i1``
operand, and then:

- the compiled path's loops convert that operand as the named op says when it says
  nothing, signed, and a signed ``i1`` true is -1: ``x @ jnp.eye(6)`` gave ``-x``;
- IREE's own build fails on it ("failed to legalize unresolved target materialization
  from 'tensor<6x3xi8, #iree_encoding.encoding<... element_types = [f32, i1, f32]'").

``bool_converts`` writes each ``stablehlo.convert`` of ``i1`` elements to a float or an
integer type as ``stablehlo.select`` of the booleans between 1 and 0 of that type: what
StableHLO's conversion of a boolean gives (true is 1), as an op no product absorbs.
"""

from __future__ import annotations

from typing import Any

from .mlir_walk import Splats, op_result, replace_each

CONVERT = "stablehlo.convert"


def bool_converts(module: Any) -> int:
    """Rewrite every conversion of booleans of the ``iree.compiler.ir`` ``module`` as the
    module's doc says; return how many."""
    return replace_each(module, CONVERT, _target, _selected)


def _target(ir: Any, operation: Any) -> Any | None:
    """The converted tensor type when ``operation`` converts booleans to a float or a
    non-boolean integer type, else None."""
    given, result = operation.operands[0].type, operation.results[0].type
    if not (isinstance(given, ir.RankedTensorType) and isinstance(result, ir.RankedTensorType)):
        return None
    source, target = given.element_type, result.element_type
    if not (isinstance(source, ir.IntegerType) and source.width == 1):
        return None
    if isinstance(target, ir.FloatType):
        return result
    if isinstance(target, ir.IntegerType) and target.width > 1:
        return result
    return None


def _selected(ir: Any, operation: Any, result: Any) -> Any:
    booleans = operation.operands[0]
    splats = Splats(ir, booleans)
    if isinstance(result.element_type, ir.FloatType):
        one, zero = splats(1.0, result), splats(0.0, result)
    else:
        one, zero = splats.integer(1, result), splats.integer(0, result)
    return op_result(ir, "stablehlo.select", result, booleans, one, zero)
