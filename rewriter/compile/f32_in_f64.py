"""f32 ``sine``, ``cosine`` and ``tan`` computed in f64, which IREE 3.13 gets right where
its f32 polynomials are far off.

IREE's math transform lowers f32 ``sin``, ``cos`` and ``tan`` to polynomials whose
argument reduction is f32's: ``sin(1e4)`` is 2.6e-4 off, ``sin(1e10)`` -6e21,
``sin(1e20)`` -inf and ``tan`` of large arguments NaN. Both runners go through that
transform, so each f32 op is written here as ``convert`` to f64, the f64 op, ``convert``
back. f64 ``sin``, ``cos`` and ``tan`` are libm's (IREE leaves them to it), within 1 f64
ulp for every finite argument, huge ones included (Payne and Hanek's reduction): 2^-29 of
an f32 ulp, so the result, rounded once more, is within ``0.5 + 2^-29`` f32 ulp of the
exact value. They are scalar calls, element by element, where IREE's polynomial
vectorizes: correct first. IREE's embedded linking has no f64 ``sin``: the IREE path
links such a module as a system library, and leaves these ops to IREE where it cannot
(cross-compiling, or embedded linking chosen: ``rewriter/iree/build.py``).

Any ranked shape (no constants are made).
"""

from __future__ import annotations

from typing import Any

from .mlir_walk import operations_where

# The StableHLO ops computed in f64 when their elements are f32.
WIDENED = ("stablehlo.sine", "stablehlo.cosine", "stablehlo.tan")


def f32_math_in_f64(module: Any) -> int:
    """Rewrite every f32 op of ``WIDENED`` in the ``iree.compiler.ir`` module as the
    module's doc says; return how many."""
    from iree.compiler import ir

    def f32(operation: Any) -> bool:
        if operation.name not in WIDENED:
            return False
        tensor = operation.results[0].type
        return isinstance(tensor, ir.RankedTensorType) and isinstance(
            tensor.element_type, ir.F32Type
        )

    found = operations_where(module, f32)
    for operation in found:
        narrow = operation.results[0].type
        with ir.InsertionPoint(operation), operation.location:
            wide = ir.RankedTensorType.get(narrow.shape, ir.F64Type.get())
            operands = [_convert(ir, wide, operand) for operand in operation.operands]
            result = ir.Operation.create(operation.name, results=[wide], operands=operands)
            narrowed = _convert(ir, narrow, result.result)
        operation.results[0].replace_all_uses_with(narrowed)
        operation.erase()
    return len(found)


def _convert(ir: Any, kind: Any, value: Any) -> Any:
    return ir.Operation.create("stablehlo.convert", results=[kind], operands=[value]).result
