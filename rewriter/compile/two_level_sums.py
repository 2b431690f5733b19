"""Long float sums in blocks of ``ROW``: each block's sum, then the sum of those.

IREE 3.13 sums along a dimension one element after another (a few vector lanes at most,
each a running sum): the error of a running sum grows with the number of its terms, every
addition rounding to half an ulp of the sum so far. So summed, ``(x * x).sum()`` of
1,048,576 normal f32 is 467 off the exact sum (a relative 4.5e-4, some 3,700 ulps), and
``(x * x).sum(0)`` of a 262,144 x 4 matrix 6.4e-5 off, against 1e-7 under ``jax.jit``,
whose reductions are trees. IREE also sums a whole tensor in one workgroup: 0.87 ms at a
million elements, 2.9 times ``jax.jit``'s time.

``two_level_sums`` writes each ``stablehlo.reduce`` of one float operand (f32, f64), whose
body is one ``stablehlo.add`` of its arguments and whose initial value is the constant 0,
that sums over one dimension of at least ``SMALLEST`` elements or of a size known at run
time only (a symbolic batch), or over every dimension (then seen as one dimension, a
reshape) of at least that many or of a dynamic shape, as:

1. the elements along that dimension cut into blocks of ``ROW`` (a slice, then a reshape
   that splits the dimension in two), each block summed;
2. the block sums summed;
3. plus the sum of the elements left over when ``ROW`` does not divide the dimension.

A term goes through at most ``ROW + n / ROW + 1`` additions instead of ``n``, so the error
bound of a blocked sum holds (``tests/test_two_level_sums.py``): 0.01 off on the million
squares, as XLA's. The elements and the body are the same; only the order of the
additions differs, which StableHLO leaves to the implementation (XLA's order is its own).
Each level starts from 0, the initial value, which a sum adds without changing it.
Of dynamic shape the number of whole blocks is read at run time (``dynamic_sum_function``:
slices and an expansion of the tensor dialect); a sum shorter than a block has none, and
its sum of no blocks, 0, is added to the running sum of the rest, which it leaves as it is.

Both paths take the sums over a dimension that is not the last (``across_rows``), and
the sums over every dimension, along rows of a static length and over several adjacent
dimensions of static shapes (``expanded_whole_and_trailing``), both input fixes. On the
compiled path LLVM sums an innermost loop in vector lanes (``vector_sums.py``), each lane a
running sum, of a million terms and more in a long sum: 18 to 7,969 units of roundoff of
the sum off, where ``jax.jit`` is 0.2 to 1.6 and the blocks 0.2 to 4.4
(``tests/test_two_level_sums.py``); IREE's own sums over adjacent dimensions are 8,000
off. Those blocks cut one dimension by an expansion, which the compiled path fuses
with the operand's elementwise ops (``bubble-up-expand-shapes``): they take no longer
than the lanes alone (``benchmarks/sum_accuracy.py``). The IREE path then takes the rest
(``whole_and_trailing``: along rows of a symbolic length), which its vector lanes sum one
element after another.
"""

from __future__ import annotations

from math import prod
from typing import Any

from .mlir_walk import (
    dimension_sizes,
    one_op_body,
    outline_into_functions,
    splat_value,
    tensor_text,
)

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


def expanded_whole_and_trailing(module: Any) -> int:
    """Both paths' ``whole_and_trailing``. Of static shapes, a sum over every
    dimension or over several adjacent ones cuts one dimension into blocks
    (``expanded_sum_function``) and collapses none: the compiled path fuses an operand's
    elementwise ops into a sum through an expansion of its shape (IREE's
    ``bubble-up-expand-shapes``), not through a collapse, where the squares of
    ``(x * x).sum()`` of a 2048 x 2048 array are written to memory and read again (6x the
    time). Of dynamic shapes, the sums over every dimension: of one dimension as IREE's
    are (``dynamic_sum_function``), of more the rows' sums first (``rows_then_blocks``)."""
    return outline_into_functions(
        module,
        "stablehlo.reduce",
        f"{_PREFIX}expanded_",
        lambda ir, op, n: _text(ir, op, n, True, expanded=True),
    )


