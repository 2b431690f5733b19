"""``jnp.cumsum`` and ``jnp.cumprod`` of floats on the IREE path in blocks of 16.

jax writes a cumulative sum (product) along an axis as a ``stablehlo.reduce_window`` whose
window is the whole axis, padded before by its length less one. IREE 3.13 makes that a
scan of one element after another, one line at a time: 3.6 ns an element
(``benchmarks/op_complexity.py``: 14.7 ms for a cumulative sum of 4M f32, where the
compiled path takes 3.5). ``blocked_scans`` writes each such reduce_window along the last
axis, of at least ``SMALLEST`` elements, as

1. the axis cut into blocks of ``BLOCK`` elements (padded after with the identity, 0 or 1);
2. each block's own cumulative sum (product): the same reduce_window over the block, which
   IREE scans many blocks at a time;
3. the block totals (each block's last entry), their cumulative sum (product) shifted by one
   block, the identity first (the same reduce_window, on a sixteenth of the elements, which
   this rewrite takes again while it is long enough): what comes before each block;
4. that added to (multiplied into) each block's entries, and the padding cut off.

A cumulative sum of 64,000 to 512,000 f32 takes 0.36 to 0.44 of the time it took, 4M
0.57 (more passes over memory). Each output is still the sum (product) of the elements up
to it, in another order: the block's own ones in order, then what came before (the sum of
the earlier blocks' totals, itself such a sum); infinities and NaNs meet as they did.
Rounding may differ from XLA's, whose order is not one element after another either (XLA
cuts such windows into a tree of partial ones); any order is within the bound that
``tests/test_op_coverage.py`` derives (Higham 3.1 and Lemma 3.1), which the tests check.
Only a body of one ``stablehlo.add`` or ``stablehlo.multiply`` of the two arguments, an
identity init value (a constant 0 or 1), static f32 or f64 operands, and no strides or
dilations are taken.
"""

from __future__ import annotations

from math import prod
from typing import Any

from ..compile.mlir_walk import outline_into_functions, splat_value, window_of

BLOCK = 16
SMALLEST = 1024  # elements along the axis: below, IREE's scan costs about what the blocks do
_PREFIX = "rw_blocked_scan_"
BODIES = {"stablehlo.add": "0.0", "stablehlo.multiply": "1.0"}  # and their identities
ELEMENTS = ("f32", "f64")
ONES = ("window_strides", "base_dilations", "window_dilations")  # 1 in every dimension


def blocked_scans(module: Any) -> int:
    """Rewrite, in the ``iree.compiler.ir`` module, every reduce_window the module's doc
    names into a call of a private function; return how many."""
    return outline_into_functions(
        module, "stablehlo.reduce_window", _PREFIX, _function_text, operands=_first
    )


def _first(operation: Any) -> list[Any]:
    return [operation.operands[0]]  # the operand; the init value is the identity


def _function_text(ir: Any, operation: Any, name: str) -> str | None:
    """The text of ``func.func private @name`` that computes ``operation`` as the module's
    doc says, or None when it is not such a reduce_window."""
    found = window_of(ir, operation, BODIES)
    if found is None:
        return None
    body, given, _, integers = found
    element = str(given.element_type)
    if element not in ELEMENTS or given.rank == 0:
        return None
    shape = list(given.shape)
    rank, length = len(shape), shape[-1]
    if length < SMALLEST:
        return None
    if integers("window_dimensions") != [1] * (rank - 1) + [length]:
        return None
    if any(integers(ones) != [1] * rank for ones in ONES):
        return None
    attributes = operation.attributes
    if "padding" not in attributes:
        return None
    padding = [int(v) for v in ir.DenseIntElementsAttr(attributes["padding"])]
    if padding != [0, 0] * (rank - 1) + [length - 1, 0]:
        return None
    if splat_value(ir, operation.operands[1]) != float(BODIES[body]):
        return None
    return "\n".join(scan_function(name, shape, element, body))


