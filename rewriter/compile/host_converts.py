"""Integer-to-f64 conversions of scalars through i64, which IREE's VM can run.

jax computes index arithmetic from an array's symbolic size on 0-d tensors: with x64 on,
``jnp.median``, ``quantile`` and ``percentile`` of a symbolic batch convert the size
(``tensor<i32>``, made ``tensor<i64>``) to ``tensor<f64>``. IREE runs such scalar ops on
the host, in its VM, and folds the widening into the conversion; its VM converts i64 and
not i32 to f64 (``vm.cast.si64.f64``, ``vm.cast.ui64.f64``), so the build failed: "failed
to legalize operation 'arith.sitofp' ... (i32) -> f64".

``host_converts`` writes each ``stablehlo.convert`` of a 0-d integer tensor to ``tensor<f64>``
as a convert to 64 bits of the same signedness (``i1`` as 0 or 1), then an
``stablehlo.optimization_barrier``, which keeps IREE from folding the two converts into
one, then the convert to f64. The value is the same: every integer of at most 64 bits is
an i64 or ui64 exactly, and that one converts to f64 as the integer itself does. The
barrier is a compiler hint and nothing else (IREE drops it once its input pipeline is
over, the compiled path with ``iree-util-drop-compiler-hints``).
"""

from __future__ import annotations

from typing import Any

from .mlir_walk import op_result, operations_named

CONVERT = "stablehlo.convert"


def host_converts(module: Any) -> int:
    """Rewrite every 0-d integer-to-f64 ``stablehlo.convert`` of the ``iree.compiler.ir``
    ``module`` as the module's doc says; return how many."""
    from iree.compiler import ir

    count = 0
    for operation in operations_named(module, CONVERT):
        given, result = operation.operands[0].type, operation.results[0].type
        if not (
            isinstance(given, ir.RankedTensorType)
            and given.rank == 0
            and isinstance(given.element_type, ir.IntegerType)
            and isinstance(result.element_type, ir.F64Type)
        ):
            continue
        element = given.element_type
        unsigned = element.is_unsigned and element.width > 1
        with ir.InsertionPoint(operation), operation.location:
            wide = ir.RankedTensorType.get(
                [], ir.IntegerType.get_unsigned(64) if unsigned else ir.IntegerType.get_signless(64)
            )
            value = operation.operands[0]
            if given != wide:
                value = op_result(ir, CONVERT, wide, value)
            kept = op_result(ir, "stablehlo.optimization_barrier", wide, value)
        operation.operands[0] = kept
        count += 1
    return count
