"""Cumulative sums, products, maxima and minima along a symbolic dimension
(``jnp.cumsum(x)`` of a ``(b,)`` array) as a scan, with the general window beside it.

jax writes a cumulative op along an axis of symbolic length ``n`` as a custom call
``@stablehlo.dynamic_reduce_window`` whose window dimensions and padding are operands: the
window ``n`` long along the axis, padded before it by ``n - 1``, and 1 and unpadded along
the others. IREE 3.13 lowers no such call ("failed to legalize operation
'stablehlo.custom_call'"), on both paths.

Both paths write such a call, in a function of its own, as StableHLO defines the window,
reading its window length ``w`` along the axis and its padding at run time:

- when the window is cumulative (``w = low + 1``, ``low + 1 >= n``, no padding after the
  axis and none along the others), the inclusive scan ``dynamic_scans`` makes of a static
  one (``dynamic_scans.scan_text``): output ``i`` combines elements 0 to ``i``;
- else the window as it is defined: output ``i`` along the axis combines, from the initial
  value, the ``w`` elements from ``i - low`` on that are inside the operand (padding is the
  initial value), a loop per output; elsewhere output ``i`` is element ``i - low``.

The ``n`` of jax's cumulative ops takes the scan; the loop keeps any other run-time window
right. Taken: a call of one result of the operand's type, whose body (the function it
names) and initial value ``dynamic_scans`` takes (``combine_of``: one ``add``,
``multiply``, ``maximum`` or ``minimum``, or the ops of ``lax.cumlogsumexp``), with
strides and dilations the constant 1, and window dimensions the constant 1 along all but one
dimension: the axis.
"""

from __future__ import annotations

from typing import Any

from .dynamic_scans import combine_of, scan_text
from .mlir_walk import (
    constant_elements,
    functions_by_name,
    outline_into_functions,
    size_value,
)
from .scalar_bodies import Combine

CUSTOM_CALL = "stablehlo.custom_call"
DYNAMIC_REDUCE_WINDOW = "stablehlo.dynamic_reduce_window"
_PREFIX = "rw_dynamic_window_scan_"


def dynamic_window_scans(module: Any) -> int:
    """Rewrite, in place, the cumulative ``dynamic_reduce_window`` calls of the
    ``iree.compiler.ir`` ``module`` (in its context) that the module's doc names; return
    how many."""
    bodies = functions_by_name(module)
    return outline_into_functions(
        module,
        CUSTOM_CALL,
        _PREFIX,
        lambda ir, call, symbol: _window_function(ir, call, symbol, bodies),
        operands=lambda call: [call.operands[n] for n in (0, 1, 2, 6)],
    )


def _window_function(ir: Any, call: Any, symbol: str, bodies: dict[str, Any]) -> str | None:
    """The text of ``func.func private @symbol(%given, %initial, %window, %padding)``
    computing the call as the module's doc says, and of its scan; None for another call."""
    attributes = call.attributes
    if str(attributes["call_target_name"]).strip('"') != DYNAMIC_REDUCE_WINDOW:
        return None
    if len(call.operands) != 7 or len(call.results) != 1 or "called_computations" not in attributes:
        return None
    given = ir.RankedTensorType(call.operands[0].type)
    if call.results[0].type != given:
        return None
    computations = ir.ArrayAttr(attributes["called_computations"])
    body_function = bodies.get(ir.FlatSymbolRefAttr(computations[0]).value)
    if len(computations) != 1 or body_function is None:
        return None
    combine = combine_of(ir, body_function, call.operands[1], given.element_type)
    axis = _axis(ir, call, given.rank)
    if combine is None or axis is None:
        return None
    lines = _general_window(ir, symbol, call, given, axis, combine)
    return "\n".join(lines) + "\n" + scan_text(f"{symbol}_scan", given, axis, combine)


def _axis(ir: Any, call: Any, rank: int) -> int | None:
    """The one dimension whose window is not the constant 1, when strides and dilations
    (operands 3 to 5) are the constant 1; else None."""
    for operand in list(call.operands)[3:6]:
        if constant_elements(ir, operand, rank) != [1] * rank:
            return None
    window = constant_elements(ir, call.operands[2], rank) or [None] * rank
    long = [d for d in range(rank) if window[d] != 1]
    return long[0] if len(long) == 1 else None


