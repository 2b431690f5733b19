"""``lax.top_k`` of f32 on the IREE path as compiled code: the K largest of chunk maxima.

jax writes ``lax.top_k(x, K)`` as a stable sort of ``x`` and an iota, greatest first under
the total order of floats, of which the program reads the first K (a ``chlo.top_k``
composite's decomposition). ``sorts.py`` serves it as an import in Python, whose call
alone costs ten times ``jax.jit``'s top_k of 1,000 floats; IREE's own ``chlo.top_k``
(``iree_linalg_ext.topk``) compares every element with each of the K kept (15 times
``jax.jit`` at 512,000). ``chunked_top_k`` writes each such sort, on its last dimension,
as compiled code that does O(n) work and O(sqrt(n K)) comparisons against the kept:

1. each float becomes a signed 32-bit key in the total order (its bits, the 31 low ones
   flipped when the sign is set), lines padded with the least key (the bits of a NaN with
   every bit set) up to C chunks of B, where B is about sqrt(n / K) and C >= K;
2. each chunk's greatest key (a reduce that IREE vectorizes), and the K greatest chunks
   by (key, lower chunk first) (IREE's ``chlo.top_k``, on the line reversed: it puts the
   later of equal keys first), then in ascending order (the K greatest of their negations);
3. the K chunks' K x B keys, in the line's order (a gather), and their K greatest, ties
   lower first (``chlo.top_k`` on them reversed): the line's first K, as the stable sort
   orders them. The float's bits come back from its key (the map is its own inverse), its
   position from its chunk and its place in it.

Step 2 loses nothing: a chunk outside the K greatest chunks has K chunks whose greatest
entries come before its own, so none of its entries is among the line's first K. Each
``chlo.top_k``'s two results are read (the one not needed through an identity IREE cannot
see: a ``maximum`` with -1 or 0, a ``minimum`` with 0 or less): with one of them unused,
IREE lowers it to a bubble sort instead of its topk, and an ``optimization_barrier`` that
would keep it splits the call into several submissions. The results are jax's bit for bit
(tests/test_iree_chunked_top_k.py); 1,000 floats take 1.3 times ``jax.jit``'s top_k (the
dispatches' fixed costs), 64,000 and up less than it.
"""

from __future__ import annotations

from math import isqrt, prod
from typing import Any

from ..compile.mlir_walk import add_functions
from ..compile.sorts import DESCENDING, F32, SortKey, first_read, sort_keys

TOTAL_ORDER_DESCENDING = SortKey(0, F32 | DESCENDING)  # lax.top_k's comparator
# IREE's topk compares each entry with the K kept: above this many comparisons a line
# (of chunk maxima and of the K chunks' entries), the sort stays an import (sorts.py),
# whose selection is linear (the largest K: K = 1000 of 1,000,000 takes 63 million).
MAX_COMPARISONS = 1 << 22
_PREFIX = "rw_chunked_top_k_"


def chunked_top_k(module: Any) -> int:
    """Rewrite, in the ``iree.compiler.ir`` module, every sort that the module's doc names
    (static shapes, f32 values and an i32 iota along the last dimension, one key: the
    total order greatest first, only the first K read); return how many."""
    from iree.compiler import ir

    found: list[tuple[Any, int]] = []

    def visit(operation):
        if operation.name == "stablehlo.sort":
            wanted = _wanted(ir, operation)
            if wanted is not None:
                found.append((operation, wanted))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    definitions: list[str] = []
    for number, (operation, wanted) in enumerate(found):
        shape = list(ir.RankedTensorType(operation.operands[0].type).shape)
        name = f"{_PREFIX}{number}"
        definitions.append(top_k_function(name, shape, wanted))
        kept = [*shape[:-1], wanted]
        with operation.context, operation.location, ir.InsertionPoint(operation):
            results = [
                ir.RankedTensorType.get(kept, ir.F32Type.get()),
                ir.RankedTensorType.get(kept, ir.IntegerType.get_signless(32)),
            ]
            call = ir.Operation.create(
                "func.call",
                results=results,
                operands=[operation.operands[0]],
                attributes={"callee": ir.FlatSymbolRefAttr.get(name)},
            )
        for old, new in zip(operation.results, call.results, strict=True):
            for use in list(old.uses):  # slices within the first `wanted`
                use.owner.operands[use.operand_number] = new
        operation.erase()
    add_functions(module, definitions)
    return len(found)


def _wanted(ir: Any, sort: Any) -> int | None:
    """K of a sort that ``chunked_top_k`` rewrites, or None."""
    operands = list(sort.operands)
    if len(operands) != 2 or sort_keys(ir, sort) != [TOTAL_ORDER_DESCENDING]:
        return None
    values, positions = (ir.RankedTensorType(value.type) for value in operands)
    if not (values.has_static_shape and positions.has_static_shape):
        return None
    rank = values.rank
    dimension = ir.IntegerAttr(sort.attributes["dimension"]).value
    if rank == 0 or dimension != rank - 1 or str(values.element_type) != "f32":
        return None
    if str(positions.element_type) != "i32" or not _is_iota(ir, operands[1], dimension):
        return None
    size = values.shape[-1]
    wanted = first_read(ir, sort, list(sort.results))
    if not wanted or wanted >= size or size >= 2**31 or 0 in values.shape:
        return None
    if comparisons(size, wanted) > MAX_COMPARISONS:
        return None
    return wanted


