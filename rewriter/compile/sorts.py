"""Sorting as jax means it: stable, and (on the compiled path) in O(n log n).

``stablehlo.sort`` becomes ``iree_linalg_ext.sort``, which both paths lower to a bubble
sort that keeps two neighbours in order when ``comparator(left, right)`` holds and swaps
them otherwise: equal neighbours are swapped, so ties lose their order, and every sort
takes n^2 comparisons. Two rewrites of the StableHLO fix that:

- ``make_sorts_stable``: each comparator ``c(l, r)`` becomes ``not c(r, l)`` (its block
  arguments swapped in pairs, its result negated). The bubble sort then swaps two
  neighbours only when the right one comes strictly first: ties keep their order, as
  jax's ``is_stable`` sort keeps them, for any comparator that is a strict weak order.
- ``recognise_sorts``: the comparators jax writes (``jnp.sort``, ``argsort``, ``lexsort``,
  ``lax.sort`` with several keys and operands) are read into keys (``SortKey``): a
  ``stablehlo.compare`` LT or GT of one operand's two values, SIGNED, UNSIGNED or
  TOTALORDER, the floats optionally made canonical first as jax makes them (NaN for every
  NaN, 0 for -0), the real or imaginary part of a complex operand, and lexicographic
  chains ``lt0 or (eq0 and rest)``. The compiled path marks such a sort with the location
  ``loc("rw.sort:KEYS"(...))`` (``KEYS`` as ``SortKey.code`` writes them), which its
  lowering keeps; after bufferization ``library_calls.route_sorts_to_c`` replaces each
  marked sort by a call of the stable sort of ``abi/sort_calls.c``. A comparator
  read otherwise (a FLOAT compare, under which NaN is neither less nor greater than
  anything, or any other body) stays with the bubble sort, made stable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from . import contexts
from .composites import call_decompositions
from .mlir_walk import constant_attribute, operations_named

TAG = "rw.sort:"
TAG_PATTERN = re.compile(r'"rw\.sort:([0-9,]*)"')
# A marked sort whose results are only read in their first K positions along the sort
# dimension (lax.top_k's slices): ``rw.first:K``, around the ``rw.sort`` mark.
FIRST = "rw.first:"
FIRST_PATTERN = re.compile(r'"rw\.first:([0-9]+)"')

# Key formats, as abi/sort_calls.c numbers them.
SIGNED, UNSIGNED, F16, BF16, F32, F64 = 1, 2, 3, 4, 5, 6
FLOATS = {"f16": F16, "bf16": BF16, "f32": F32, "f64": F64}
CANONICAL = 1 << 8  # NaNs equal and last, -0 equal to 0 (jax's comparator)
DESCENDING = 1 << 9
PART_SHIFT = 10  # 0: the element; 1: its real part; 2: its imaginary part


@dataclass(frozen=True)
class SortKey:
    operand: int
    code: int  # format | CANONICAL | DESCENDING | part << PART_SHIFT


def prepare_sorts(text: str) -> tuple[str, int]:
    """The compiled path's module with ``chlo.top_k`` composites calling their decomposition
    (``composites.py``), its recognised sorts marked (``recognise_sorts``) and every sort
    made stable (``make_sorts_stable``), and how many were marked."""
    if "stablehlo.sort" not in text:
        return text, 0
    from iree.compiler import ir

    module = ir.Module.parse(text, contexts.context())
    decomposed = call_decompositions(module)  # top_k: the stable sort jax wrote
    marked = recognise_sorts(module)
    keep_marked_sorts_whole(module)
    if not make_sorts_stable(module) and not decomposed:
        return text, 0
    return module.operation.get_asm(enable_debug_info=True), marked


def make_sorts_stable(module: Any) -> int:
    """Turn the comparator ``c(l, r)`` of every ``stablehlo.sort`` of the
    ``iree.compiler.ir`` module into ``not c(r, l)``, in place; return how many."""
    from iree.compiler import ir

    sorts = _sorts(ir, module)
    for sort in sorts:
        block = sort.regions[0].blocks[0]
        arguments = list(block.arguments)
        with sort.context, sort.location:
            for left, right in zip(arguments[0::2], arguments[1::2], strict=True):
                _swap_uses(ir, block, left, right)
            done = list(block.operations)[-1].operation
            with ir.InsertionPoint(done):
                value = done.operands[0]
                negated = ir.Operation.create(
                    "stablehlo.not", results=[value.type], operands=[value]
                ).result
            done.operands[0] = negated
    return len(sorts)


def recognise_sorts(module: Any) -> int:
    """Mark every ``stablehlo.sort`` whose comparator ``sort_keys`` reads with the location
    ``rw.sort:KEYS``, in place; return how many. Run before ``make_sorts_stable``."""
    from iree.compiler import ir

    marked = 0
    for sort in _sorts(ir, module):
        keys = sort_keys(ir, sort)
        if keys is None:
            continue
        text = ",".join(f"{key.operand},{key.code}" for key in keys)
        with sort.context:
            sort.location = ir.Location.name(TAG + text, childLoc=sort.location)
        marked += 1
    return marked


def keep_marked_sorts_whole(module: Any) -> int:
    """Put a ``stablehlo.optimization_barrier`` between each marked sort and the
    ``stablehlo.slice`` ops that read its results; return how many sorts.

    IREE's input pipeline turns a sort of values and an iota whose results are sliced to
    their first ``k`` (``lax.top_k``'s decomposition) into ``iree_linalg_ext.topk``, which
    takes the comparator as it is: made stable, ``not (r > l)`` is ``l >= r``, under which
    topk keeps the later of equal values first; and topk takes n k comparisons. Behind the
    barrier the sort stays a sort, which ``abi/sort_calls.c`` does. When every use of its
    results is a slice from 0 with stride 1 along the sort dimension, the sort is also
    marked ``rw.first:K`` (K the largest limit), so that the C side selects the first K
    positions instead of sorting the whole line (``first_of_location``)."""
    from iree.compiler import ir

    kept = 0
    for sort in _sorts(ir, module):
        if keys_of_location(str(sort.location)) is None:
            continue
        results = list(sort.results)
        if not any(use.owner.name == "stablehlo.slice" for r in results for use in r.uses):
            continue
        wanted = first_read(ir, sort, results)
        if wanted is not None:
            with sort.context:
                sort.location = ir.Location.name(f"{FIRST}{wanted}", childLoc=sort.location)
            # Its operands behind a barrier too, with K beside them: the pipeline's CSE would
            # otherwise merge it with a sort of the same operands (a top_k of another k of
            # the same array, or a full sort), keeping one location and so one K for both.
            operands = list(sort.operands)
            with ir.InsertionPoint(sort), sort.location:
                scalar = ir.RankedTensorType.get([], ir.IntegerType.get_signless(64))
                k = ir.Operation.create(
                    "stablehlo.constant",
                    results=[scalar],
                    attributes={
                        "value": ir.DenseElementsAttr.get_splat(
                            scalar, ir.IntegerAttr.get(scalar.element_type, wanted)
                        )
                    },
                ).result
                shield = ir.Operation.create(
                    "stablehlo.optimization_barrier",
                    results=[o.type for o in [*operands, k]],
                    operands=[*operands, k],
                )
            for position in range(len(operands)):
                sort.operands[position] = shield.results[position]
        with ir.InsertionPoint.after(sort), sort.location:
            barrier = ir.Operation.create(
                "stablehlo.optimization_barrier",
                results=[r.type for r in results],
                operands=results,
            )
        for old, new in zip(results, barrier.results, strict=True):
            old.replace_all_uses_with(new)
            barrier.operands[results.index(old)] = old  # the barrier itself reads the sort
        kept += 1
    return kept


def first_read(ir, sort, results) -> int | None:
    """How many first positions along the sort dimension the uses of ``results`` read, when
    every use is a ``stablehlo.slice`` from 0 with stride 1 along it; else None."""
    dimension = ir.IntegerAttr(sort.attributes["dimension"]).value
    wanted = 0
    for result in results:
        for use in result.uses:
            owner = use.owner
            if owner.name != "stablehlo.slice":
                return None
            start = list(ir.DenseI64ArrayAttr(owner.attributes["start_indices"]))
            limit = list(ir.DenseI64ArrayAttr(owner.attributes["limit_indices"]))
            strides = list(ir.DenseI64ArrayAttr(owner.attributes["strides"]))
            if start[dimension] != 0 or strides[dimension] != 1:
                return None
            wanted = max(wanted, limit[dimension])
    return wanted or None


def first_of_location(location: str) -> int | None:
    """The K of a ``rw.first:K`` location (printed); None without one."""
    found = FIRST_PATTERN.search(location)
    return int(found.group(1)) if found else None


def keys_of_location(location: str) -> list[SortKey] | None:
    """The keys a ``rw.sort`` location (printed) holds; None when it holds none."""
    found = TAG_PATTERN.search(location)
    if not found or not found.group(1):
        return None
    numbers = [int(n) for n in found.group(1).split(",")]
    return [SortKey(o, c) for o, c in zip(numbers[0::2], numbers[1::2], strict=True)]


def sort_keys(ir, sort) -> list[SortKey] | None:
    """The keys of a ``stablehlo.sort`` whose comparator jax wrote, in order; else None."""
    block = sort.regions[0].blocks[0]
    operations = [op.operation for op in block.operations]
    if not operations or operations[-1].name != "stablehlo.return":
        return None
    if len(operations[-1].operands) != 1:
        return None
    reader = _Reader(ir, list(block.arguments))
    return reader.chain(operations[-1].operands[0])


def _sorts(ir, module) -> list[Any]:
    return operations_named(module, "stablehlo.sort")


def _swap_uses(ir, block, left, right) -> None:
    """Every use of ``left`` in ``block`` becomes a use of ``right``, and the reverse."""
    with ir.InsertionPoint.at_block_begin(block):
        holder = ir.Operation.create("stablehlo.optimization_barrier", [left.type], [left])
    placeholder = holder.results[0]
    left.replace_all_uses_with(placeholder)
    holder.operands[0] = left  # the holder itself goes on using left until it is erased
    right.replace_all_uses_with(left)
    placeholder.replace_all_uses_with(right)
    holder.erase()


class _Reader:
    """Reads a comparator's ops back into keys (``chain``), or gives up (None)."""

    def __init__(self, ir, arguments: list[Any]) -> None:
        self.ir = ir
        self.arguments = arguments

    def chain(self, value) -> list[SortKey] | None:
        """``lt`` or ``lt or (eq and rest)``, with ``eq`` comparing what ``lt`` compares."""
        op = self._owner(value)
        if op is None:
            return None
        if op.name == "stablehlo.compare":
            key = self._key(op)
            return None if key is None else [key[0]]
        if op.name != "stablehlo.or" or len(op.operands) != 2:
            return None
        for first, second in (op.operands, reversed(list(op.operands))):
            less = self._owner(first)
            both = self._owner(second)
            if less is None or both is None or less.name != "stablehlo.compare":
                continue
            key = self._key(less)
            if key is None or both.name != "stablehlo.and" or len(both.operands) != 2:
                continue
            for equal, rest in (both.operands, reversed(list(both.operands))):
                if self._equal_of(self._owner(equal), key[1]):
                    tail = self.chain(rest)
                    if tail is not None:
                        return [key[0], *tail]
        return None

    def _key(self, compare) -> tuple[SortKey, tuple[Any, ...]] | None:
        """A strict compare (LT, GT) of one operand's left and right values: its key, and
        what an EQ of the same key must compare (``_equal_of``)."""
        direction, kind = self._compare_words(compare)
        if direction not in ("LT", "GT"):
            return None
        left, right = (self._source(v) for v in compare.operands)
        if left is None or right is None or left[1:] != right[1:]:
            return None
        if left[0] // 2 != right[0] // 2 or left[0] == right[0]:
            return None
        operand, part, canonical = left[0] // 2, left[1], left[2]
        descending = (left[0] % 2 == 1) != (direction == "GT")
        element = self._element(self.arguments[left[0]].type, part)
        if element is None:
            return None
        if kind == "SIGNED" and element.startswith("i") and element != "i1":
            code = SIGNED
        elif kind == "UNSIGNED" and (element.startswith("ui") or element == "i1"):
            code = UNSIGNED
        elif kind == "TOTALORDER" and element in FLOATS:
            code = FLOATS[element]
        else:
            return None
        if canonical and code not in FLOATS.values():
            return None
        code |= (CANONICAL if canonical else 0) | (DESCENDING if descending else 0)
        code |= part << PART_SHIFT
        return SortKey(operand, code), (operand, part, canonical, kind)

    def _equal_of(self, compare, facts: tuple[Any, ...]) -> bool:
        if compare is None or compare.name != "stablehlo.compare":
            return False
        direction, kind = self._compare_words(compare)
        if direction != "EQ" or kind != facts[3]:
            return False
        sources = [self._source(v) for v in compare.operands]
        if any(s is None for s in sources):
            return False
        indices = sorted(s[0] for s in sources if s is not None)
        wanted = [2 * facts[0], 2 * facts[0] + 1]
        return indices == wanted and all(s is not None and s[1:] == facts[1:3] for s in sources)

    def _source(self, value) -> tuple[int, int, bool] | None:
        """(block argument, part, made canonical) of a compared value: an argument, its
        real (1) or imaginary (2) part, either made canonical as jax does it."""
        plain = self._part_of(value)
        if plain is not None:
            return (*plain, False)
        outer = self._owner(value)  # select(x != x, NaN, select(x == 0, 0, x))
        if outer is None or outer.name != "stablehlo.select":
            return None
        is_nan, nan, inner_value = outer.operands
        inner = self._owner(inner_value)
        if inner is None or inner.name != "stablehlo.select":
            return None
        is_zero, zero, x = inner.operands
        source = self._part_of(x)
        if source is None:
            return None
        if not self._compares(is_nan, "NE", x, x) or not self._compares(is_zero, "EQ", x, zero):
            return None
        if not self._constant(nan, lambda v: v != v) or not self._constant(zero, lambda v: v == 0):
            return None
        return (*source, True)

    def _part_of(self, value) -> tuple[int, int] | None:
        if value in self.arguments:
            return self.arguments.index(value), 0
        op = self._owner(value)
        if op is not None and op.name in ("stablehlo.real", "stablehlo.imag"):
            if op.operands[0] in self.arguments:
                part = 1 if op.name == "stablehlo.real" else 2
                return self.arguments.index(op.operands[0]), part
        return None

    def _compares(self, value, direction: str, left, right) -> bool:
        op = self._owner(value)
        if op is None or op.name != "stablehlo.compare":
            return False
        return self._compare_words(op)[0] == direction and list(op.operands) == [left, right]

    def _constant(self, value, test) -> bool:
        op = self._owner(value)
        if op is None or op.name != "stablehlo.constant":
            return False
        attribute = constant_attribute(self.ir, op)
        if not isinstance(attribute, self.ir.DenseFPElementsAttr) or not attribute.is_splat:
            return False
        return bool(test(self.ir.FloatAttr(attribute.get_splat_value()).value))

    def _element(self, type_, part: int) -> str | None:
        element = str(self.ir.RankedTensorType(type_).element_type)
        if part == 0:
            return None if element.startswith("complex") else element
        inner = re.fullmatch(r"complex<(\w+)>", element)
        return inner.group(1) if inner else None

    def _compare_words(self, compare) -> tuple[str, str]:
        """The direction and the comparison type; without a type, StableHLO's default for
        the element type (SIGNED, UNSIGNED for unsigned and i1, FLOAT for floats), as in
        the comparator of ``lax.top_k`` of integers."""
        direction = str(compare.attributes["comparison_direction"]).split()[-1].rstrip(">")
        if "compare_type" in compare.attributes:
            return direction, str(compare.attributes["compare_type"]).split()[-1].rstrip(">")
        element = str(self.ir.RankedTensorType(compare.operands[0].type).element_type)
        if element.startswith("ui") or element == "i1":
            return direction, "UNSIGNED"
        if element.startswith("i"):
            return direction, "SIGNED"
        return direction, "FLOAT"

    def _owner(self, value):
        """The op that defines ``value``; None for a block argument."""
        if not isinstance(value, self.ir.OpResult):
            return None
        return value.owner
