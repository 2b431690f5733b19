"""Quotients of quotients and of roots written as XLA's simplifier writes them.

XLA rewrites a division of floats (and complex numbers), in this order of precedence:
``A / sqrt(B)`` as ``A * rsqrt(B)`` (when nothing else reads the root),
``A / rsqrt(B)`` as ``A * sqrt(B)``, ``(A / B) /
(C / D)`` as ``(A * D) / (B * C)``, ``(A / B) / C`` as ``A / (B * C)`` and ``A / (B / C)``
as ``(A * C) / B``, and then looks at the division it made again (``jax.jit``'s
optimized HLO shows each; XLA's ``AlgebraicSimplifierVisitor::HandleDivide``). Each
rounds differently from the quotients computed as written: on both paths ``(a / b) / c``
and ``a / (b / c)`` were a unit in the last place off ``jax.jit`` in one value of 3,
``(a / b) / (c / d)`` in one of 2 (f32 and f64, 100,000 values of ``[0.1, 3]``).

``quotient_folds`` makes the same rewrites, in op order (the quotients a division reads
are folded before it, as XLA's post-order visit folds them). It runs after
``multiply_by_reciprocals``: XLA makes a division by a constant or by a broadcast a
product before these rules meet it (a softmax's ``(a / b) / broadcast(s)`` is
``(a / b) * broadcast(1 / s)`` under ``jax.jit``), so a division whose divisor is a
constant or a broadcast, or that reads such a division, is left as it is. Where a fold
would end in a division by a constant (``A / (c / B)``), which XLA would then make a
product of a reciprocal, the division is left as written too.
"""

from __future__ import annotations

from typing import Any

from .mlir_walk import fold_each, op_result

DIVIDE, MULTIPLY = "stablehlo.divide", "stablehlo.multiply"
SQRT, RSQRT = "stablehlo.sqrt", "stablehlo.rsqrt"
# A divisor made by one of these is XLA's to make a product of (multiply_by_reciprocals)
_NOT_FOLDED = {
    "stablehlo.constant",
    "stablehlo.broadcast_in_dim",
    "stablehlo.dynamic_broadcast_in_dim",
}
_ELEMENTS = ("f16", "bf16", "f32", "f64", "complex<f32>", "complex<f64>")


def quotient_folds(module: Any) -> int:
    """Rewrite, in place, the divisions of the module's doc in the ``iree.compiler.ir``
    ``module`` (in its context); return how many."""
    return fold_each(module, (DIVIDE,), _folded)


def _maker(ir: Any, value: Any) -> Any:
    """The op that makes ``value``, None for a block argument."""
    return value.owner if isinstance(value, ir.OpResult) else None


def _named(ir: Any, value: Any, name: str) -> Any:
    maker = _maker(ir, value)
    return maker if maker is not None and maker.name == name else None


def _plain_quotient(ir: Any, value: Any) -> Any:
    """The division that makes ``value`` when the rules may read through it: not one by a
    constant or a broadcast (XLA's product by a reciprocal), else None."""
    divide = _named(ir, value, DIVIDE)
    if divide is None or not _foldable_divisor(ir, divide.operands[1]):
        return None
    return divide


def _foldable_divisor(ir: Any, value: Any) -> bool:
    maker = _maker(ir, value)
    return maker is None or maker.name not in _NOT_FOLDED


def _folded(ir: Any, operation: Any) -> Any:
    kind = operation.results[0].type
    if not isinstance(kind, ir.RankedTensorType) or str(kind.element_type) not in _ELEMENTS:
        return None
    dividend, divisor = operation.operands
    if not _foldable_divisor(ir, divisor):
        return None
    return _quotient(ir, dividend, divisor, kind, first=True)


def _quotient(ir: Any, a: Any, b: Any, kind: Any, first: bool = False) -> Any:
    """``a / b`` with XLA's rules applied until none applies (new ops at the insertion
    point); None, with no op made, when ``first`` and no rule applies, or when the folds
    would end in a division by a constant or a broadcast."""
    root = _maker(ir, b)
    if root is not None and root.name == SQRT and _read_once(b):  # A / sqrt(B) => A * rsqrt(B)
        return op_result(ir, MULTIPLY, kind, a, op_result(ir, RSQRT, kind, root.operands[0]))
    if root is not None and root.name == RSQRT:  # A / rsqrt(B) => A * sqrt(B)
        return op_result(ir, MULTIPLY, kind, a, op_result(ir, SQRT, kind, root.operands[0]))
    top, bottom = _plain_quotient(ir, a), _plain_quotient(ir, b)
    if top is not None and bottom is not None:  # (A / B) / (C / D) => (A * D) / (B * C)
        (p, q), (r, s) = top.operands, bottom.operands
        return _quotient(ir, _times(ir, p, s, kind), _times(ir, q, r, kind), kind)
    if top is not None:  # (A / B) / C => A / (B * C)
        p, q = top.operands
        return _quotient(ir, p, _times(ir, q, b, kind), kind)
    if bottom is not None:  # A / (B / C) => (A * C) / B
        r, s = bottom.operands
        if not _ends_foldable(ir, r):
            return None
        return _quotient(ir, _times(ir, a, s, kind), r, kind)
    return None if first else op_result(ir, DIVIDE, kind, a, b)


def _read_once(value: Any) -> bool:
    """Whether one operand reads ``value``: XLA keeps a division by a square root that is
    read elsewhere too (it would compute the root and its reciprocal)."""
    return len(list(value.uses)) == 1


def _ends_foldable(ir: Any, divisor: Any) -> bool:
    """Whether the folds of a division by ``divisor`` end in a divisor the rules may take:
    ``A / (B / C)`` divides by ``B``, by its dividend again when ``B`` is a quotient."""
    while (quotient := _plain_quotient(ir, divisor)) is not None:
        divisor = quotient.operands[0]
    return _foldable_divisor(ir, divisor)


def _times(ir: Any, x: Any, y: Any, kind: Any) -> Any:
    return op_result(ir, MULTIPLY, kind, x, y)
