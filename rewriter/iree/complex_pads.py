"""``stablehlo.pad`` of complex elements, as two pads of their real type.

IREE 3.13 cannot compile a pad of complex elements: ``iree-compile`` crashes turning it into
a ``linalg.fill`` (``movePaddingToFillOrGenericOp``, complex64 and complex128), or, for
complex128, fails on the padding value's ``stream.async.splat``, whose operand is at most 64
bits ("'stream.async.splat' op operand #0 must be 8-bit signless integer or ... 64-bit
signless integer, but got 'i128'"). jax writes such pads with ``lax.pad`` and in the
gradient of a stack (the transpose of a concatenation): jax-finufft's type-1 gradient has
two. A pad moves elements and never computes with them, so the IREE path pads the real and
the imaginary parts apart (``stablehlo.real``, ``stablehlo.imag``, two pads,
``stablehlo.complex``), which gives the same elements.
"""

from __future__ import annotations

from typing import Any

from ..compile.mlir_walk import op_result, operations_named


def split_complex_pads(module: Any) -> int:
    """Rewrite, in place, every ``stablehlo.pad`` of complex elements of the
    ``iree.compiler.ir`` ``module`` (in its context); return how many."""
    from iree.compiler import ir

    def complex_elements(operation: Any) -> bool:
        kind = operation.results[0].type
        return isinstance(kind, ir.RankedTensorType) and isinstance(
            kind.element_type, ir.ComplexType
        )

    found = [op for op in operations_named(module, "stablehlo.pad") if complex_elements(op)]
    for operation in found:
        padded = ir.RankedTensorType(operation.results[0].type)
        attributes = {
            name: operation.attributes[name]
            for name in ("edge_padding_low", "edge_padding_high", "interior_padding")
        }
        with ir.InsertionPoint(operation), operation.location:
            operand, value = operation.operands
            parts = []
            for part in ("stablehlo.real", "stablehlo.imag"):
                piece = op_result(
                    ir, part, _real_parts(ir, ir.RankedTensorType(operand.type)), operand
                )
                result_type = _real_parts(ir, padded)
                padding = _part_of_padding(ir, part, value)
                parts.append(
                    op_result(ir, "stablehlo.pad", result_type, piece, padding, **attributes)
                )
            joined = op_result(ir, "stablehlo.complex", padded, *parts)
        operation.results[0].replace_all_uses_with(joined)
        operation.erase()
    return len(found)


def _part_of_padding(ir, part: str, value):
    """The real or imaginary part of the padding ``value``. ``jnp.pad`` pads with a real
    number converted to complex (``stablehlo.convert``): its parts are that number
    converted to the real type and 0, not ``real``/``imag`` of the converted complex scalar
    (IREE would still make that scalar, a 128-bit splat for complex128)."""
    kind = _real_parts(ir, ir.RankedTensorType(value.type))
    owner = value.owner  # an operation, or the block of an argument
    if (
        not isinstance(owner, ir.Block)
        and owner.name == "stablehlo.convert"
        and not isinstance(ir.RankedTensorType(owner.operands[0].type).element_type, ir.ComplexType)
    ):
        if part == "stablehlo.real":
            return op_result(ir, "stablehlo.convert", kind, owner.operands[0])
        zero = ir.DenseElementsAttr.get_splat(kind, ir.FloatAttr.get(kind.element_type, 0.0))
        return op_result(ir, "stablehlo.constant", kind, value=zero)
    return op_result(ir, part, kind, value)


def _real_parts(ir, tensor):
    """The type of the real (or imaginary) parts of the complex ``tensor``."""
    part = ir.ComplexType(tensor.element_type).element_type
    return ir.RankedTensorType.get(tensor.shape, part)
