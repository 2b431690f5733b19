"""The sorts jax writes, on the IREE path: calls of ``@rw_sort.S``, a dispatch of the merge
sort or an import served by a stable sort of numpy.

IREE lowers ``stablehlo.sort`` to a bubble sort inside one dispatch: n^2 comparisons, and a
copy on the stack of every operand whose sorted values the program does not use (the keys
of an argsort), so that a sort of a few thousand entries fails to compile ("exceeded stack
allocation limit of 32768 bytes"). A sort whose comparator ``rewriter.compile.sorts``
reads into keys becomes instead a call of an import ``@rw_sort.sort_D_O_C_...`` (``D`` the
sort dimension, then the keys' operands and codes; ``_xN`` after it for the same sort of
other types). With ``native`` (``load`` passes it where its plugin can serve them), a
sort a dispatch can take is the body of that function: a dispatch calling the stable sort of
``abi/sort_calls.c`` (``sort_dispatches.py``). The others are declared in the module before
``iree-compile`` runs and recorded with the other import signatures. ``rewriter.iree.load``
serves these imports itself (``sort_server``): each key of each line becomes an unsigned
code in the key's order, as in ``abi/sort_calls.c``, and numpy's stable argsort
orders the lines, the last key first. A sort of dynamic shape (a symbolic batch) is such
an import too, whatever ``native`` says: a dispatch binds static shapes only, and IREE's
bubble sort copies the keys of an argsort onto the stack, which IREE refuses for a dynamic
size ("'memref.alloca' op expected no unbounded stack allocations"). Other comparators
stay with IREE's bubble sort (made stable: ``make_sorts_stable``).

A sort whose results are only read in their first K positions (``lax.top_k``: see
``rewriter.compile.sorts.keep_marked_sorts_whole``) with one key, which ``chunked_top_k.py``
has not made compiled code (f32 top_k), is the import
``@rw_sort.topK_D_O_C``, which returns only the first K of each line (the slices read them
from the import's results): numpy selects them (``np.partition`` for the K-th code, then
the codes below it and the first of those equal to it, stably sorted), in O(n + K log K)
per line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..compile.sorts import (
    BF16,
    CANONICAL,
    DESCENDING,
    F16,
    F32,
    F64,
    PART_SHIFT,
    SIGNED,
    SortKey,
    first_read,
    sort_keys,
)
from .signatures import ImportSignature

if TYPE_CHECKING:  # numpy is loaded by load, not by the compile step (the extras)
    import numpy as np

SORT_MODULE = "rw_sort"


def route_sorts_to_imports(module: Any, native: bool = False) -> tuple[list[ImportSignature], int]:
    """Replace, in the ``iree.compiler.ir`` module, every ``stablehlo.sort`` whose
    comparator jax wrote by a call of ``@rw_sort.S``: with ``native``, a
    function dispatching the stable sort where a dispatch can take it
    (``sort_dispatches.py``), else an import. Return the imports' signatures (one per
    distinct name and types) and how many functions dispatch."""
    from iree.compiler import ir

    from .sort_dispatches import definitions, why_not

    found: list[tuple[Any, list[SortKey]]] = []

    def visit(operation):
        if operation.name == "stablehlo.sort":
            keys = sort_keys(ir, operation)
            if keys:
                found.append((operation, keys))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    signatures: dict[str, ImportSignature] = {}
    described: dict[str, tuple[int, list[SortKey], int | None]] = {}
    for operation, keys in found:
        dimension = ir.IntegerAttr(operation.attributes["dimension"]).value
        types = tuple(str(value.type) for value in operation.operands)
        wanted = first_read(ir, operation, list(operation.results)) if len(keys) == 1 else None
        sorted_type = ir.RankedTensorType(operation.operands[0].type)
        size = None if sorted_type.is_dynamic_dim(dimension) else sorted_type.shape[dimension]
        wanted = wanted if wanted and size is not None and wanted < size else None
        result_types = [value.type for value in operation.operands]
        if wanted:  # only the first `wanted` of each line come back: the slices read them
            result_types = [_first_of(ir, t, dimension, wanted) for t in result_types]
        head = f"top{wanted}" if wanted else "sort"
        name = "_".join([head, str(dimension), *(f"{k.operand}_{k.code}" for k in keys)])
        symbol = name
        known = signatures.get(symbol)
        count = 1
        while known is not None and known.parameters != types:
            symbol = f"{name}_x{count}"  # the same sort of other types
            known = signatures.get(symbol)
            count += 1
        results = tuple(str(t) for t in result_types)
        signatures[symbol] = ImportSignature(
            SORT_MODULE, symbol, types, results, tuple(range(len(types))), ()
        )
        described[symbol] = (dimension, keys, wanted)
        with operation.context, operation.location, ir.InsertionPoint(operation):
            call = ir.Operation.create(
                "func.call",
                results=result_types,
                operands=list(operation.operands),
                attributes={"callee": ir.FlatSymbolRefAttr.get(f"{SORT_MODULE}.{symbol}")},
            )
        for old, new in zip(operation.results, call.results, strict=True):
            if wanted:  # every use is a slice within the first `wanted`: it reads new
                for use in list(old.uses):
                    use.owner.operands[use.operand_number] = new
            else:
                old.replace_all_uses_with(new)
        operation.erase()
    imports: list[ImportSignature] = []
    dispatched: list[str] = []
    for symbol, signature in signatures.items():
        if native and why_not(signature.parameters) is None:
            parts = (signature.parameters, signature.results, *described[symbol])
            dispatched.append(definitions(symbol, *parts))
        else:
            imports.append(signature)
    with module.context, ir.Location.unknown():
        start = ir.InsertionPoint.at_block_begin(module.body)
        for signature in imports:
            inputs = ", ".join(signature.parameters)
            outputs = ", ".join(signature.results)
            start.insert(
                ir.Operation.parse(
                    f"func.func private @{SORT_MODULE}.{signature.name}({inputs}) -> ({outputs})"
                )
            )
        if dispatched:
            parsed = ir.Module.parse("\n".join(dispatched))  # alive while its ops move out
            first = module.body.operations[0]
            for new in list(parsed.body.operations):
                new.operation.move_before(first)
    return imports, len(dispatched)


def _first_of(ir, type_, dimension: int, wanted: int):
    """``type_`` (a ranked tensor) with ``wanted`` entries along ``dimension``."""
    tensor = ir.RankedTensorType(type_)
    shape = list(tensor.shape)
    shape[dimension] = wanted
    return ir.RankedTensorType.get(
        shape, tensor.element_type, loc=ir.Location.unknown(type_.context)
    )


def sort_server(name: str) -> Callable[..., tuple[np.ndarray, ...]]:
    """The implementation of the ``rw_sort`` import ``name``: its operands in, each sorted
    along the dimension by the keys the name gives, stably, out."""
    import numpy as np

    words = re.sub(r"_x\d+$", "", name).split("_")
    wanted = int(words[0][3:]) if words[0].startswith("top") else 0
    numbers = [int(n) for n in words[1:]]
    dimension = numbers[0]
    keys = [SortKey(o, c) for o, c in zip(numbers[1::2], numbers[2::2], strict=True)]

    def run(*operands: np.ndarray) -> tuple[np.ndarray, ...]:
        moved = [np.moveaxis(np.asarray(a), dimension, -1) for a in operands]
        size = moved[0].shape[-1]
        count = int(np.prod(moved[0].shape[:-1]))  # not -1: no length of 0 divides into it
        lines = [a.reshape(count, size) for a in moved]
        order = np.broadcast_to(np.arange(size), lines[0].shape)
        if 0 < wanted < size and len(keys) == 1:
            codes = key_codes(lines[keys[0].operand], keys[0].code)
            order = _first_positions(codes, wanted)
            moved = [a[..., :wanted] for a in moved]  # the shapes of the results
            keys_left: list[SortKey] = []
        else:
            keys_left = keys
        for key in reversed(keys_left):
            codes = np.take_along_axis(key_codes(lines[key.operand], key.code), order, axis=1)
            order = np.take_along_axis(order, np.argsort(codes, axis=1, kind="stable"), axis=1)
        return tuple(
            np.ascontiguousarray(
                np.moveaxis(np.take_along_axis(line, order, axis=1).reshape(a.shape), -1, dimension)
            )
            for line, a in zip(lines, moved, strict=True)
        )

    return run


def _first_positions(codes: np.ndarray, wanted: int) -> np.ndarray:
    """Per line of ``codes`` (lines x n), the positions of its ``wanted`` smallest codes in
    a stable order (lines x wanted)."""
    import numpy as np

    kth = np.partition(codes, wanted - 1, axis=1)[:, wanted - 1 : wanted]
    below = codes < kth
    equal = codes == kth
    needed = wanted - below.sum(axis=1, keepdims=True)
    taken = below | (equal & (np.cumsum(equal, axis=1) <= needed))
    positions = np.nonzero(taken)[1].reshape(codes.shape[0], wanted)
    chosen = np.take_along_axis(codes, positions, axis=1)
    return np.take_along_axis(positions, np.argsort(chosen, axis=1, kind="stable"), axis=1)


_FLOAT_BITS = {F16: (16, 10), BF16: (16, 7), F32: (32, 23), F64: (64, 52)}


def key_codes(values: np.ndarray, code: int) -> np.ndarray:
    """Unsigned 64-bit codes of ``values`` whose order is the key's order (as
    ``key_code`` of abi/sort_calls.c orders them)."""
    import numpy as np

    part = code >> PART_SHIFT
    if part:
        values = values.real if part == 1 else values.imag
    kind = code & 0xFF
    if kind == SIGNED:
        codes = values.astype(np.int64).view(np.uint64) ^ np.uint64(1 << 63)
    elif kind in _FLOAT_BITS:
        width, mantissa = _FLOAT_BITS[kind]
        bits = values.view(f"u{width // 8}").astype(np.uint64)
        sign = np.uint64(1 << (width - 1))
        mask = np.uint64((1 << width) - 1)
        exponent = np.uint64(((1 << (width - 1)) - 1) & ~((1 << mantissa) - 1))
        fraction = np.uint64((1 << mantissa) - 1)
        nan = ((bits & exponent) == exponent) & ((bits & fraction) != 0)
        if code & CANONICAL:
            bits = np.where(bits == sign, np.uint64(0), bits)
        codes = np.where((bits & sign) != 0, ~bits & mask, bits | sign)
        if code & CANONICAL:
            codes = np.where(nan, np.uint64(np.iinfo(np.uint64).max), codes)
    else:
        codes = values.astype(np.uint64)
    return ~codes if code & DESCENDING else codes