def _text(
    ir: Any, operation: Any, name: str, trailing: bool, *, expanded: bool = False
) -> str | None:
    """The text of ``func.func private @name`` that computes ``operation`` as the module's
    doc says, or None when it is not such a sum, or is (``trailing``) or is not over the
    last dimension or every one. ``expanded``: of static shape, a sum over every dimension
    or several adjacent ones as ``expanded_sum_function``'s; of dynamic shape, a sum over
    every dimension only."""
    if len(operation.operands) != 2 or len(operation.results) != 1:
        return None
    if one_op_body(operation, ("stablehlo.add",)) is None:
        return None
    given = ir.RankedTensorType(operation.operands[0].type)
    element = str(given.element_type)
    if element not in ELEMENTS or given.rank == 0:
        return None
    if splat_value(ir, operation.operands[1]) != 0.0:
        return None
    sizes = dimension_sizes(given)
    dimensions = sorted(int(d) for d in ir.DenseI64ArrayAttr(operation.attributes["dimensions"]))
    shape: list[int | None]
    if expanded and given.has_static_shape:
        first, last = dimensions[0], dimensions[-1]
        run = dimensions == list(range(first, last + 1))
        if not run or first == last < len(sizes) - 1:  # one other: ``across_rows``'s
            return None
        if prod(given.shape[first : last + 1]) < SMALLEST:
            return None
        return "\n".join(expanded_sum_function(name, list(given.shape), first, last, element))
    every = dimensions == list(range(len(sizes)))
    if expanded and not every:
        # Along rows of a symbolic length the slices of the blocks keep the squares of
        # (x * x).sum(1) from fusing into the sum: 2 to 3 times jax.jit's time at a
        # million; the lanes' running sums are 18 units of roundoff of the sum off.
        return None
    if expanded and len(sizes) > 1 and None not in sizes[1:]:
        return "\n".join(rows_then_blocks(ir, name, given))
    if dimensions == list(range(len(sizes))) and len(sizes) > 1:
        dimension = 0  # every dimension: one, by a reshape
        shape = [prod(given.shape) if given.has_static_shape else None]
    elif len(dimensions) == 1:
        shape, dimension = sizes, dimensions[0]
    else:
        return None
    summed = shape[dimension]
    if summed is not None and summed < SMALLEST or (dimension == len(shape) - 1) != trailing:
        return None
    if given.has_static_shape:
        static = [size or 0 for size in shape]  # all static here
        return "\n".join(sum_function(name, list(given.shape), static, dimension, element))
    result = str(operation.results[0].type)
    return "\n".join(dynamic_sum_function(name, given, shape, dimension, result))


def sum_function(
    name: str, given: list[int], shape: list[int], dimension: int, element: str
) -> list[str]:
    """The lines of ``func.func private @name``: the sum of a tensor of ``given`` sizes,
    seen as ``shape`` (the same elements, in order), over ``dimension``, in blocks."""
    size = shape[dimension]
    blocks, left = divmod(size, ROW)
    kept = shape[:dimension] + shape[dimension + 1 :]
    t = tensor_text
    lines = [
        f"func.func private @{name}(%x: {t(given, element)}, %zero: {t([], element)}) "
        f"-> {t(kept, element)} {{",
        f"%x_ = stablehlo.reshape %x : ({t(given, element)}) -> {t(shape, element)}",
        _slice("%head", "%x_", shape, dimension, 0, blocks * ROW, element),
    ]
    head = shape[:dimension] + [blocks * ROW] + shape[dimension + 1 :]
    split = shape[:dimension] + [blocks, ROW] + shape[dimension + 1 :]
    block_sums = shape[:dimension] + [blocks] + shape[dimension + 1 :]
    lines += [
        f"%blocks = stablehlo.reshape %head : ({t(head, element)}) -> {t(split, element)}",
        _reduce("%block_sums", "%blocks", split, [dimension + 1], element),
        _reduce("%sum", "%block_sums", block_sums, [dimension], element),
    ]
    result = "%sum"
    if left:
        tail = shape[:dimension] + [left] + shape[dimension + 1 :]
        lines += [
            _slice("%tail", "%x_", shape, dimension, blocks * ROW, size, element),
            _reduce("%tail_sum", "%tail", tail, [dimension], element),
            f"%all = stablehlo.add %sum, %tail_sum : {t(kept, element)}",
        ]
        result = "%all"
    lines += [f"return {result} : {t(kept, element)}", "}"]
    return lines


def expanded_sum_function(
    name: str, shape: list[int], first: int, last: int, element: str
) -> list[str]:
    """The lines of ``func.func private @name``: the sum of a tensor of the static ``shape``
    over its dimensions ``first`` to ``last``, in blocks of about ``ROW`` elements, each
    block whole rows of the summed dimensions after one (``_blocks``), cut by expanding that
    dimension in two: ``(1048576, 4)`` summed over both is summed as ``(1024, 1024, 4)``
    over its last two dimensions, then over the first."""
    kept = shape[:first] + shape[last + 1 :]
    lines = [
        f"func.func private @{name}(%x: {tensor_text(shape, element)}, %zero: tensor<{element}>) "
        f"-> {tensor_text(kept, element)} {{"
    ]
    result = _run_sum(lines, "%x", shape, first, last, element, "s")
    lines += [f"  return {result} : {tensor_text(kept, element)}", "}"]
    return lines


