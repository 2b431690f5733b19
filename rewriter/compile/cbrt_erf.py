"""f32 ``cbrt`` and f32 ``erf`` near zero, which IREE 3.13's f32 approximations get wrong.

- f32 ``cbrt``: IREE's is up to 12 ulp off over the whole range, on both runners. It is
  computed in f64 as ``sign(x) * pow(|x|, 1/3)`` (the ``pow`` of ``power.py``, which runs
  after this fix, within 2 f64 ulp of ``|x|^(1/3)``; the rounded ``1/3`` adds up to
  ``2^-54 |log|x|| / 3 <= 2^-49.3`` relative for f32's range): within ``2^-49`` relative,
  ``2^-25`` of an f32 ulp, so within ``0.5 + 2^-25`` ulp once rounded to f32. ``sign``
  keeps -0, the infinities and NaN (``pow`` gives 0, inf and NaN).
- f32 ``erf`` of ``|x| < 2^-16``: IREE's polynomial underflows in f32 below about
  ``1e-36`` (``erf(6.7e-37)`` millions of ulp off on IREE, 36 ulp near ``2e-38`` on the
  compiled path). There ``erf(x) = 2/sqrt(pi) (x - x^3 / 3 + ...)``, whose second term is
  below ``2^-33`` of the first: ``x * 2/sqrt(pi)`` in f64, rounded once to f32, is within
  ``0.5 + 2^-9`` ulp. Larger ``x`` keep IREE's ``erf`` (within 4.3 ulp).

Static and dynamic shapes alike (the constants are ``mlir_walk.Splats``).
"""

from __future__ import annotations

import math
from typing import Any

from .mlir_walk import Splats, operations_where, ranked_result_of

CBRT = "stablehlo.cbrt"
ERF = "chlo.erf"  # a stablehlo.composite of that name, as jax writes it
# erf(x) = x 2/sqrt(pi) below it, to 2^-33 relative
ERF_SMALL = 2.0**-16


def f32_cbrt_erf(module: Any) -> int:
    """Rewrite every f32 ``cbrt`` and ``erf`` of the ``iree.compiler.ir`` module as
    the module's doc says; return how many."""
    from iree.compiler import ir

    def f32_op(operation: Any) -> bool:
        chosen = operation.name == CBRT or _is_erf(operation)
        return chosen and ranked_result_of(operation, ir.F32Type)

    found = operations_where(module, f32_op)
    for operation in found:
        narrow = operation.results[0].type
        x = operation.operands[0]
        with ir.InsertionPoint(operation), operation.location:
            wide = ir.RankedTensorType.get(narrow.shape, ir.F64Type.get())
            flags = ir.RankedTensorType.get(narrow.shape, ir.IntegerType.get_signless(1))

            def op(name: str, *operands: Any, result: Any = wide, **attributes: Any) -> Any:
                return ir.Operation.create(
                    name, results=[result], operands=list(operands), attributes=attributes
                ).result

            number = Splats(ir, x)

            if operation.name == CBRT:
                w = op("stablehlo.convert", x)
                root = op("stablehlo.power", op("stablehlo.abs", w), number(1 / 3, wide))
                signed = op("stablehlo.multiply", op("stablehlo.sign", w), root)
                result = op("stablehlo.convert", signed, result=narrow)
            else:
                w = op("stablehlo.convert", x)
                scaled = op("stablehlo.multiply", w, number(2 / math.sqrt(math.pi), wide))
                near = op("stablehlo.convert", scaled, result=narrow)
                magnitude = op("stablehlo.abs", x, result=narrow)
                direction = ir.Attribute.parse("#stablehlo<comparison_direction LT>")
                small = op(
                    "stablehlo.compare",
                    magnitude,
                    number(ERF_SMALL, narrow),
                    result=flags,
                    comparison_direction=direction,
                )
                far = operation.clone().results[0]
                result = op("stablehlo.select", small, near, far, result=narrow)
        operation.results[0].replace_all_uses_with(result)
        operation.erase()
    return len(found)


def _is_erf(operation: Any) -> bool:
    return (
        operation.name == "stablehlo.composite"
        and "name" in operation.attributes
        and str(operation.attributes["name"]).strip('"') == ERF
        and len(operation.operands) == 1
    )
