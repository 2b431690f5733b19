"""Float-to-integer ``stablehlo.convert`` that saturates, as XLA's does.

XLA converts a float to an integer as LLVM's ``fptosi.sat`` / ``fptoui.sat`` do: the value
truncated toward zero, clamped to the integer type's range, and NaN to 0. So under
``jax.jit`` ``jnp.array([nan, inf, -inf, 3e9]).astype(jnp.int32)`` is ``[0, 2147483647,
-2147483648, 2147483647]`` and ``jnp.float32(-2.5).astype(jnp.uint8)`` is 0. IREE 3.13
lowers the convert to ``arith.fptosi`` (``fptoui``), whose result is poison out of range:
on x86 that lowering gives ``-2147483648`` four times for the first and 254 for the second.

Both paths write each such convert of a float (f16, bf16, f32, f64) to an integer of 8,
16, 32 or 64 bits (signless and signed ones as signed) as:

1. ``x0``: ``x`` with NaN made 0;
2. ``y``: the convert of ``x0`` clamped to ``[low, below]``, where ``low`` is the type's
   least value (``-2^(N-1)``, or 0 unsigned) and ``below`` the greatest float under
   ``top`` = ``2^(N-1)`` (``2^N`` unsigned); in the float type, so that every clamped value
   is in range: its truncation lies in ``[low, top)``;
3. the integer type's greatest value where ``x0 >= top``, its least where ``x0 <= -top``
   (signed types), else ``y``.

Why that is the saturating conversion: ``low`` and ``top`` are powers of two (or 0), which
every float type holds exactly unless they pass its range; there ``top`` is infinity and
``low`` the type's least finite float (``below`` its greatest). A value in
``[low, top)`` converts to its truncation, which is in range. A value at or above ``top``
saturates to the greatest integer, and in a signed type one at or below ``-top`` (the
least integer, or less) to the least (step 3). What is left under ``low`` is an unsigned
type's negatives, which the clamp makes 0, the least. NaN gives 0 (step 1: 0 is in
range).
"""

from __future__ import annotations

from typing import Any

from .mlir_walk import Splats, op_result, operations_named

WIDTHS = (8, 16, 32, 64)
_MANTISSA_BITS = {"f16": 11, "bf16": 8, "f32": 24, "f64": 53}  # the implicit bit included
_LARGEST = {"f16": 65504.0, "bf16": 3.3895313892515355e38, "f32": 3.4028234663852886e38}


def saturating_converts(module: Any) -> int:
    """Rewrite, in place, every float-to-integer ``stablehlo.convert`` of the
    ``iree.compiler.ir`` ``module`` (in its context) as the module's doc says; return how
    many."""
    from iree.compiler import ir

    count = 0
    for operation in operations_named(module, "stablehlo.convert"):
        given, result = operation.operands[0].type, operation.results[0].type
        if not (isinstance(given, ir.RankedTensorType) and isinstance(result, ir.RankedTensorType)):
            continue
        integer = result.element_type
        if str(given.element_type) not in _MANTISSA_BITS or not isinstance(integer, ir.IntegerType):
            continue
        if integer.width not in WIDTHS:
            continue
        with ir.InsertionPoint(operation), operation.location:
            saturated = _saturated(ir, operation.operands[0], result)
        operation.results[0].replace_all_uses_with(saturated)
        operation.erase()
        count += 1
    return count


def _saturated(ir: Any, x: Any, result: Any) -> Any:
    """The convert of the float tensor ``x`` to the integer tensor type ``result``, written
    as the module's doc says, at the insertion point."""
    given, integer = x.type, result.element_type
    low, below, top = bounds(str(given.element_type), integer.width, integer.is_unsigned)
    splats = Splats(ir, x)
    flags = ir.RankedTensorType.get(given.shape, ir.IntegerType.get_signless(1))
    scalar = ir.RankedTensorType.get([], given.element_type)

    def scalar_constant(value: float) -> Any:
        attribute = ir.FloatAttr.get(given.element_type, value)
        splat = ir.DenseElementsAttr.get_splat(scalar, attribute)
        return op_result(ir, "stablehlo.constant", scalar, value=splat)

    def compare(direction: str, left: Any, right: Any) -> Any:
        attribute = ir.Attribute.parse(f"#stablehlo<comparison_direction {direction}>")
        return op_result(
            ir, "stablehlo.compare", flags, left, right, comparison_direction=attribute
        )

    is_nan = compare("NE", x, x)
    x0 = op_result(ir, "stablehlo.select", given, is_nan, splats(0.0, given), x)
    clamped = op_result(
        ir, "stablehlo.clamp", given, scalar_constant(low), x0, scalar_constant(below)
    )
    converted = op_result(ir, "stablehlo.convert", result, clamped)
    too_large = compare("GE", x0, splats(top, given))
    greatest = splats.integer(greatest_integer(integer.width, integer.is_unsigned), result)
    saturated = op_result(ir, "stablehlo.select", result, too_large, greatest, converted)
    if integer.is_unsigned:
        return saturated
    too_small = compare("LE", x0, splats(-top, given))
    least = splats.integer(-(2 ** (integer.width - 1)), result)
    return op_result(ir, "stablehlo.select", result, too_small, least, saturated)


def bounds(float_name: str, width: int, unsigned: bool) -> tuple[float, float, float]:
    """``low``, ``below`` and ``top`` of the module's doc, for a float of ``float_name``
    converted to an integer of ``width`` bits."""
    largest = _LARGEST.get(float_name, float("inf"))  # f64's: no 64-bit bound passes it
    top_exponent = width if unsigned else width - 1
    top = float(2**top_exponent)
    low = 0.0 if unsigned else -top
    if top > largest:
        return max(low, -largest), largest, float("inf")
    below = top - 2.0 ** (top_exponent - _MANTISSA_BITS[float_name])
    return low, below, top


def greatest_integer(width: int, unsigned: bool) -> int:
    """The greatest integer of ``width`` bits as ``IntegerAttr.get`` takes it: a signed
    64-bit value, so the unsigned 64-bit one as its two's complement, -1."""
    if unsigned:
        return -1 if width == 64 else 2**width - 1
    return 2 ** (width - 1) - 1
