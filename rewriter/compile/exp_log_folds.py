"""Products, quotients and logarithms of ``exp`` and ``pow`` written as XLA's simplifier
writes them.

XLA rewrites, for floats: ``exp(A) * exp(B)`` as ``exp(A + B)``, ``exp(A) / exp(B)`` as
``exp(A - B)``, ``A / exp(B)`` as ``A * exp(-B)``, ``log(exp(A))`` as ``A``,
``pow(exp(A), B)`` as ``exp(A * B)``, ``A / pow(B, C)`` as ``A * pow(B, -C)``,
``log(pow(A, B))`` as ``B == 0 ? 0 : log(|A|) * B`` (so ``log((-3) ** 3)`` is
``3 log 3`` under ``jax.jit``, where the power's logarithm is NaN), ``pow(A, 3)`` as
``A * (A * A)`` (two roundings, where ``accurate_power``'s is one), and ``log(sqrt(A))``
and ``log(rsqrt(A))`` as ``log(A) * 0.5`` and ``log(A) * -0.5`` (whatever else reads the
root). Each exp, log or pow then computed rounds differently: both paths were a unit or
two of roundoff off ``jax.jit`` (``jnp.log(jnp.exp(x))`` is ``x`` there), NaN where the
log of a power is not, and the log of a root near 1 up to thousands of units off (the
root's rounding is large beside a log near 0: ``log(sqrt(-2 log p))``, a step of
``jax.scipy.special.ndtri``, up to 16,148 units off in 3 values of 10).

``exp_log_folds`` makes the same rewrites, in op order (a rewrite's result meets the
next, as XLA's fixpoint meets it), for f16, bf16, f32 and f64 of static or dynamic shape;
the ops they replace are left to dead-code elimination when nothing else reads them. It
runs before ``accurate_power`` (which writes the powers it makes).
"""

from __future__ import annotations

from typing import Any

from .mlir_walk import Splats, fold_each, op_result, ranked_of, splat_value

EXP, LOG, POWER = "stablehlo.exponential", "stablehlo.log", "stablehlo.power"
# log(root(A)) => log(A) * this
_ROOT_POWERS = {"stablehlo.sqrt": 0.5, "stablehlo.rsqrt": -0.5}
ROOTS = tuple(_ROOT_POWERS)
MULTIPLY, DIVIDE = "stablehlo.multiply", "stablehlo.divide"


def exp_log_folds(module: Any) -> int:
    """Rewrite, in place, the products, quotients and logarithms of the module's doc in the
    ``iree.compiler.ir`` ``module`` (in its context); return how many."""
    return fold_each(module, (MULTIPLY, DIVIDE, LOG, POWER), _of_floats)


def _of_floats(ir: Any, operation: Any) -> Any:
    kind = operation.results[0].type
    if not ranked_of(ir, kind):
        return None
    return _folded(ir, operation, kind)


def _producer(ir: Any, value: Any, name: str) -> Any:
    """The op ``name`` that makes ``value``, or None."""
    if isinstance(value, ir.OpResult) and value.owner.name == name:
        return value.owner
    return None


def _folded(ir: Any, operation: Any, kind: Any) -> Any:
    """The value that replaces ``operation`` (made at the insertion point), or None."""
    operands = list(operation.operands)
    name = operation.name
    if name == MULTIPLY:  # exp(A) * exp(B) => exp(A + B)
        left, right = (_producer(ir, value, EXP) for value in operands)
        if left is None or right is None:
            return None
        total = op_result(ir, "stablehlo.add", kind, left.operands[0], right.operands[0])
        return op_result(ir, EXP, kind, total)
    if name == DIVIDE:
        numerator, denominator = operands
        top, bottom = _producer(ir, numerator, EXP), _producer(ir, denominator, EXP)
        if top is not None and bottom is not None:  # exp(A) / exp(B) => exp(A - B)
            difference = op_result(
                ir, "stablehlo.subtract", kind, top.operands[0], bottom.operands[0]
            )
            return op_result(ir, EXP, kind, difference)
        if bottom is not None:  # A / exp(B) => A * exp(-B)
            negated = op_result(ir, "stablehlo.negate", kind, bottom.operands[0])
            return op_result(ir, MULTIPLY, kind, numerator, op_result(ir, EXP, kind, negated))
        power = _producer(ir, denominator, POWER)
        if power is not None:  # A / pow(B, C) => A * pow(B, -C)
            base, exponent = power.operands
            negated = op_result(ir, "stablehlo.negate", exponent.type, exponent)
            inverse = op_result(ir, POWER, kind, base, negated)
            return op_result(ir, MULTIPLY, kind, numerator, inverse)
        return None
    if name == LOG:
        exp = _producer(ir, operands[0], EXP)
        if exp is not None:  # log(exp(A)) => A
            return exp.operands[0]
        root = operands[0].owner if isinstance(operands[0], ir.OpResult) else None
        if root is not None and root.name in _ROOT_POWERS:  # log(sqrt(A)) => log(A) * 0.5
            logarithm = op_result(ir, LOG, kind, root.operands[0])
            power = Splats(ir, logarithm)(_ROOT_POWERS[root.name], kind)
            return op_result(ir, MULTIPLY, kind, logarithm, power)
        power = _producer(ir, operands[0], POWER)
        if power is None:
            return None
        base, exponent = power.operands  # log(pow(A, B)) => B == 0 ? 0 : log(|A|) * B
        logarithm = op_result(ir, LOG, kind, op_result(ir, "stablehlo.abs", kind, base))
        product = op_result(ir, MULTIPLY, kind, logarithm, exponent)
        zero = Splats(ir, exponent)(0.0, kind)
        is_zero = op_result(
            ir,
            "stablehlo.compare",
            ir.RankedTensorType.get(kind.shape, ir.IntegerType.get_signless(1)),
            exponent,
            zero,
            comparison_direction=ir.Attribute.parse("#stablehlo<comparison_direction EQ>"),
        )
        return op_result(ir, "stablehlo.select", kind, is_zero, zero, product)
    exp = _producer(ir, operands[0], EXP)  # pow(exp(A), B) => exp(A * B)
    if exp is not None:
        return op_result(ir, EXP, kind, op_result(ir, MULTIPLY, kind, exp.operands[0], operands[1]))
    if splat_value(ir, operands[1], dynamic=True) == 3.0:  # pow(A, 3) => A * (A * A)
        base = operands[0]
        return op_result(ir, MULTIPLY, kind, base, op_result(ir, MULTIPLY, kind, base, base))
    return None