def _run_sum(
    lines: list[str], value: str, shape: list[int], first: int, last: int, element: str, tag: str
) -> str:
    """Append to ``lines`` the sum of ``value`` (of the static ``shape``) over the
    dimensions ``first`` to ``last``: in blocks when they hold ``SMALLEST`` elements or
    more, else one reduce; return the sum's name. The sum of the blocks and that of a tail
    of rows that fills no block are sums of fewer elements, themselves in blocks when long."""
    run = list(range(first, last + 1))
    blocking = (
        _blocks(shape[first : last + 1]) if prod(shape[first : last + 1]) >= SMALLEST else None
    )
    if blocking is None:
        lines.append(_reduce(f"%{tag}", value, shape, run, element))
        return f"%{tag}"
    at, block, blocks = blocking
    dimension = first + at
    head = value
    whole = blocks * block
    if whole != shape[dimension]:
        head = f"%{tag}_head"
        lines.append(_slice(head, value, shape, dimension, 0, whole, element))
    sliced = shape[:dimension] + [whole] + shape[dimension + 1 :]
    split = shape[:dimension] + [blocks, block] + shape[dimension + 1 :]
    lines.append(
        f"  %{tag}_split = stablehlo.reshape {head} : "
        f"({tensor_text(sliced, element)}) -> {tensor_text(split, element)}"
    )
    inner = list(range(dimension + 1, last + 2))
    lines.append(_reduce(f"%{tag}_blocks", f"%{tag}_split", split, inner, element))
    block_sums = shape[:dimension] + [blocks] + shape[last + 1 :]
    total = _run_sum(lines, f"%{tag}_blocks", block_sums, first, dimension, element, f"{tag}b")
    if whole != shape[dimension]:
        tail = shape[:dimension] + [shape[dimension] - whole] + shape[dimension + 1 :]
        lines.append(
            _slice(f"%{tag}_tail", value, shape, dimension, whole, shape[dimension], element)
        )
        rest = _run_sum(lines, f"%{tag}_tail", tail, first, last, element, f"{tag}t")
        kept = tensor_text(shape[:first] + shape[last + 1 :], element)
        lines.append(f"  %{tag}_all = stablehlo.add {total}, {rest} : {kept}")
        total = f"%{tag}_all"
    return total


