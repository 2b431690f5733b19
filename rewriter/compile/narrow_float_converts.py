"""Conversions between 8- and 4-bit floats and floats other than f32, through f32.

IREE 3.13 converts the 8- and 4-bit float types (``float8_e4m3fn``, ``float8_e5m2``,
``float4_e2m1fn``, ...) to and from f32 in software, and to or from nothing else: on
IREE ``x.astype(jnp.float16).astype(jnp.float8_e4m3fn)`` failed with "failed to legalize
operation 'arith.truncf' ... f16 to f8E4M3FN", and on the compiled path an ``arith.extf``
from f8 to f64 reached LLVM, which has no such type.

``narrow_float_converts`` writes each ``stablehlo.convert`` between a float of fewer than
16 bits and a float other than f32 as two converts through f32. The value is the same:
f32 holds every value of those types, and of f16 and bf16, exactly, so a conversion to
f32 rounds nothing, and the one rounding left is the one the direct conversion makes;
from f64 the value is first rounded to f32, then to the narrow type, as XLA's CPU
compiler does it (checked against ``jax.jit`` in ``tests/test_narrow_float_converts.py``).
"""

from __future__ import annotations

from typing import Any

from .mlir_walk import op_result, operations_named

CONVERT = "stablehlo.convert"


def narrow_float_converts(module: Any) -> int:
    """Rewrite every ``stablehlo.convert`` of the ``iree.compiler.ir`` ``module`` between a
    float of fewer than 16 bits and a float other than f32 as the module's doc says; return
    how many."""
    from iree.compiler import ir

    count = 0
    for operation in operations_named(module, CONVERT):
        given, result = operation.operands[0].type, operation.results[0].type
        if not (isinstance(given, ir.ShapedType) and isinstance(result, ir.ShapedType)):
            continue
        ends = (given.element_type, result.element_type)
        if not all(isinstance(end, ir.FloatType) for end in ends):
            continue
        if min(end.width for end in ends) >= 16 or any(isinstance(end, ir.F32Type) for end in ends):
            continue
        with ir.InsertionPoint(operation), operation.location:
            f32 = ir.F32Type.get()
            middle = (
                ir.RankedTensorType.get(given.shape, f32)
                if isinstance(given, ir.RankedTensorType)
                else ir.UnrankedTensorType.get(f32)
            )
            through = op_result(ir, CONVERT, middle, operation.operands[0])
        operation.operands[0] = through
        count += 1
    return count
