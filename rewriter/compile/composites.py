"""jax's composites as their decompositions: ``chlo.top_k`` a stable sort, the others
inlined where they stand, as XLA inlines them.

jax exports ``lax.top_k`` as ``stablehlo.composite "chlo.top_k"`` whose decomposition is a
stable sort of the operand and an iota along the last dimension, descending, then the first
``k`` of each row: of equal values, the one of lower index comes first. IREE's input
pipeline turns the composite into its own ``iree_linalg_ext.topk``, which keeps the one of
higher index first among equal values (``lax.top_k`` of ``[3, 1, 3, 3]`` with k = 2 gave
indices 3, 2 where jax gives 0, 2). Both paths call the decomposition instead, so that
top_k is the sort jax wrote: the stable sort of ``sorts.py`` (``abi/sort_calls.c``'s
selection of the first k on both paths, or the ``rw_sort`` import on the IREE path).

jax exports ``acos``, ``acosh``, ``asin``, ``asinh``, ``atanh``, ``cosh``, ``sinh`` and
``erf`` as composites too, and most jnp functions as private functions it calls; XLA
inlines every decomposition and every call before its simplifier runs, and its folds
reach across where the fixes did not: ``jnp.arccosh(x + 1)`` subtracts 1 in its
decomposition, which XLA folds to ``x`` (8 values of 100 were a unit or more off on both
paths). ``inline_calls``, the first of the input fixes, clones each callee's body in place
of its call or composite, until none is left (but ``chlo.top_k``'s, which
``call_decompositions`` takes, and ``chlo.erf``, which ``xla_math`` writes as XLA computes
it); the functions it leaves uncalled are the pipelines' to drop.
"""

from __future__ import annotations

import re
from typing import Any

from .mlir_walk import operations_named, remap_operands

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


# Composites left for a fix of their own: top_k (call_decompositions), erf (xla_math); a
# call of one's decomposition (``call_decompositions``' of top_k) is kept too.
KEPT = ("chlo.top_k", "chlo.erf")


def inline_calls(module: Any) -> int:
    """Replace, in the ``iree.compiler.ir`` module's public functions, every
    ``stablehlo.composite`` but those of ``KEPT``, and every ``func.call`` of a function the
    module defines (but a kept composite's decomposition), by a copy of the callee's body,
    those it holds inlined in turn, as XLA inlines them; drop the private functions no call
    names any more; return how many calls and composites were inlined."""
    from iree.compiler import ir

    inliner = _Inliner(ir, module)
    for function in list(inliner.functions.values()):
        if not _private(function):  # main, and the like
            inliner.inline_in(function)
    inliner.drop_uncalled()
    return inliner.count


class _Inliner:
    """Inlines the calls and composites of a module's functions, recursively."""

    def __init__(self, ir: Any, module: Any):
        self.ir = ir
        self.module = module
        self.functions = {
            ir.StringAttr(op.attributes["sym_name"]).value: op
            for op in module.body.operations
            if op.operation.name == "func.func"
        }
        self.inlined: set[str] = set()
        self.count = 0

    def callee(self, operation: Any) -> Any:
        """The function to inline in place of ``operation``, or None."""
        if operation.name not in ("func.call", "stablehlo.composite"):
            return None
        ir = self.ir
        name = callee_name(ir, operation)
        if operation.name == "stablehlo.composite":
            if ir.StringAttr(operation.attributes["name"]).value in KEPT:
                return None
        elif name.startswith(KEPT):
            return None
        function = self.functions.get(name)
        if function is None or not function.regions[0].blocks:
            return None
        self.inlined.add(name)
        return function

    def inline_in(self, function: Any) -> None:
        """Inline every call and composite of ``function``'s body (nested regions too)."""
        for operation in operations_named(function, "func.call", "stablehlo.composite"):
            callee = self.callee(operation)
            if callee is not None:
                self._inline(operation, callee.regions[0].blocks[0])

    def _inline(self, call: Any, block: Any) -> list[Any]:
        """Clone ``block``'s ops before ``call``, its arguments read as the call's
        operands (a call or composite among them inlined in turn), give the call's uses
        what the block returns, and return that."""
        ir = self.ir
        self.count += 1
        mapping = dict(zip(block.arguments, call.operands, strict=True))
        returned: list[Any] = []
        with ir.InsertionPoint(call), call.location:
            for op in block.operations:
                if op.operation.name == "func.return":
                    returned = [mapping.get(value, value) for value in op.operands]
                    break
                clone = op.operation.clone()
                remap_operands(clone, mapping)
                for old, new in zip(op.results, clone.results, strict=True):
                    mapping[old] = new
                callee = self.callee(clone)
                if callee is not None:
                    results = self._inline(clone, callee.regions[0].blocks[0])
                    for old, new in zip(op.results, results, strict=True):
                        mapping[old] = new
        for old, new in zip(call.results, returned, strict=True):
            old.replace_all_uses_with(new)
        call.erase()
        return returned

    def drop_uncalled(self) -> None:
        """Erase the private functions inlined that nothing names any more (a symbol is
        named in the module's text, where its definition names it once): the fixes would
        rewrite them for nothing."""
        if not self.inlined:
            return
        text = self.module.operation.get_asm(large_elements_limit=16)  # names, no data
        for name in self.inlined:
            function = self.functions[name]
            if _private(function) and len(re.findall(rf"@{re.escape(name)}(?![\w.$-])", text)) == 1:
                function.erase()


def _private(function: Any) -> bool:
    attributes = function.attributes
    return "sym_visibility" in attributes and str(attributes["sym_visibility"]) == '"private"'


def callee_name(ir: Any, operation: Any) -> str:
    """The function a ``func.call`` calls, or a composite's decomposition."""
    name = "callee" if operation.name == "func.call" else "decomposition"
    return ir.FlatSymbolRefAttr(operation.attributes[name]).value