def _blocks(run: list[int]) -> tuple[int, int, int] | None:
    """Where ``expanded_sum_function`` cuts the summed dimensions of sizes ``run``: the
    first whose following ones hold at most ``ROW`` elements (its place in ``run``), how
    many of its rows a block takes (a divisor of its size when one fills an eighth of a
    block or more, so that no tail is left; else as many as fit) and how many whole blocks
    there are; None when a block would hold one element."""
    after = prod(run)
    for at, size in enumerate(run):
        after //= size if size else 1
        if after <= ROW and size:
            fits = max(1, ROW // after)
            block = max(d for d in range(1, min(fits, size) + 1) if size % d == 0)
            if block * after * 8 < ROW:
                block = min(fits, size)
            if block * after < 2:
                return None
            return at, block, size // block
    return None


def _reduce(result: str, value: str, shape: list[int], over: list[int], element: str) -> str:
    kept = [n for d, n in enumerate(shape) if d not in over]
    return (
        f"  {result} = stablehlo.reduce({value} init: %zero) applies stablehlo.add across "
        f"dimensions = [{', '.join(map(str, over))}] : ({tensor_text(shape, element)}, "
        f"tensor<{element}>) -> {tensor_text(kept, element)}"
    )


def _slice(
    result: str, value: str, shape: list[int], dimension: int, start: int, end: int, element: str
) -> str:
    ranges = ", ".join(
        f"{start}:{end}" if d == dimension else f"0:{n}" for d, n in enumerate(shape)
    )
    sliced = shape[:dimension] + [end - start] + shape[dimension + 1 :]
    return (
        f"  {result} = stablehlo.slice {value} [{ranges}] : "
        f"({tensor_text(shape, element)}) -> {tensor_text(sliced, element)}"
    )


def rows_then_blocks(ir: Any, name: str, given: Any) -> list[str]:
    """The lines of ``func.func private @name``: the sum of every element of ``given``, of
    a dynamic first dimension and static others (``(b, 4)``), as the sums of its rows (a
    reduce over the static dimensions), then the sum of those in blocks
    (``dynamic_sum_function``). A collapse into one dimension would keep the compiled
    path from fusing the operand's elementwise ops into the sum (3.6 times ``jax.jit``'s
    time at a million rows of 4); a row's sum is short."""
    element = given.element_type
    rows = ir.RankedTensorType.get(
        [ir.ShapedType.get_dynamic_size()], element, loc=ir.Location.unknown()
    )
    zero = f"tensor<{element}>"
    static = ", ".join(str(d) for d in range(1, given.rank))
    lines = [
        f"func.func private @{name}(%x: {given}, %zero: {zero}) -> {zero} {{",
        f"  %rows = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = "
        f"[{static}] : ({given}, {zero}) -> {rows}",
        f"  %sum = func.call @{name}_rows(%rows, %zero) : ({rows}, {zero}) -> {zero}",
        f"  return %sum : {zero}",
        "}",
    ]
    return lines + dynamic_sum_function(f"{name}_rows", rows, [None], 0, zero)


def dynamic_sum_function(
    name: str, given: Any, shape: list[int | None], dimension: int, result: str
) -> list[str]:
    """The lines of ``func.func private @name``: the sum of a tensor of the dynamic type
    ``given``, seen as ``shape`` (the same elements, in order: itself, or all in one
    dimension), over ``dimension``, in blocks as ``sum_function``'s. The number of whole
    blocks is read at run time (``n / ROW``, none for a short sum, whose blocks then add
    0.0 to the rest's sum: the running sum as before)."""
    element = given.element_type
    zero = f"tensor<{element}>"
    seen = tensor_text(shape, element)
    lines = [f"func.func private @{name}(%x: {given}, %zero: {zero}) -> {result} {{"]
    if len(shape) < given.rank:
        every = ", ".join(map(str, range(given.rank)))
        lines.append(f"  %x_ = tensor.collapse_shape %x [[{every}]] : {given} into {seen}")
    else:
        lines.append(f"  %x_ = tensor.cast %x : {given} to {seen}")
    sizes = []  # as an op's mixed sizes: a dynamic one's value, a static one's number
    for d, size in enumerate(shape):
        if size is None:
            lines.append(f"  %at{d} = arith.constant {d} : index")
            lines.append(f"  %size{d} = tensor.dim %x_, %at{d} : {seen}")
        sizes.append(f"%size{d}" if size is None else str(size))
    n = sizes[dimension]
    if shape[dimension] is not None:
        lines.append(f"  %count = arith.constant {n} : index")
        n = "%count"
    lines += [
        f"  %row = arith.constant {ROW} : index",
        f"  %blocks = arith.divui {n}, %row : index",
        "  %head_size = arith.muli %blocks, %row : index",
        f"  %tail_size = arith.subi {n}, %head_size : index",
    ]
    cut = [None if d == dimension else size for d, size in enumerate(shape)]
    part = tensor_text(cut, element)
    ones = ", ".join(["1"] * len(shape))

    def sliced(result_name: str, start: str, size: str) -> str:
        offsets = ", ".join(start if d == dimension else "0" for d in range(len(shape)))
        lengths = ", ".join(size if d == dimension else sizes[d] for d in range(len(shape)))
        return (
            f"  {result_name} = tensor.extract_slice %x_[{offsets}] [{lengths}] [{ones}] "
            f": {seen} to {part}"
        )

    split_sizes = cut[:dimension] + [None, ROW] + cut[dimension + 1 :]
    split = tensor_text(split_sizes, element)
    groups = [[d] for d in range(dimension)] + [[dimension, dimension + 1]]
    groups += [[d + 1] for d in range(dimension + 1, len(shape))]
    reassociation = ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups)
    output = sizes[:dimension] + ["%blocks", str(ROW)] + sizes[dimension + 1 :]
    block_sums = tensor_text(cut, element)

    def total(result_name: str, source: str, source_type: str, over: int, to: str) -> str:
        return (
            f"  {result_name} = stablehlo.reduce({source} init: %zero) applies stablehlo.add "
            f"across dimensions = [{over}] : ({source_type}, {zero}) -> {to}"
        )

    lines += [
        sliced("%head", "0", "%head_size"),
        f"  %split = tensor.expand_shape %head [{reassociation}] "
        f"output_shape [{', '.join(output)}] : {part} into {split}",
        total("%block_sums", "%split", split, dimension + 1, block_sums),
        total("%sum", "%block_sums", block_sums, dimension, result),
        sliced("%tail", "%head_size", "%tail_size"),
        total("%tail_sum", "%tail", part, dimension, result),
        f"  %all = stablehlo.add %sum, %tail_sum : {result}",
        f"  return %all : {result}",
        "}",
    ]
    return lines