def _general_window(
    ir: Any, symbol: str, call: Any, given: Any, axis: int, combine: Combine
) -> list[str]:
    """The lines of the function that reads the window at run time and takes the scan,
    the scan of the reversed operand, or the loop (the module's doc)."""
    rank = given.rank
    window = ir.RankedTensorType(call.operands[2].type)
    padding = ir.RankedTensorType(call.operands[6].type)
    initial = f"tensor<{given.element_type}>"
    lines = [
        f"func.func private @{symbol}(%given: {given}, %initial: {initial}, "
        f"%window: {window}, %padding: {padding}) -> {given} {{",
        "  %c0 = arith.constant 0 : index",
        "  %c1 = arith.constant 1 : index",
        f"  %axis = arith.constant {axis} : index",
        f"  %width_raw = tensor.extract %window[%axis] : {window}",
        f"  %width = arith.index_cast %width_raw : {window.element_type} to index",
    ]
    unpadded = []
    for d in range(rank):
        size_value(lines, f"size{d}", "given", given, d)
        lines.append(f"  %at{d} = arith.constant {d} : index")
        for side, column in (("low", "%c0"), ("high", "%c1")):
            lines += [
                f"  %{side}{d}_raw = tensor.extract %padding[%at{d}, {column}] : {padding}",
                f"  %{side}{d} = arith.index_cast %{side}{d}_raw : {padding.element_type} to index",
                f"  %{side}{d}_none = arith.cmpi eq, %{side}{d}, %c0 : index",
            ]
            if d != axis:
                unpadded.append(f"%{side}{d}_none")
    # Cumulative from the first element (padded before), or from the last (padded after).
    for name, before, after in (("forward", "low", "high"), ("backward", "high", "low")):
        lines += [
            f"  %{name}_reach = arith.addi %{before}{axis}, %c1 : index",
            f"  %{name}_whole = arith.cmpi eq, %width, %{name}_reach : index",
            f"  %{name}_covers = arith.cmpi sge, %{name}_reach, %size{axis} : index",
        ]
        tests = [*unpadded, f"%{after}{axis}_none", f"%{name}_whole", f"%{name}_covers"]
        lines += _all(name, tests)
    scan = f"@{symbol}_scan"
    lines += [
        f"  %result = scf.if %forward -> ({given}) {{",
        f"    %scanned = func.call {scan}(%given, %initial) : ({given}, {initial}) -> {given}",
        f"    scf.yield %scanned : {given}",
        "  } else {",
        f"    %other = scf.if %backward -> ({given}) {{",
        *_reversed("%reversed", "%given", given, axis),
        f"      %scanned = func.call {scan}(%reversed, %initial) : ({given}, {initial}) -> {given}",
        *_reversed("%back", "%scanned", given, axis),
        f"      scf.yield %back : {given}",
        "    } else {",
        *_windows_by_loops(given, axis, combine),
        f"      scf.yield %windowed : {given}",
        "    }",
        f"    scf.yield %other : {given}",
        "  }",
        f"  return %result : {given}",
        "}",
    ]
    return lines


def _all(name: str, tests: list[str]) -> list[str]:
    """The lines of ``%name``, the ``i1`` conjunction of ``tests``."""
    lines, earlier = [], tests[0]
    for n, test in enumerate(tests[1:], 1):
        now = f"%{name}" if n == len(tests) - 1 else f"%{name}{n}"
        lines.append(f"  {now} = arith.andi {earlier}, {test} : i1")
        earlier = now
    return lines


