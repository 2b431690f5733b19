"""Math that IREE 3.13 computes off XLA, or cannot compile, rewritten in the StableHLO it gets.

- f32 ``atan2``: IREE's math transform replaces it by a polynomial up to 16 units in the
  last place (1.7e-6 relative) off XLA's, and no ``iree-compile`` flag turns that off. It is
  computed in f64 instead (``convert``, ``atan2``, ``convert`` back: libm's ``atan2``,
  rounded once), as the standalone path does (``rewriter/compile/library_calls.py``).
- f64 ``cbrt``: IREE has no lowering for it ("failed to legalize operation 'math.cbrt'").
  It becomes ``sign(x) * r``, ``r = pow(|x|, 1/3)`` (the input fixes' ``pow``,
  ``rewriter/compile/power.py``) refined by one Newton step ``r - (r - |x| / r^2) / 3``:
  the rounded ``1/3`` leaves ``r`` up to 120 ulp off (``2^-54`` relative times
  ``|log|x|| / 3 <= 236``), the step squares that error away and adds its own roundings:
  ``r - |x| / r^2`` is exact (Sterbenz) and ``|x| / r^2`` within 1 ulp of ``r`` (two
  roundings), a third of which reaches the result, rounded once more: within
  ``1/3 + 1/2`` ulp (and the rounding of the tiny step).
  ``sign`` keeps -0, NaN and the infinities, and 0, inf and NaN skip the step. Static and
  dynamic shapes alike (the constants are ``mlir_walk.Splats``).

f64 ``atan2`` is not in IREE's embedded libm, so a module whose f32 ``atan2`` was widened is
linked as a system library (``build.py``); when that cannot be (cross-compiling, or an
embedded linking the caller chose) f32 ``atan2`` is left to IREE. ``pow`` calls no libm
function: ``cbrt`` needs no system linking.
"""

from __future__ import annotations

import math
from typing import Any

from ..compile.mlir_walk import Splats, op_result, operations_where


def make_math_exact(module: Any, atan2_in_f64: bool = True) -> bool:
    """Rewrite, in place, the ops of the ``iree.compiler.ir`` module that IREE would get
    wrong or reject (f32 ``atan2`` only with ``atan2_in_f64``); return whether the module
    now needs libm's f64 ``atan2`` (a system library)."""
    from iree.compiler import ir

    found = operations_where(
        module,
        lambda op: _needs_rewrite(ir, op) and (atan2_in_f64 or op.name != "stablehlo.atan2"),
    )
    widened = any(operation.name == "stablehlo.atan2" for operation in found)
    for operation in found:
        with ir.InsertionPoint(operation), operation.location:
            if operation.name == "stablehlo.atan2":
                result = _atan2_in_f64(ir, operation)
            else:
                result = _cbrt_by_pow(ir, operation)
        operation.results[0].replace_all_uses_with(result)
        operation.erase()
    return widened


def _needs_rewrite(ir, operation) -> bool:
    if operation.name not in ("stablehlo.atan2", "stablehlo.cbrt"):
        return False
    tensor = operation.results[0].type
    if not isinstance(tensor, ir.RankedTensorType):
        return False
    if operation.name == "stablehlo.atan2":
        return isinstance(tensor.element_type, ir.F32Type)
    return isinstance(tensor.element_type, ir.F64Type)


def _atan2_in_f64(ir, operation):
    narrow = operation.results[0].type
    wide = ir.RankedTensorType.get(narrow.shape, ir.F64Type.get())
    y, x = (op_result(ir, "stablehlo.convert", wide, value) for value in operation.operands)
    angle = op_result(ir, "stablehlo.atan2", wide, y, x)
    return op_result(ir, "stablehlo.convert", narrow, angle)


def _cbrt_by_pow(ir, operation):
    (x,) = operation.operands
    kind = x.type

    splats = Splats(ir, x)

    def constant(value: float):
        return splats(value, kind)

    def op(name: str, *operands):
        return op_result(ir, name, kind, *operands)

    magnitude = op("stablehlo.abs", x)
    root = op("stablehlo.power", magnitude, constant(1 / 3))
    # Newton's step r - (r - |x| / r^2) / 3 (r - |x| / r^2 is exact, Sterbenz)
    square = op("stablehlo.multiply", root, root)
    step = op("stablehlo.subtract", root, op("stablehlo.divide", magnitude, square))
    refined = op("stablehlo.subtract", root, op("stablehlo.divide", step, constant(3.0)))
    # 0, inf and NaN as pow gives them (0 / 0 and inf / inf are NaN)
    i1 = ir.RankedTensorType.get(kind.shape, ir.IntegerType.get_signless(1))
    direction = ir.Attribute.parse("#stablehlo<comparison_direction LT>")
    bounded = op_result(
        ir, "stablehlo.compare", i1, root, constant(math.inf), comparison_direction=direction
    )
    direction = ir.Attribute.parse("#stablehlo<comparison_direction GT>")
    positive = op_result(
        ir, "stablehlo.compare", i1, root, constant(0.0), comparison_direction=direction
    )
    finite = op_result(ir, "stablehlo.and", i1, bounded, positive)
    root = op_result(ir, "stablehlo.select", kind, finite, refined, root)
    return op("stablehlo.multiply", op("stablehlo.sign", x), root)
