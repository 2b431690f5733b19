"""Windows of unsigned integers (cumulative sums, products, maxima, minima), as windows of
their bits.

IREE 3.13's StableHLO input pipeline fails on the cumulative ops of unsigned integers
(``jnp.cumsum``, ``cumprod``, ``lax.cummax``, ``cummin`` of a ``uint16`` array: a
``reduce_window`` whose window spans the axis, padded before): "failed to legalize
unresolved target materialization from 'ui16' to 'i16'", on both paths.
``unsigned_windows`` writes every ``reduce_window`` of one unsigned operand of static shape
whose body is one ``add``, ``multiply``, ``and``, ``or``, ``xor``, ``maximum`` or
``minimum`` as a private function of signless integers of the same width:

- the operand and the initial value as their bits (``bitcast_convert``), the same window,
  body and attributes on those, and the bits back: sums, products and bit operations
  modulo ``2^N`` are the same on the bits whatever their sign;
- for a ``maximum`` or ``minimum`` each with its top bit flipped first (``xor`` with
  ``1 << (N - 1)``), and the result's flipped back: that maps ``0 .. 2^N - 1`` onto
  ``-2^(N-1) .. 2^(N-1) - 1`` in order, so the signed one picks the element the unsigned
  one picks.

The elements are the unsigned ones' to the bit; padding takes the initial value as before.
"""

from __future__ import annotations

import re
from typing import Any

from .mlir_walk import one_op_body, outline_into_functions

WINDOW = "stablehlo.reduce_window"
_PREFIX = "rw_unsigned_window_"
_UNSIGNED = re.compile(r"ui([0-9]+)$")
_EXTREMA = ("stablehlo.maximum", "stablehlo.minimum")  # the order matters: top bit flipped
_MODULAR = ("stablehlo.add", "stablehlo.multiply", "stablehlo.and", "stablehlo.or", "stablehlo.xor")
_ATTRIBUTES = ("window_dimensions", "window_strides", "base_dilations", "window_dilations")


def unsigned_windows(module: Any) -> int:
    """Rewrite every window of unsigned integers in the ``iree.compiler.ir`` module as the
    module's doc says; return how many."""
    return outline_into_functions(module, WINDOW, _PREFIX, _function_text)


def _function_text(ir: Any, operation: Any, name: str) -> str | None:
    """The text of ``func.func private @name`` computing the window ``operation`` on
    signless integers, or None for another form."""
    if len(operation.operands) != 2 or len(operation.results) != 1:
        return None
    given = operation.operands[0].type
    if not (isinstance(given, ir.RankedTensorType) and given.has_static_shape):
        return None
    unsigned = _UNSIGNED.match(str(given.element_type))
    body = one_op_body(operation, (*_EXTREMA, *_MODULAR))
    if unsigned is None or body is None:
        return None
    width = int(unsigned.group(1))
    result = ir.RankedTensorType(operation.results[0].type)
    signless = f"i{width}"
    top_bit = -(1 << (width - 1))  # 1 << (N - 1) as a signed N-bit number

    def bits(shaped: Any) -> str:
        sizes = "x".join(str(size) for size in shaped.shape)
        return f"tensor<{sizes}x{signless}>" if sizes else f"tensor<{signless}>"

    attributes = [
        f"{key} = {operation.attributes[key]}" for key in _ATTRIBUTES if key in operation.attributes
    ]
    if "padding" in operation.attributes:
        attributes.append(f"padding = {operation.attributes['padding']}")
    scalar = f"tensor<{signless}>"
    initial_type = operation.operands[1].type
    ordered = body in _EXTREMA
    lines = [
        f"func.func private @{name}(%x: {given}, %init: {initial_type}) -> {result} {{",
        f"  %x_bits = stablehlo.bitcast_convert %x : ({given}) -> {bits(given)}",
        f"  %init_bits = stablehlo.bitcast_convert %init : ({initial_type}) -> {scalar}",
    ]
    operand, initial, window = "%x_bits", "%init_bits", "%window"
    if ordered:
        lines += [
            f"  %x_top = stablehlo.constant dense<{top_bit}> : {bits(given)}",
            f"  %x_ordered = stablehlo.xor %x_bits, %x_top : {bits(given)}",
            f"  %init_top = stablehlo.constant dense<{top_bit}> : {scalar}",
            f"  %init_ordered = stablehlo.xor %init_bits, %init_top : {scalar}",
        ]
        operand, initial = "%x_ordered", "%init_ordered"
    lines += [
        f'  %window = "stablehlo.reduce_window"({operand}, {initial}) '
        f"<{{{', '.join(attributes)}}}> ({{",
        f"  ^bb0(%a: {scalar}, %b: {scalar}):",
        f"    %combined = {body} %a, %b : {scalar}",
        f"    stablehlo.return %combined : {scalar}",
        f"  }}) : ({bits(given)}, {scalar}) -> {bits(result)}",
    ]
    if ordered:
        lines += [
            f"  %top = stablehlo.constant dense<{top_bit}> : {bits(result)}",
            f"  %window_bits = stablehlo.xor %window, %top : {bits(result)}",
        ]
        window = "%window_bits"
    lines += [
        f"  %back = stablehlo.bitcast_convert {window} : ({bits(result)}) -> {result}",
        f"  return %back : {result}",
        "}",
    ]
    return "\n".join(lines)
