"""f32 ``cbrt``, which IREE 3.13's f32 approximation gets wrong: up to 12 ulp off over the
whole range, on both runners.

It is computed in f64 as ``sign(x) * pow(|x|, 1/3)`` (the ``pow`` of ``power.py``, which
runs after this fix, within 2 f64 ulp of ``|x|^(1/3)``; the rounded ``1/3`` adds up to
``2^-54 |log|x|| / 3 <= 2^-49.3`` relative for f32's range): within ``2^-49`` relative,
``2^-25`` of an f32 ulp, so within ``0.5 + 2^-25`` ulp once rounded to f32. ``sign`` keeps
-0, the infinities and NaN (``pow`` gives 0, inf and NaN). Static and dynamic shapes alike.
"""

from __future__ import annotations

from typing import Any

from .mlir_walk import Splats, operations_where, ranked_result_of

CBRT = "stablehlo.cbrt"


def f32_cbrt(module: Any) -> int:
    """Rewrite every f32 ``cbrt`` of the ``iree.compiler.ir`` module as the module's doc
    says; return how many."""
    from iree.compiler import ir

    def f32_op(operation: Any) -> bool:
        return operation.name == CBRT and ranked_result_of(operation, ir.F32Type)

    found = operations_where(module, f32_op)
    for operation in found:
        narrow = operation.results[0].type
        x = operation.operands[0]
        with ir.InsertionPoint(operation), operation.location:
            wide = ir.RankedTensorType.get(narrow.shape, ir.F64Type.get())

            def op(name: str, *operands: Any, result: Any = wide) -> Any:
                return ir.Operation.create(name, results=[result], operands=list(operands)).result

            number = Splats(ir, x)
            w = op("stablehlo.convert", x)
            root = op("stablehlo.power", op("stablehlo.abs", w), number(1 / 3, wide))
            signed = op("stablehlo.multiply", op("stablehlo.sign", w), root)
            result = op("stablehlo.convert", signed, result=narrow)
        operation.results[0].replace_all_uses_with(result)
        operation.erase()
    return len(found)
