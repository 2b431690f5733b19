"""``stablehlo.reverse`` of unsigned integers, as signless ones.

IREE 3.13's StableHLO input pipeline lowers a reverse to a ``linalg.generic`` that reads its
input with ``tensor.extract``, and leaves that read's unsigned element type unconverted:
``jnp.flip`` of a ``uint32`` array fails to compile ("failed to legalize operation
'linalg.generic'"). Reversing moves elements and never reads their values, so the compiled
path reverses the bits instead: ``bitcast_convert`` to the signless type of the same width,
the reverse, and ``bitcast_convert`` back, which gives the same elements.
"""

from __future__ import annotations

import re

from .mlir_walk import op_result, operations_named, signless_bits

_UNSIGNED = re.compile(r"ui([0-9]+)$")


def reverse_signless(module) -> int:
    """Rewrite, in place, every unsigned ``stablehlo.reverse`` of the ``iree.compiler.ir``
    ``module`` (in its context); return how many."""
    from iree.compiler import ir

    count = 0
    for operation in operations_named(module, "stablehlo.reverse"):
        unsigned = ir.RankedTensorType(operation.results[0].type)
        match = _UNSIGNED.match(str(unsigned.element_type))
        if match is None:
            continue
        count += 1
        with ir.InsertionPoint(operation), operation.location:
            bits = signless_bits(ir, operation.operands[0])
            reversed_bits = op_result(
                ir,
                "stablehlo.reverse",
                bits.type,
                bits,
                dimensions=operation.attributes["dimensions"],
            )
            back = op_result(ir, "stablehlo.bitcast_convert", unsigned, reversed_bits)
        operation.results[0].replace_all_uses_with(back)
        operation.erase()
    return count