def _reversed(result: str, source: str, given: Any, axis: int) -> list[str]:
    """The lines of ``result``, ``source`` (of the function's operand's type) reversed
    along ``axis``: a ``linalg.generic`` that reads element ``size - 1 - i``."""
    rank, element = given.rank, given.element_type
    name = result.lstrip("%")
    dynamic = [f"%size{d}" for d in range(rank) if given.is_dynamic_dim(d)]
    loops = ", ".join(f"d{d}" for d in range(rank))
    parallel = ", ".join(['"parallel"'] * rank)
    position = [f"%{name}_j" if d == axis else f"%{name}_i{d}" for d in range(rank)]
    return [
        f"      %{name}_empty = tensor.empty({', '.join(dynamic)}) : {given}",
        f"      {result} = linalg.generic {{indexing_maps = [affine_map<({loops}) -> ({loops})>],"
        f" iterator_types = [{parallel}]}} outs(%{name}_empty : {given}) {{",
        f"      ^bb0(%{name}_unused: {element}):",
        *[f"        %{name}_i{d} = linalg.index {d} : index" for d in range(rank)],
        f"        %{name}_last = arith.subi %size{axis}, %c1 : index",
        f"        %{name}_j = arith.subi %{name}_last, %{name}_i{axis} : index",
        f"        %{name}_element = tensor.extract {source}[{', '.join(position)}] : {given}",
        f"        linalg.yield %{name}_element : {element}",
        f"      }} -> {given}",
    ]


def _windows_by_loops(given: Any, axis: int, combine: Combine) -> list[str]:
    """The lines of ``%windowed``, the window as StableHLO defines it, a loop of ``%width``
    reads per output (the module's doc)."""
    rank, element = given.rank, given.element_type
    lines, dynamic = [], []
    for d in range(rank):
        if given.is_dynamic_dim(d):
            lines.append(f"      %padded{d} = arith.addi %size{d}, %low{d} : index")
            count = f"%wide{d}"
            lines.append(f"      {count} = arith.addi %padded{d}, %high{d} : index")
            if d == axis:
                lines.append(f"      %shortened{d} = arith.subi %wide{d}, %width : index")
                count = f"%count{d}"
                lines.append(f"      {count} = arith.addi %shortened{d}, %c1 : index")
            lines.append(f"      %out{d} = arith.maxsi {count}, %c0 : index")
            dynamic.append(f"%out{d}")
    loops = ", ".join(f"d{d}" for d in range(rank))
    parallel = ", ".join(['"parallel"'] * rank)
    lines += [
        f"      %empty = tensor.empty({', '.join(dynamic)}) : {given}",
        f"      %windowed = linalg.generic {{indexing_maps = [affine_map<({loops}) -> ({loops})>],"
        f" iterator_types = [{parallel}]}} outs(%empty : {given}) {{",
        f"      ^bb0(%unused: {element}):",
        f"        %start = tensor.extract %initial[] : tensor<{element}>",
        "        %true = arith.constant true",
    ]
    for d in range(rank):
        lines += [
            f"        %i{d} = linalg.index {d} : index",
            f"        %from{d} = arith.subi %i{d}, %low{d} : index",
        ]
    lines += [
        f"        %reduced = scf.for %k = %c0 to %width step %c1 iter_args(%carried = %start)"
        f" -> ({element}) {{",
        f"          %j{axis} = arith.addi %from{axis}, %k : index",
    ]
    position = [f"%j{axis}" if d == axis else f"%from{d}" for d in range(rank)]
    inside = "%true"
    for d in range(rank):
        lines += [
            f"          %above{d} = arith.cmpi sge, {position[d]}, %c0 : index",
            f"          %below{d} = arith.cmpi slt, {position[d]}, %size{d} : index",
            f"          %in{d} = arith.andi %above{d}, %below{d} : i1",
            f"          %inside{d} = arith.andi {inside}, %in{d} : i1",
        ]
        inside = f"%inside{d}"
    return [
        *lines,
        f"          %read = scf.if {inside} -> ({element}) {{",
        f"            %element = tensor.extract %given[{', '.join(position)}] : {given}",
        f"            scf.yield %element : {element}",
        "          } else {",
        f"            scf.yield %start : {element}",
        "          }",
        *combine.lines("%carried", "%read", "%combined", indent="          "),
        f"          scf.yield %combined : {element}",
        "        }",
        f"        linalg.yield %reduced : {element}",
        f"      }} -> {given}",
    ]
