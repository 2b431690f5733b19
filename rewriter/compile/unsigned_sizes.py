"""The sizes of unsigned tensors, read from their signless bits.

IREE 3.13's StableHLO input pipeline makes unsigned tensors signless, but writes the
``stablehlo.get_dimension_size`` of one as a ``tensor.dim`` of the unsigned tensor, which
nothing then converts: an export of a symbolic shape with an unsigned argument whose size
the program reads (``x + 1`` of ``symbolic_shape("b, 9")`` uint8 pixels broadcasts the 1
to that size) failed on both paths, "failed to legalize operation 'tensor.dim' ...
(tensor<?x9xui8>, index) -> index".

``unsigned_sizes`` reads each such size from the ``stablehlo.bitcast_convert`` of the
tensor to signless integers of the same width: the same sizes (a bitcast changes no
shape), of a tensor IREE's conversion keeps, and nothing computes the bitcast's elements
(IREE reads the size of an elementwise op's result from its operand). ``unsigned_dims``
does the same for each ``tensor.dim`` of an unsigned tensor: those of the shape checks
(``shape_checks``, ``host_scalars``) and of the other fixes (the sizes of a cumulative
sum or a pool of a symbolic batch of uint8). Both run after the other fixes, which write
such sizes.
"""

from __future__ import annotations

from typing import Any

from .mlir_walk import operations_named, signless_bits

DIMENSION_SIZE = "stablehlo.get_dimension_size"
TENSOR_DIM = "tensor.dim"


def unsigned_sizes(module: Any) -> int:
    """Rewrite every ``stablehlo.get_dimension_size`` of an unsigned tensor of the
    ``iree.compiler.ir`` ``module`` as the module's doc says; return how many."""
    return _of_bits(module, DIMENSION_SIZE)


def unsigned_dims(module: Any) -> int:
    """The same for every ``tensor.dim`` of an unsigned tensor; return how many."""
    return _of_bits(module, TENSOR_DIM)


def _of_bits(module: Any, name: str) -> int:
    """Each op ``name`` of the module whose first operand is an unsigned tensor reads it
    from its bitcast to signless integers instead; how many."""
    from iree.compiler import ir

    count = 0
    for operation in operations_named(module, name):
        shaped = operation.operands[0]
        kind = shaped.type
        if not isinstance(kind, ir.RankedTensorType):
            continue
        element = kind.element_type
        if not (isinstance(element, ir.IntegerType) and element.is_unsigned):
            continue
        with ir.InsertionPoint(operation), operation.location:
            operation.operands[0] = signless_bits(ir, shaped)
        count += 1
    return count
