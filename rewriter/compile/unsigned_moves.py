"""Gathers and scatters of unsigned integers of dynamic shape, on their bits.

IREE 3.13's StableHLO input pipeline handles unsigned elements of dynamic shape in gathers
and scatters before it makes them signless, and fails there:

- it rewrites some gathers as reshapes, which StableHLO allows of static shapes only:
  ``x[::-1]`` along the symbolic batch of a uint8 array (jax's gather at reversed indices)
  failed on both paths ("'stablehlo.reshape' op result #0 must be statically shaped ...,
  but got 'tensor<?x9xui8>'");
- it reads a size of a scatter's unsigned operand with a ``tensor.dim`` it never converts:
  ``x.at[:, j].set(7)`` of such an array failed ("failed to legalize operation
  'tensor.dim' ... (tensor<?xui8>, index)").

The same ops of int8 run. A gather moves elements and reads none of their values; a
scatter that sets, adds, multiplies, ors or ands its updates computes the same bits on
signless integers of the same width (two's complement arithmetic wraps as unsigned
arithmetic does). So ``unsigned_moves`` runs each such op on the bits: ``bitcast_convert``
of the operands to signless integers, the op (a scatter's combiner on the signless
type), and ``bitcast_convert`` of its result back. A scatter taking the maximum or the
minimum compares values, and stays as it is.
"""

from __future__ import annotations

from typing import Any

from .mlir_walk import op_result, operations_named, signless_bits
from .scatter_masks import combiner

GATHER = "stablehlo.gather"
SCATTER = "stablehlo.scatter"
# The combiners whose result has the same bits for unsigned and signless operands.
_ON_BITS = ("set", "stablehlo.add", "stablehlo.multiply", "stablehlo.or", "stablehlo.and")


def unsigned_moves(module: Any) -> int:
    """Rewrite every gather and scatter of unsigned elements and dynamic shape of the
    ``iree.compiler.ir`` ``module`` as the module's doc says; return how many."""
    from iree.compiler import ir

    count = 0
    for operation in operations_named(module, GATHER, SCATTER):
        element = _unsigned_dynamic(ir, operation)
        if element is None:
            continue
        scattered = operation.name == SCATTER
        how = combiner(ir, operation) if scattered else None
        if scattered and how not in _ON_BITS:
            continue
        bits = ir.IntegerType.get_signless(element.width)
        # the operands that hold elements: a gather's first, a scatter's first and last
        moved = {0, 2} if scattered else {0}
        with ir.InsertionPoint(operation), operation.location:
            operands = [
                signless_bits(ir, value) if index in moved else value
                for index, value in enumerate(operation.operands)
            ]
            result = operation.results[0].type
            on_bits = ir.Operation.create(
                operation.name,
                results=[ir.RankedTensorType.get(result.shape, bits)],
                operands=operands,
                attributes={name: operation.attributes[name] for name in operation.attributes},
                regions=1 if scattered else 0,
            )
            if scattered:
                assert how is not None
                _combine(ir, on_bits, bits, how)
            back = op_result(ir, "stablehlo.bitcast_convert", result, on_bits.result)
        operation.results[0].replace_all_uses_with(back)
        operation.erase()
        count += 1
    return count


def _unsigned_dynamic(ir: Any, operation: Any) -> Any | None:
    """The unsigned element type of ``operation``'s one result of dynamic shape, or None."""
    if len(operation.results) != 1:
        return None
    result = operation.results[0].type
    if not isinstance(result, ir.RankedTensorType) or result.has_static_shape:
        return None
    element = result.element_type
    if isinstance(element, ir.IntegerType) and element.is_unsigned:
        return element
    return None


def _combine(ir: Any, scatter: Any, bits: Any, how: str) -> None:
    """``scatter``'s region: ``how`` (``"set"`` or an op's name) of the old and the new
    value, scalars of ``bits``."""
    scalar = ir.RankedTensorType.get([], bits)
    block = scatter.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        old, new = block.arguments[0], block.arguments[1]
        value = new if how == "set" else op_result(ir, how, scalar, old, new)
        ir.Operation.create("stablehlo.return", operands=[value])
