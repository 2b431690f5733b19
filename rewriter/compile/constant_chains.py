"""Two constants in a row of adds or of multiplies combined first, as XLA's simplifier does.

XLA rewrites ``(A + C1) + C2`` as ``A + (C1 + C2)`` and ``(A * C1) * C2`` as
``A * (C1 * C2)``, the constants (or broadcasts of one) combined in the element type; a
subtraction of a constant is an add of its negation there, and a division by one a
multiply by its reciprocal (``broadcast_divisors``, which runs before). ``jax.jit`` of
``x * 3.0 * 7.1`` is ``x * 21.3``, of ``x + 3.3 + 7.1`` is ``x + 10.4`` (and of
``(2.0 - x) + 3.0`` is ``5.0 - x``), of a mean of a
broadcast ``(x * 777) * (1 / 777)`` is ``x``; both paths rounded twice, 1 unit of roundoff
off. A sum of ``0.0`` or a product of ``1.0`` that results is the operand itself (XLA's
``A + 0 => A`` and ``A * 1 => A``).

``constant_chains`` makes the same folds for f32 and f64, of static or dynamic shape (a
constant of a symbolic shape is jax's ``dynamic_broadcast_in_dim`` of one), in op order,
so that a longer chain folds from its start as XLA's fixpoint folds it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .mlir_walk import Splats, op_result, operations_named, splat_value

ADD, SUBTRACT, MULTIPLY = "stablehlo.add", "stablehlo.subtract", "stablehlo.multiply"
_NUMPY = {"f32": np.float32, "f64": np.float64}


def constant_chains(module: Any) -> int:
    """Fold, in place, each ``(A + C1) + C2`` (subtractions of constants too) and
    ``(A * C1) * C2`` of f32 and f64 in the ``iree.compiler.ir`` ``module`` (in its
    context) as the module's doc says; return how many."""
    from iree.compiler import ir

    count = 0
    for operation in operations_named(module, ADD, SUBTRACT, MULTIPLY):
        result = operation.results[0]
        element = _NUMPY.get(str(getattr(result.type, "element_type", "")))
        if element is None:
            continue
        outer = _with_constant(ir, operation, element)
        if outer is None or not isinstance(outer[0], ir.OpResult):
            continue
        inner_op = outer[0].owner
        if _kind(inner_op.name) != _kind(operation.name):
            continue
        inner = _with_constant(ir, inner_op, element, subtracted=True)
        if inner is None:
            continue
        combined = inner[1] * outer[1] if operation.name == MULTIPLY else inner[1] + outer[1]
        with ir.InsertionPoint(operation), operation.location:
            if len(inner) == 3:  # (C1 - A) + C2: (C1 + C2) - A
                constant = Splats(ir, inner[0])(float(combined), ir.RankedTensorType(result.type))
                folded = op_result(ir, SUBTRACT, result.type, constant, inner[0])
            else:
                folded = _applied(ir, operation.name, inner[0], combined, result.type)
        result.replace_all_uses_with(folded)
        operation.erase()
        if not list(inner_op.results[0].uses):
            inner_op.erase()
        count += 1
    return count


def _kind(name: str) -> str:
    return "product" if name == MULTIPLY else "sum"


def _with_constant(
    ir: Any, operation: Any, element: type, subtracted: bool = False
) -> tuple[Any, ...] | None:
    """``(A, C)`` when ``operation`` is ``A * C``, ``C * A``, ``A + C``, ``C + A`` or
    ``A - c`` (``C = -c``) of a splat constant and an operand that is not one; with
    ``subtracted``, ``(A, C, "-")`` for ``C - A``, which XLA folds with a constant added
    to it (``(C1 - A) + C2`` is ``(C1 + C2) - A``); else None."""
    if operation.name not in (ADD, SUBTRACT, MULTIPLY) or len(operation.operands) != 2:
        return None
    left, right = operation.operands[0], operation.operands[1]
    right_value, left_value = _splat(ir, right, element), _splat(ir, left, element)
    if right_value is not None and left_value is None:
        return left, (-right_value if operation.name == SUBTRACT else right_value)
    if left_value is not None and right_value is None:
        if operation.name != SUBTRACT:
            return right, left_value
        if subtracted:
            return right, left_value, "-"
    return None


def _splat(ir: Any, value: Any, element: type) -> Any:
    """The number (of ``element``) that ``value``, a splat constant or a broadcast of one,
    holds in every element; else None."""
    number = splat_value(ir, value, dynamic=True)
    return None if number is None else element(number)


def _applied(ir: Any, name: str, operand: Any, number: Any, kind: Any) -> Any:
    """``operand + number`` or ``operand * number`` (of ``kind``) at the insertion point;
    ``operand`` itself for a sum of zero or a product of one."""
    product = name == MULTIPLY
    if (product and number == 1) or (not product and number == 0):
        if str(operand.type) == str(kind):
            return operand
    constant = Splats(ir, operand)(float(number), ir.RankedTensorType(kind))
    return op_result(ir, MULTIPLY if product else ADD, kind, operand, constant)
