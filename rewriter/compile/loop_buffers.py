"""``noalias`` on the buffers of split loops, where no buffer a loop writes is reached twice.

``async-parallel-for`` outlines each ``scf.parallel`` into a function
(``parallel_compute_fn``) that takes every buffer its body uses as pointers
(``parallel_loops.py``). LLVM knows nothing of where they point, so a loop that reads at
an index computed from data (a gather, ``x[i] + v``) may read what an earlier iteration
wrote, as far as LLVM knows: the loop vectorizer gives up ("cannot identify array bounds")
and the gather runs one element at a time, with its index arithmetic (the wrap of negative
indices and the clamp) scalar too. With its pointers ``noalias`` the loop is vectorized
(AVX-512 gathers here): a gather of 4,096,000 floats takes 3.0 ms instead of 5.1 on two
threads (``benchmarks/op_complexity.py gather``).

``noalias`` on a function's pointer says that memory written through it during the call is
reached through no other pointer of the function. ``separate_buffers`` checks that of the
generic-form module, before the loops are outlined: for every outermost ``scf.parallel``,
each buffer it writes (``memref.store``) is reached inside it through one value defined
outside it (the value that becomes one pointer of the outlined function). A buffer is
traced back through views (``subview``, ``expand_shape``, ...) to its allocation
(``memref.alloc``, distinct from any other), to a global (``memref.get_global``) or to
the arguments of the function (taken as one buffer: a caller may pass one array twice).
Anything else (a buffer carried by a loop, returned by a call, an op inside the loop
that takes a buffer and is neither a load, a store nor a view) makes the module fail the
check, and its loops keep their pointers as they are. Pointers that are only read may
point to the same memory: ``noalias`` says nothing of reads.
"""

from __future__ import annotations

import re
from typing import Any

from . import contexts
from .mlir_walk import operations_named

# Ops whose result is a view of their first operand: the same buffer.
_VIEWS = frozenset(
    {
        "memref.subview",
        "memref.expand_shape",
        "memref.collapse_shape",
        "memref.reinterpret_cast",
        "memref.cast",
        "memref.view",
        "memref.reshape",
        "memref.transpose",
        "memref.assume_alignment",
    }
)
# Ops that take a buffer and neither read nor write it.
_METADATA = frozenset({"memref.dim", "memref.extract_strided_metadata", "memref.rank"})
_ARGUMENTS = "arguments"


class _Unknown(Exception):
    """A buffer whose origin the check cannot tell, or an op that uses one unseen."""


def _root(ir: Any, value: Any) -> object:
    """What ``value`` (a memref) is a view of: an allocation op, a global's name or the
    function's arguments."""
    while True:
        owner = value.owner
        if isinstance(owner, ir.Block):
            parent = owner.owner
            if parent is None or parent.operation.name != "func.func":
                raise _Unknown(value)
            if owner != parent.operation.regions[0].blocks[0]:
                raise _Unknown(value)  # a block's argument: any buffer a branch passes
            return _ARGUMENTS
        name = owner.operation.name
        if name in _VIEWS:
            value = owner.operands[0]
        elif name in ("memref.alloc", "memref.alloca"):
            return owner
        elif name == "memref.get_global":
            return ("global", str(owner.attributes["name"]))
        else:
            raise _Unknown(value)


def _inside(ir: Any, value: Any, loop: Any) -> bool:
    """Whether ``value`` is defined inside ``loop`` (by an op or as a block argument)."""
    owner = value.owner
    operation = owner.owner if isinstance(owner, ir.Block) else owner
    while operation is not None:
        if operation.operation == loop.operation:
            return True
        operation = operation.parent
    return False


def _entry_value(ir: Any, value: Any, loop: Any) -> Any:
    """The value defined outside ``loop`` that ``value`` (a buffer used inside) is a view
    of: what becomes a pointer of the outlined function."""
    while _inside(ir, value, loop):
        owner = value.owner
        if isinstance(owner, ir.Block) or owner.operation.name not in _VIEWS:
            raise _Unknown(value)
        value = owner.operands[0]
    return value


def _loop_apart(ir: Any, loop: Any) -> bool:
    """Whether every buffer ``loop`` writes is reached through one outside value."""
    reached: dict[object, set[Any]] = {}
    written: set[object] = set()
    found: list[Any] = []

    def visit(operation):
        found.append(operation)
        return ir.WalkResult.ADVANCE

    loop.operation.walk(visit)
    try:
        for operation in found:
            name = operation.operation.name
            for position, operand in enumerate(operation.operands):
                if not isinstance(operand.type, ir.MemRefType):
                    if isinstance(operand.type, ir.UnrankedMemRefType) or "llvm.ptr" in str(
                        operand.type
                    ):
                        return False
                    continue
                if name in _VIEWS or name in _METADATA:
                    continue
                if name == "memref.load":
                    pass
                elif name == "memref.store" and position == 1:
                    pass
                else:
                    return False
                outside = _entry_value(ir, operand, loop)
                root = _root(ir, outside)
                reached.setdefault(root, set()).add(outside)
                if name == "memref.store":
                    written.add(root)
    except _Unknown:
        return False
    return all(len(reached[root]) == 1 for root in written)


def separate_buffers(text: str) -> bool:
    """Whether every outermost ``scf.parallel`` of the generic-form module ``text`` reaches
    each buffer it writes through one outside value (module docstring)."""
    if "scf.parallel" not in text:
        return True  # no loop to outline: nothing to parse
    from iree.compiler import ir

    context = contexts.context()
    with context, ir.Location.unknown():
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError:  # iree-opt's own output: not expected; the loops stay as they are
            return False
        loops = operations_named(module, "scf.parallel")
        outermost = [loop for loop in loops if not _nested(loop)]
        return all(_loop_apart(ir, loop) for loop in outermost)


def _nested(loop: Any) -> bool:
    parent = loop.parent
    while parent is not None:
        if parent.operation.name == "scf.parallel":
            return True
        parent = parent.parent
    return False


# The definition of a loop's outlined body in LLVM IR, up to its opening brace.
_BODY_DEFINITION = re.compile(
    r"^(define internal void @parallel_compute_fn[\w.]*\()([^\n]*)$", re.M
)


def noalias_bodies(text: str) -> str:
    """``text`` (LLVM IR) with every pointer of every outlined loop body ``noalias``: for a
    module ``separate_buffers`` passed."""

    def marked(match: re.Match[str]) -> str:
        return match.group(1) + re.sub(r"\bptr %", "ptr noalias %", match.group(2))

    return _BODY_DEFINITION.sub(marked, text)