def _is_iota(ir: Any, value: Any, dimension: int) -> bool:
    if not isinstance(value, ir.OpResult):
        return False
    owner = value.owner.operation
    if owner.name != "stablehlo.iota":
        return False
    return ir.IntegerAttr(owner.attributes["iota_dimension"]).value == dimension


def chunk_size(size: int, wanted: int) -> int:
    """B: about sqrt(size / wanted) (the chunk maxima and the K chunks' entries then take
    as many comparisons), a divisor of ``size`` near it when there is one (no padding)."""
    ideal = max(1, isqrt(size // wanted))
    for near in range(ideal, max(0, ideal // 2), -1):
        if size % near == 0:
            return near
    return ideal


def comparisons(size: int, wanted: int) -> int:
    """How many comparisons with the kept IREE's topks make on a line of ``size``."""
    chunk = chunk_size(size, wanted)
    return (-(-size // chunk) + wanted * chunk) * wanted


def top_k_function(name: str, shape: list[int], wanted: int) -> str:
    """The text of ``func.func private @name``: values and positions of the ``wanted``
    greatest f32 of each line (the last dimension) of a tensor of ``shape``."""
    lines, size = prod(shape[:-1]), shape[-1]
    b = chunk_size(size, wanted)
    c = -(-size // b)
    k = wanted
    padded = c * b
    given = f"tensor<{'x'.join(map(str, shape))}xf32>"
    result_shape = "x".join(map(str, [*shape[:-1], k]))

    def t(*dims: int, element: str = "i32") -> str:
        return f"tensor<{'x'.join(map(str, dims))}x{element}>"

    def splat(name: str, value: str, type_: str) -> str:
        return f"%{name} = stablehlo.constant dense<{value}> : {type_}"

    rows, gathered, candidates = t(lines * c, b), t(lines * k, b), t(lines, k * b)
    text = [
        f"func.func private @{name}(%x: {given}) -> ({t(*shape[:-1], k, element='f32')}, "
        f"{t(*shape[:-1], k)}) {{",
        f"%flat = stablehlo.reshape %x : ({given}) -> {t(lines, size, element='f32')}",
    ]
    if padded > size:
        text += [
            "%least = stablehlo.constant dense<0xFFFFFFFF> : tensor<f32>",
            f"%padded = stablehlo.pad %flat, %least, low = [0, 0], high = [0, {padded - size}], "
            f"interior = [0, 0] : ({t(lines, size, element='f32')}, tensor<f32>) -> "
            f"{t(lines, padded, element='f32')}",
        ]
    else:
        text.append(
            f"%padded = stablehlo.reshape %flat : ({t(lines, size, element='f32')}) -> "
            f"{t(lines, padded, element='f32')}"
        )
    text += [
        f"%table = stablehlo.reshape %padded : ({t(lines, padded, element='f32')}) -> "
        f"{t(lines * c, b, element='f32')}",
        *_keys("key", "%table", rows, t(lines * c, b, element="f32")),
        "%low = stablehlo.constant dense<-2147483648> : tensor<i32>",
        f"%maxima = stablehlo.reduce(%key init: %low) applies stablehlo.maximum across "
        f"dimensions = [1] : ({rows}, tensor<i32>) -> {t(lines * c)}",
        f"%lined = stablehlo.reshape %maxima : ({t(lines * c)}) -> {t(lines, c)}",
        *_top("chunk", "%lined", lines, c, k),
        # the chosen chunks in ascending order: the greatest of their negations
        f"%negated = stablehlo.negate %chunk_at : {t(lines, k)}",
        f"%ascending_v, %ascending_i = chlo.top_k(%negated, k = {k}) : {t(lines, k)} -> "
        f"({t(lines, k)}, {t(lines, k)})",
        # min(-id <= 0, index >= 0) is -id, and reads the indices
        f"%ascending = stablehlo.minimum %ascending_v, %ascending_i : {t(lines, k)}",
        f"%ids = stablehlo.negate %ascending : {t(lines, k)}",
        f"%line = stablehlo.iota dim = 0 : {t(lines, k)}",
        splat("chunks", str(c), t(lines, k)),
        f"%base = stablehlo.multiply %line, %chunks : {t(lines, k)}",
        f"%row = stablehlo.add %base, %ids : {t(lines, k)}",
        f"%rows = stablehlo.reshape %row : ({t(lines, k)}) -> {t(lines * k, 1)}",
        f'%picked = "stablehlo.gather"(%table, %rows) <{{dimension_numbers = '
        f"#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], "
        f"start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, "
        f"slice_sizes = array<i64: 1, {b}>}}> : ({t(lines * c, b, element='f32')}, "
        f"{t(lines * k, 1)}) -> {t(lines * k, b, element='f32')}",
        *_keys("pkey", "%picked", gathered, t(lines * k, b, element="f32")),
        f"%entries = stablehlo.reshape %pkey : ({gathered}) -> {candidates}",
        *_top("best", "%entries", lines, k * b, k),
        # each chosen entry's position in the line: its chunk's start plus its offset
        splat("width", str(b), t(lines, k)),
        f"%slot = stablehlo.divide %best_at, %width : {t(lines, k)}",
        f"%offset = stablehlo.remainder %best_at, %width : {t(lines, k)}",
        splat("kk", str(k), t(lines, k)),
        f"%linek = stablehlo.multiply %line, %kk : {t(lines, k)}",
        f"%slotrow = stablehlo.add %linek, %slot : {t(lines, k)}",
        f"%slots = stablehlo.reshape %slotrow : ({t(lines, k)}) -> {t(lines * k, 1)}",
        f"%allids = stablehlo.reshape %ids : ({t(lines, k)}) -> {t(lines * k)}",
        f'%chunkof = "stablehlo.gather"(%allids, %slots) <{{dimension_numbers = '
        f"#stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], "
        f"index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}}> "
        f": ({t(lines * k)}, {t(lines * k, 1)}) -> {t(lines * k)}",
        f"%chunk2 = stablehlo.reshape %chunkof : ({t(lines * k)}) -> {t(lines, k)}",
        f"%begin = stablehlo.multiply %chunk2, %width : {t(lines, k)}",
        f"%position = stablehlo.add %begin, %offset : {t(lines, k)}",
        *_keys("bits", "%best", t(lines, k), None),
        f"%value = stablehlo.bitcast_convert %bits : ({t(lines, k)}) -> "
        f"{t(lines, k, element='f32')}",
        f"%values = stablehlo.reshape %value : ({t(lines, k, element='f32')}) -> "
        f"tensor<{result_shape}xf32>",
        f"%positions = stablehlo.reshape %position : ({t(lines, k)}) -> tensor<{result_shape}xi32>",
        f"return %values, %positions : tensor<{result_shape}xf32>, tensor<{result_shape}xi32>",
        "}",
    ]
    return "\n".join(text)


def _keys(name: str, source: str, type_: str, float_type: str | None) -> list[str]:
    """``%name``: the signed key of each f32 of ``source`` (``float_type``), or, with
    ``float_type`` None, the bits of the f32 of each key of ``source``: the map is its own
    inverse, the sign bit kept."""
    bits = source
    lines = []
    if float_type is not None:
        bits = f"%{name}_bits"
        lines.append(f"{bits} = stablehlo.bitcast_convert {source} : ({float_type}) -> {type_}")
    return [
        *lines,
        f"%{name}_31 = stablehlo.constant dense<31> : {type_}",
        f"%{name}_sign = stablehlo.shift_right_arithmetic {bits}, %{name}_31 : {type_}",
        f"%{name}_low = stablehlo.constant dense<2147483647> : {type_}",
        f"%{name}_mask = stablehlo.and %{name}_sign, %{name}_low : {type_}",
        f"%{name} = stablehlo.xor {bits}, %{name}_mask : {type_}",
    ]


def _top(name: str, keys: str, lines: int, size: int, k: int) -> list[str]:
    """``%name`` (keys) and ``%name_at`` (their places): the ``k`` greatest i32 of each
    line of ``keys`` (``lines`` x ``size``), ties in place order. IREE's ``topk`` puts the
    later of two equal keys first, so it reads the lines reversed."""
    i32 = f"tensor<{lines}x{size}xi32>"
    kept = f"tensor<{lines}x{k}xi32>"
    return [
        f"%{name}_reversed = stablehlo.reverse {keys}, dims = [1] : {i32}",
        f"%{name}, %{name}_i = chlo.top_k(%{name}_reversed, k = {k}) : {i32} -> ({kept}, {kept})",
        # max(index, (key >> 31, logical) - 1) is the index (>= 0), and reads the keys
        f"%{name}_31 = stablehlo.constant dense<31> : {kept}",
        f"%{name}_sign = stablehlo.shift_right_logical %{name}, %{name}_31 : {kept}",
        f"%{name}_1 = stablehlo.constant dense<1> : {kept}",
        f"%{name}_floor = stablehlo.subtract %{name}_sign, %{name}_1 : {kept}",
        f"%{name}_back = stablehlo.maximum %{name}_i, %{name}_floor : {kept}",
        f"%{name}_last = stablehlo.constant dense<{size - 1}> : {kept}",
        f"%{name}_at = stablehlo.subtract %{name}_last, %{name}_back : {kept}",
    ]
