"""Long float sums in blocks of ``ROW``: each block's sum, then the sum of those.

IREE 3.13 sums along a dimension one element after another (a few vector lanes at most,
each a running sum): the error of a running sum grows with the number of its terms, every
addition rounding to half an ulp of the sum so far. So summed, ``(x * x).sum()`` of
1,048,576 normal f32 is 467 off the exact sum (a relative 4.5e-4, some 3,700 ulps), and
``(x * x).sum(0)`` of a 262,144 x 4 matrix 6.4e-5 off, against 1e-7 under ``jax.jit``,
whose reductions are trees. IREE also sums a whole tensor in one workgroup: 0.87 ms at a
million elements, 2.9 times ``jax.jit``'s time.

``two_level_sums`` writes each ``stablehlo.reduce`` of one float operand (f32, f64) of
static shape, whose body is one ``stablehlo.add`` of its arguments and whose initial value
is the constant 0, that sums over one dimension of at least ``SMALLEST`` elements, or over
every dimension of at least that many (then seen as one dimension, a reshape), as:

1. the elements along that dimension cut into blocks of ``ROW`` (a slice, then a reshape
   that splits the dimension in two), each block summed;
2. the block sums summed;
3. plus the sum of the elements left over when ``ROW`` does not divide the dimension.

A term goes through at most ``ROW + n / ROW + 1`` additions instead of ``n``, so the error
bound of a blocked sum holds (``tests/test_two_level_sums.py``): 0.01 off on the million
squares, as XLA's. The elements and the body are the same; only the order of the
additions differs, which StableHLO leaves to the implementation (XLA's order is its own).
Each level starts from 0, the initial value, which a sum adds without changing it.

Both paths take the sums over a dimension that is not the last (``across_rows``: an input
fix). The IREE path also takes the others (``whole_and_trailing``), which its vector lanes
sum one element after another: the million squares then take 0.28 ms, under ``jax.jit``'s
0.30. On the compiled path LLVM reassociates an innermost sum into vectors
(``vector_sums.py``), within 2e-7 of the exact sum, faster than blocks.
"""

from __future__ import annotations

from math import prod
from typing import Any

from .mlir_walk import one_op_body, outline_into_functions, splat_value

ROW = 4096  # elements a block: its sum, and the sum of the blocks', each within a few ulps
SMALLEST = 4 * ROW  # elements summed, from which a sum is made in blocks
ELEMENTS = ("f32", "f64")
_PREFIX = "rw_two_level_sum_"


def across_rows(module: Any) -> int:
    """Rewrite, in the ``iree.compiler.ir`` module, every sum the module's doc names over
    one dimension that is not the last; return how many (both paths)."""
    return outline_into_functions(
        module, "stablehlo.reduce", f"{_PREFIX}rows_", lambda ir, op, n: _text(ir, op, n, False)
    )


def whole_and_trailing(module: Any) -> int:
    """Rewrite, in the ``iree.compiler.ir`` module, every other sum the module's doc names
    (over the last dimension, or over every one); return how many (the IREE path)."""
    return outline_into_functions(
        module, "stablehlo.reduce", _PREFIX, lambda ir, op, n: _text(ir, op, n, True)
    )


def _text(ir: Any, operation: Any, name: str, trailing: bool) -> str | None:
    """The text of ``func.func private @name`` that computes ``operation`` as the module's
    doc says, or None when it is not such a sum, or is (``trailing``) or is not over the
    last dimension or every one."""
    if len(operation.operands) != 2 or len(operation.results) != 1:
        return None
    if one_op_body(operation, ("stablehlo.add",)) is None:
        return None
    given = ir.RankedTensorType(operation.operands[0].type)
    element = str(given.element_type)
    if element not in ELEMENTS or not given.has_static_shape or given.rank == 0:
        return None
    if splat_value(ir, operation.operands[1]) != 0.0:
        return None
    shape = list(given.shape)
    dimensions = sorted(int(d) for d in ir.DenseI64ArrayAttr(operation.attributes["dimensions"]))
    if dimensions == list(range(len(shape))) and len(shape) > 1:
        shape, dimension = [prod(shape)], 0  # every dimension: one, by a reshape
    elif len(dimensions) == 1:
        dimension = dimensions[0]
    else:
        return None
    if shape[dimension] < SMALLEST or (dimension == len(shape) - 1) != trailing:
        return None
    return "\n".join(sum_function(name, list(given.shape), shape, dimension, element))


def sum_function(
    name: str, given: list[int], shape: list[int], dimension: int, element: str
) -> list[str]:
    """The lines of ``func.func private @name``: the sum of a tensor of ``given`` sizes,
    seen as ``shape`` (the same elements, in order), over ``dimension``, in blocks."""
    size = shape[dimension]
    blocks, left = divmod(size, ROW)
    kept = shape[:dimension] + shape[dimension + 1 :]

    def t(dims: list[int]) -> str:
        return f"tensor<{'x'.join(map(str, dims))}x{element}>" if dims else f"tensor<{element}>"

    def total(result: str, source: str, dims: list[int], over: int) -> str:
        summed = dims[:over] + dims[over + 1 :]
        return (
            f"{result} = stablehlo.reduce({source} init: %zero) applies stablehlo.add across "
            f"dimensions = [{over}] : ({t(dims)}, {t([])}) -> {t(summed)}"
        )

    def part(result: str, start: int, end: int) -> tuple[str, list[int]]:
        ranges = [f"0:{n}" if d != dimension else f"{start}:{end}" for d, n in enumerate(shape)]
        sliced = shape[:dimension] + [end - start] + shape[dimension + 1 :]
        line = f"{result} = stablehlo.slice %x_ [{', '.join(ranges)}] : ({t(shape)}) -> {t(sliced)}"
        return line, sliced

    lines = [f"func.func private @{name}(%x: {t(given)}, %zero: {t([])}) -> {t(kept)} {{"]
    lines.append(f"%x_ = stablehlo.reshape %x : ({t(given)}) -> {t(shape)}")
    head_line, head = part("%head", 0, blocks * ROW)
    split = shape[:dimension] + [blocks, ROW] + shape[dimension + 1 :]
    block_sums = shape[:dimension] + [blocks] + shape[dimension + 1 :]
    lines += [
        head_line,
        f"%blocks = stablehlo.reshape %head : ({t(head)}) -> {t(split)}",
        total("%block_sums", "%blocks", split, dimension + 1),
        total("%sum", "%block_sums", block_sums, dimension),
    ]
    result = "%sum"
    if left:
        tail_line, tail = part("%tail", blocks * ROW, size)
        lines += [
            tail_line,
            total("%tail_sum", "%tail", tail, dimension),
            f"%all = stablehlo.add %sum, %tail_sum : {t(kept)}",
        ]
        result = "%all"
    lines += [f"return {result} : {t(kept)}", "}"]
    return lines
