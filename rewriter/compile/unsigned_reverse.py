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

from . import contexts

_UNSIGNED = re.compile(r"ui([0-9]+)$")


def signless_reverses(text: str) -> str:
    """``text`` with every ``stablehlo.reverse`` of unsigned elements done on their bits."""
    if "stablehlo.reverse" not in text:
        return text
    from iree.compiler import ir

    context = contexts.context()
    module = ir.Module.parse(text, context)
    with context:
        if not reverse_signless(module):
            return text
    return module.operation.get_asm(enable_debug_info=True)


def reverse_signless(module) -> int:
    """Rewrite, in place, every unsigned ``stablehlo.reverse`` of the ``iree.compiler.ir``
    ``module`` (in its context); return how many."""
    from iree.compiler import ir

    found = []

    def visit(operation):
        if operation.name == "stablehlo.reverse":
            element = str(ir.RankedTensorType(operation.results[0].type).element_type)
            if _UNSIGNED.match(element):
                found.append(operation)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for operation in found:
        unsigned = ir.RankedTensorType(operation.results[0].type)
        match = _UNSIGNED.match(str(unsigned.element_type))
        assert match is not None  # found for its unsigned elements
        with ir.InsertionPoint(operation), operation.location:
            signless = ir.RankedTensorType.get(
                unsigned.shape, ir.IntegerType.get_signless(int(match.group(1))), unsigned.encoding
            )
            bits = ir.Operation.create(
                "stablehlo.bitcast_convert", results=[signless], operands=[operation.operands[0]]
            )
            reversed_bits = ir.Operation.create(
                "stablehlo.reverse",
                results=[signless],
                operands=[bits.result],
                attributes={"dimensions": operation.attributes["dimensions"]},
            )
            back = ir.Operation.create(
                "stablehlo.bitcast_convert", results=[unsigned], operands=[reversed_bits.result]
            )
        operation.results[0].replace_all_uses_with(back.result)
        operation.erase()
    return len(found)
