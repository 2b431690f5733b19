"""Operand order of ``stablehlo.dot_general``: the one that copies fewer elements into the
layout of a product.

IREE's StableHLO input pipeline lowers a ``dot_general`` to ``linalg.batch_matmul`` (or
``matmul``) of ``[batch, M, K] x [batch, K, N]`` operands, and transposes each operand that
is not stored in that order into a new buffer first. The second product of self-attention
(``einsum("bhqk,bkhd->bqhd", p, v)``) is written by jax as ``dot_general(v, p)``: ``p``, the
large softmax, contracts over its last dimension, so it is the right operand in the wrong
order: IREE would copy its transpose in full before the product, fused with the softmax's
normalization into a loop of gathers and a division per element (``perf``: a third of the
CPU time in the module's own loops of an f64 attention block at 4 x 128 x 128). With ``p``
in place the normalization runs along contiguous rows, its
reciprocal once a row. ``dot_general(p, v)`` needs no copy of ``p``, only of ``v`` and of the
small result, which a ``stablehlo.transpose`` puts back in the order of the original.

Every product (f32 and f64 alike: the same loops) is swapped when that copies fewer
elements, counting the transposed result. Each element of the result is still the sum of
the same products, as under any order of the summands a BLAS chooses.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from . import contexts
from .mlir_walk import operations_named

_FIELD = re.compile(r"(lhs|rhs)_(batching|contracting)_dimensions = \[([0-9, ]*)\]")


@dataclass(frozen=True)
class Dimensions:
    """One operand's dimensions in a product: batch, contracting, and the others (free)."""

    rank: int
    batch: tuple[int, ...]
    contracting: tuple[int, ...]

    @property
    def free(self) -> tuple[int, ...]:
        return tuple(d for d in range(self.rank) if d not in self.batch + self.contracting)

    def in_place_as(self, side: str) -> bool:
        """Whether the operand is stored as IREE's product takes it on ``side``: the left
        ``[batch, free, contracting]``, the right ``[batch, contracting, free]``."""
        middle = self.free + self.contracting if side == "lhs" else self.contracting + self.free
        return self.batch + middle == tuple(range(self.rank))


def _dimensions(text: str, rank_lhs: int, rank_rhs: int) -> tuple[Dimensions, Dimensions]:
    found: dict[tuple[str, str], tuple[int, ...]] = {}
    for side, kind, listed in _FIELD.findall(text):
        found[side, kind] = tuple(int(d) for d in listed.split(",") if d.strip())
    return tuple(  # type: ignore[return-value]
        Dimensions(rank, found.get((side, "batching"), ()), found.get((side, "contracting"), ()))
        for side, rank in (("lhs", rank_lhs), ("rhs", rank_rhs))
    )


def _copied(lhs: Dimensions, lhs_size: int, rhs: Dimensions, rhs_size: int) -> int:
    """Elements transposed before the product of ``lhs`` by ``rhs``."""
    return lhs_size * (not lhs.in_place_as("lhs")) + rhs_size * (not rhs.in_place_as("rhs"))


def swap_products(module: Any) -> int:
    """Swap, in place, the operands of every ``stablehlo.dot_general`` of the
    ``iree.compiler.ir`` ``module`` (in its context) for which fewer elements are copied,
    the result transposed back; return how many."""
    from iree.compiler import ir

    count = 0
    for operation in operations_named(module, "stablehlo.dot_general"):
        if "algorithm" in operation.attributes:  # one that names each side's precision
            continue
        left, right = operation.operands[0], operation.operands[1]
        types = [ir.RankedTensorType(v.type) for v in (left, right, operation.results[0])]
        if not all(t.has_static_shape for t in types):
            continue
        numbers = str(operation.attributes["dot_dimension_numbers"])
        lhs, rhs = _dimensions(numbers, types[0].rank, types[1].rank)
        sizes = [math.prod(t.shape) for t in types]
        now = _copied(lhs, sizes[0], rhs, sizes[1])
        if _copied(rhs, sizes[1], lhs, sizes[0]) + sizes[2] >= now:
            continue
        count += 1
        batch = len(lhs.batch)
        shape = list(types[2].shape)
        left_free, right_free = shape[batch : batch + len(lhs.free)], shape[batch + len(lhs.free) :]
        swapped_type = ir.RankedTensorType.get(
            shape[:batch] + right_free + left_free, types[2].element_type, loc=operation.location
        )
        attributes = {"dot_dimension_numbers": ir.Attribute.parse(_swapped_numbers(numbers))}
        if "precision_config" in operation.attributes:
            precisions = ir.ArrayAttr(operation.attributes["precision_config"])
            attributes["precision_config"] = ir.ArrayAttr.get(list(reversed(list(precisions))))
        order = [*range(batch)]
        order += [batch + len(right_free) + i for i in range(len(left_free))]
        order += [batch + i for i in range(len(right_free))]
        with ir.InsertionPoint(operation), operation.location:
            product = ir.Operation.create(
                "stablehlo.dot_general",
                results=[swapped_type],
                operands=[right, left],
                attributes=attributes,
            )
            back = ir.Operation.create(
                "stablehlo.transpose",
                results=[types[2]],
                operands=[product.result],
                attributes={"permutation": ir.Attribute.parse(f"array<i64: {_listed(order)}>")},
            )
        operation.results[0].replace_all_uses_with(back.result)
        operation.erase()
    return count


def _listed(values: list[int]) -> str:
    return ", ".join(map(str, values))


def _swapped_numbers(text: str) -> str:
    """``#stablehlo.dot<...>`` with ``lhs`` and ``rhs`` exchanged."""
    return re.sub(r"\b(lhs|rhs)_", lambda m: "rhs_" if m.group(1) == "lhs" else "lhs_", text)


def cheaper_products(text: str) -> str:
    """``text`` with ``swap_products`` applied; ``text`` itself when it changes nothing."""
    if "stablehlo.dot_general" not in text:
        return text
    from iree.compiler import ir

    context = contexts.context()
    module = ir.Module.parse(text, context)
    with context:
        if not swap_products(module):
            return text
    return module.operation.get_asm(enable_debug_info=True)
