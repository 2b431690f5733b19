"""A strided slice that a gather or a reverse reads is made in a dispatch of its own.

IREE 3.13 fuses a ``stablehlo.slice`` with a stride over 1 into the dispatch of the ops
that read its result, as a strided view of its operand's buffer. A gather or a reverse
reads elements by computed indices, which IREE's CPU code generation vectorizes as
``vector.gather``, and a ``vector.gather`` from a strided view does not lower to LLVM:
"LLVM Translation failed for operation: builtin.unrealized_conversion_cast". So
``x[:, ::2][i]``, ``jnp.take_along_axis(x[:, ::2], ...)`` and ``x[:, 1:9:3].T[::-1]`` failed
to compile on the IREE path (the compiled path lowers the views its own way and runs them).
The reverse of a strided slice itself (``x[::-2]``) is a slice of a reverse already
(``compile/reversed_slices.py``); what is left is a strided slice read by a gather or a
reverse through other views (transposes, reshapes, broadcasts, slices, reverses), here or
in a function it is passed to (jax's ``take_along_axis`` is a private function; IREE
inlines it).

Such a slice's result goes through a ``stablehlo.optimization_barrier``, which IREE does not
fuse across: the slice writes its elements to a buffer of their own, which the gather reads.
The barrier returns its operand: the values are the same.
"""

from __future__ import annotations

from typing import Any

from ..compile.mlir_walk import operations_named

# Ops IREE fuses as views of their operand, and ops that read their first operand by
# computed indices.
VIEWS = frozenset(
    {
        "stablehlo.transpose",
        "stablehlo.reshape",
        "stablehlo.broadcast_in_dim",
        "stablehlo.slice",
        "stablehlo.reverse",
    }
)
INDEXED_READERS = frozenset({"stablehlo.gather", "stablehlo.reverse"})


def strided_slices_apart(module: Any) -> int:
    """Put a barrier on the result of every strided ``stablehlo.slice`` of the
    ``iree.compiler.ir`` ``module`` (in its context) that a gather or a reverse reads
    through views (the module's doc); return how many."""
    from iree.compiler import ir

    functions = ir.SymbolTable(module.operation)
    found = [
        operation
        for operation in operations_named(module, "stablehlo.slice")
        if any(stride != 1 for stride in ir.DenseI64ArrayAttr(operation.attributes["strides"]))
        and _read_by_index(ir, functions, operation.results[0])
    ]
    for operation in found:
        result = operation.results[0]
        with ir.InsertionPoint(operation), operation.location:
            barrier = ir.Operation.create(
                "stablehlo.optimization_barrier", results=[result.type], operands=[result]
            )
        barrier.move_after(operation)
        result.replace_all_uses_with(barrier.results[0])
        barrier.operands[0] = result  # the line above made it read itself
    return len(found)


def _read_by_index(ir: Any, functions: Any, value: Any) -> bool:
    """Whether a gather or a reverse reads ``value``, directly, through views or as the
    argument of a function of ``functions`` (the module's symbol table) it is passed to."""
    pending, seen = [value], set()
    while pending:
        current = pending.pop()
        for use in current.uses:
            owner, number = use.owner.operation, use.operand_number
            if owner.name == "func.call":
                callee = ir.FlatSymbolRefAttr(owner.attributes["callee"]).value
                blocks = functions[callee].regions[0].blocks
                if len(blocks) == 0:  # an import: no body IREE could fuse into
                    continue
                followed = blocks[0].arguments[number]
            elif number == 0 and owner.name in INDEXED_READERS:
                return True
            elif number == 0 and owner.name in VIEWS:
                followed = owner.results[0]
            else:
                continue
            if followed not in seen:
                seen.add(followed)
                pending.append(followed)
    return False
