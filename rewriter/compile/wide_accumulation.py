"""Products, convolutions and sums of f16 and bf16 accumulated in f32, as XLA's.

XLA's CPU backend computes a ``dot_general`` or ``convolution`` whose operands and result
are f16 or bf16 in f32: the operands widened, the products summed in f32, the result
rounded once; and a ``reduce`` or ``reduce_window`` of such elements in f32 too. IREE 3.13
sums in the element type itself, rounding after every addition: so summed, a bf16 product
of 8x512 and 512x4 matrices is 0.89 off the exact result (the rounding of a partial sum is
half a bf16 ulp of the sum, 2^-9 of it) against 0.12 under ``jax.jit``, a bf16 convolution
over 64 channels 3% of the largest output off, and a bf16 sum of 1,024 elements
(``lax.reduce``) 3.4 off against 0.52.

Both paths write each such op as the op on its operands converted to f32, of an f32
result, converted back: the f32 products and sums of any order, then one rounding, as
XLA's. A ``reduce`` or ``reduce_window`` is taken when it has one operand and its body is
one ``stablehlo.add`` of its two arguments (``mlir_walk.one_op_body``); its initial value
is widened too. (A maximum or minimum is exact in any type; other bodies stay as they
are.) Widening is exact (f32 holds every f16 and bf16), so only the summation order and
the one rounding can differ from XLA's, within what ``tests/test_wide_accumulation.py``
derives. Ops whose result is already wider (``preferred_element_type=jnp.float32``) are
left as they are.
"""

from __future__ import annotations

from typing import Any

from .mlir_walk import one_op_body, op_result, operations_named

NARROW = ("f16", "bf16")
PRODUCTS = ("stablehlo.dot_general", "stablehlo.convolution")
SUMS = ("stablehlo.reduce", "stablehlo.reduce_window")
OPS = PRODUCTS + SUMS


def wide_accumulation(module: Any) -> int:
    """Rewrite, in place, every f16 or bf16 ``dot_general``, ``convolution`` and sum
    (``reduce``, ``reduce_window``) of the ``iree.compiler.ir`` ``module`` (in its context)
    as the module's doc says; return how many."""
    from iree.compiler import ir

    count = 0
    for operation in operations_named(module, *OPS):
        types = [value.type for value in (*operation.operands, *operation.results)]
        if not all(isinstance(kind, ir.RankedTensorType) for kind in types):
            continue
        if any(str(kind.element_type) not in NARROW for kind in types):
            continue
        is_sum = operation.name in SUMS
        if is_sum and (len(types) != 3 or one_op_body(operation, ("stablehlo.add",)) is None):
            continue
        with ir.InsertionPoint(operation), operation.location:
            f32 = ir.F32Type.get()
            widened = [
                op_result(ir, "stablehlo.convert", _as(ir, operand.type, f32), operand)
                for operand in operation.operands
            ]
            narrow = operation.results[0].type
            attributes = {name: operation.attributes[name] for name in operation.attributes}
            wide = ir.Operation.create(
                operation.name,
                results=[_as(ir, narrow, f32)],
                operands=widened,
                attributes=attributes,
                regions=1 if is_sum else 0,
            )
            if is_sum:
                _add_body(ir, wide, f32)
            rounded = op_result(ir, "stablehlo.convert", narrow, wide.result)
        operation.results[0].replace_all_uses_with(rounded)
        operation.erase()
        count += 1
    return count


def _add_body(ir: Any, operation: Any, element: Any) -> None:
    """The body of a sum: the ``stablehlo.add`` of its two ``element`` arguments."""
    scalar = ir.RankedTensorType.get([], element)
    block = operation.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        total = op_result(ir, "stablehlo.add", scalar, *block.arguments)
        ir.Operation.create("stablehlo.return", operands=[total])


def _as(ir: Any, kind: Any, element: Any) -> Any:
    """The tensor type ``kind`` with ``element`` in place of its element type."""
    return ir.RankedTensorType.get(kind.shape, element, kind.encoding)