def scan_function(name: str, shape: list[int], element: str, body: str) -> list[str]:
    """The lines of ``func.func private @name``: the cumulative ``body`` (``stablehlo.add``
    or ``stablehlo.multiply``) of a tensor of ``shape`` along its last axis, in blocks; the
    scan of the block totals is another such function when it is long enough."""
    lines, length = prod(shape[:-1]), shape[-1]
    blocks = -(-length // BLOCK)
    padded = blocks * BLOCK
    identity = BODIES[body]

    def t(*dims: int) -> str:
        return f"tensor<{'x'.join(map(str, dims))}x{element}>" if dims else f"tensor<{element}>"

    given = t(*shape)
    text = [
        f"func.func private @{name}(%x: {given}) -> {given} {{",
        f"%identity = stablehlo.constant dense<{identity}> : {t()}",
        f"%flat = stablehlo.reshape %x : ({given}) -> {t(lines, length)}",
        # 1. blocks of BLOCK, the last one padded with the identity
        f"%padded = stablehlo.pad %flat, %identity, low = [0, 0], high = [0, {padded - length}], "
        f"interior = [0, 0] : ({t(lines, length)}, {t()}) -> {t(lines, padded)}",
        f"%blocks = stablehlo.reshape %padded : ({t(lines, padded)}) -> {t(lines * blocks, BLOCK)}",
    ]
    # 2. each block's own scan
    text += _scan("%own", "%blocks", lines * blocks, BLOCK, body, t)
    # 3. what comes before each block: the scan of the totals, shifted by one block
    text += [
        f"%last = stablehlo.slice %own [0:{lines * blocks}, {BLOCK - 1}:{BLOCK}] : "
        f"({t(lines * blocks, BLOCK)}) -> {t(lines * blocks, 1)}",
        f"%totals = stablehlo.reshape %last : ({t(lines * blocks, 1)}) -> {t(lines, blocks)}",
    ]
    nested: list[str] = []
    if blocks >= SMALLEST:
        nested = scan_function(f"{name}_totals", [lines, blocks], element, body)
        text.append(
            f"%through = func.call @{name}_totals(%totals) : ({t(lines, blocks)}) -> "
            f"{t(lines, blocks)}"
        )
    else:
        text += _scan("%through", "%totals", lines, blocks, body, t)
    text += [
        f"%upto = stablehlo.slice %through [0:{lines}, 0:{blocks - 1}] : ({t(lines, blocks)}) "
        f"-> {t(lines, blocks - 1)}",
        f"%before = stablehlo.pad %upto, %identity, low = [0, 1], high = [0, 0], "
        f"interior = [0, 0] : ({t(lines, blocks - 1)}, {t()}) -> {t(lines, blocks)}",
        # 4. into each block's entries
        f"%spread = stablehlo.broadcast_in_dim %before, dims = [0, 1] : ({t(lines, blocks)}) "
        f"-> {t(lines, blocks, BLOCK)}",
        f"%own3 = stablehlo.reshape %own : ({t(lines * blocks, BLOCK)}) -> "
        f"{t(lines, blocks, BLOCK)}",
        f"%joined = {body} %spread, %own3 : {t(lines, blocks, BLOCK)}",
        f"%whole = stablehlo.reshape %joined : ({t(lines, blocks, BLOCK)}) -> {t(lines, padded)}",
        f"%cut = stablehlo.slice %whole [0:{lines}, 0:{length}] : ({t(lines, padded)}) -> "
        f"{t(lines, length)}",
        f"%result = stablehlo.reshape %cut : ({t(lines, length)}) -> {given}",
        f"return %result : {given}",
        "}",
    ]
    return text + nested


def _scan(result: str, source: str, rows: int, length: int, body: str, t: Any) -> list[str]:
    """``result``: the cumulative ``body`` of each row of ``source`` (rows x length), as jax
    writes it (a reduce_window whose window is the row)."""
    matrix = t(rows, length)
    return [
        f'{result} = "stablehlo.reduce_window"({source}, %identity) <{{padding = '
        f"dense<[[0, 0], [{length - 1}, 0]]> : tensor<2x2xi64>, window_dimensions = "
        f"array<i64: 1, {length}>}}> ({{",
        f"^bb0(%a: {t()}, %b: {t()}):",
        f"  %c = {body} %a, %b : {t()}",
        f"  stablehlo.return %c : {t()}",
        f"}}) : ({matrix}, {t()}) -> {matrix}",
    ]
