"""``chlo.top_k`` as jax defines it: the composite's own decomposition, a stable sort.

jax exports ``lax.top_k`` as ``stablehlo.composite "chlo.top_k"`` whose decomposition is a
stable sort of the operand and an iota along the last dimension, descending, then the first
``k`` of each row: of equal values, the one of lower index comes first. IREE's input
pipeline turns the composite into its own ``iree_linalg_ext.topk``, which keeps the one of
higher index first among equal values (``lax.top_k`` of ``[3, 1, 3, 3]`` with k = 2 gave
indices 3, 2 where jax gives 0, 2). Both paths call the decomposition instead, so that
top_k is the sort jax wrote: the stable sort of ``sorts.py`` (``abi/sort_calls.c``'s
selection of the first k on both paths, or the ``rw_sort`` import on the IREE path).
"""

from __future__ import annotations

from typing import Any

from .mlir_walk import operations_named

DECOMPOSED = frozenset({"chlo.top_k"})


def call_decompositions(module: Any) -> int:
    """Replace, in the ``iree.compiler.ir`` module, every ``stablehlo.composite`` named in
    ``DECOMPOSED`` by a ``func.call`` of its decomposition; return how many."""
    from iree.compiler import ir

    found = [
        composite
        for composite in operations_named(module, "stablehlo.composite")
        if ir.StringAttr(composite.attributes["name"]).value in DECOMPOSED
    ]
    for composite in found:
        callee = composite.attributes["decomposition"]
        with ir.InsertionPoint(composite), composite.location:
            call = ir.Operation.create(
                "func.call",
                results=[result.type for result in composite.results],
                operands=list(composite.operands),
                attributes={"callee": callee},
            )
        for old, new in zip(composite.results, call.results, strict=True):
            old.replace_all_uses_with(new)
        composite.erase()
    return len(found)
