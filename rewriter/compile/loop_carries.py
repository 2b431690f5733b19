"""Loops that update their carried buffer in place, as XLA's while loops do.

One-shot bufferization gives a loop's carried tensor a buffer of its own (a copy of the
initial value, since that may be the caller's) and then, for an elementwise update of the
carry (``y = y * 2`` in a ``lax.fori_loop``, jax's while loops, the benchmark's loop
carrying a token), a new buffer each iteration: ``memref.alloc`` in the body, the
update written into it and yielded. IREE's elementwise fusion turns an update written
into its own operand back into one written into a new tensor, so the tensors cannot say
it; after bufferization the loop is changed here: the update is written into the carried
buffer itself and that buffer yielded, so that the loop allocates nothing per iteration
(XLA's buffer assignment does the same: one copy of the argument, then the update in
place). Each iteration's read of an element happens before the write of that element:
the update's maps are the identity, every dimension parallel.

An ``scf.while`` (a loop whose condition reads the data) had more: its condition region
copied the carried buffer every iteration before handing it on to the body. When that
region only reads the buffer (through views or not), it hands on the buffer itself.

Only where that is safe: a loop whose carried buffer is read by nothing in the body but
that one elementwise ``linalg.generic``, and starts as a buffer allocated in the
function that nothing reads or views after the loop, nor carries as another value (the
bufferizer's copy of the initial value): the first iteration then overwrites a buffer no
one else holds.
"""

from __future__ import annotations

from typing import Any

from . import contexts
from .library_calls import iterator_types
from .mlir_walk import operations_named

# Ops before a loop that may use the buffer it starts with: they write or read it and are
# over before the loop starts, and make no view of it.
_HARMLESS_BEFORE = ("memref.copy", "linalg.generic", "linalg.fill", "linalg.copy")


def carry_in_place(text: str) -> str:
    """``text`` (a bufferized module) with each elementwise update of an ``scf.for``'s or
    ``scf.while``'s carried buffer written into that buffer, and the buffer allocated for
    it (and a while loop's copy of it) removed."""
    from iree.compiler import ir

    module = ir.Module.parse(text, contexts.context())
    loops = operations_named(module, "scf.for", "scf.while")
    changed = 0
    for loop in loops:
        changed += _in_place(ir, loop) if loop.name == "scf.for" else _while_in_place(ir, loop)
    if not changed:
        return text
    return module.operation.get_asm(enable_debug_info=True)


def _in_place(ir, loop) -> int:
    """Rewrite the in-place updates of ``loop``'s carried buffers; return how many."""
    body = loop.regions[0].blocks[0]
    terminator = _last(ir, body)
    if terminator is None or terminator.name != "scf.yield":
        return 0
    # scf.for's operands: lower bound, upper bound, step, then the initial values.
    initial = list(loop.operands)[3:]
    carried = list(body.arguments)[1:]
    rewritten = 0
    for index, (start, argument) in enumerate(zip(initial, carried, strict=True)):
        if not isinstance(argument.type, ir.MemRefType):
            continue
        update = _elementwise_update(ir, argument, terminator.operands[index], terminator)
        if update is None or not _owned_before(ir, start, loop):
            continue
        _write_into(argument, update, terminator, index)
        rewritten += 1
    return rewritten


def _write_into(argument, update, terminator, index: int) -> None:
    """The elementwise ``update`` writes into the carried buffer ``argument`` itself, which
    the loop's ``terminator`` hands on at ``index``; its own allocation goes."""
    generic, allocation = update
    generic.operands[len(generic.operands) - 1] = argument
    terminator.operands[index] = argument
    allocation.erase()


def _while_in_place(ir, loop) -> int:
    """The same for an ``scf.while``, whose condition region bufferization also made copy
    the carried buffer every iteration before handing it on: when that region only reads
    it, it hands on the buffer itself."""
    before, after = loop.regions[0].blocks[0], loop.regions[1].blocks[0]
    condition, terminator = _last(ir, before), _last(ir, after)
    if condition is None or condition.name != "scf.condition":
        return 0
    if terminator is None or terminator.name != "scf.yield":
        return 0
    rewritten = 0
    # The condition may hand the body fewer values than the loop carries (jax's while loop
    # of ``betainc`` drops its flag), so a position may hold another value in each region:
    # ``_handed_on_copy`` ties the body's argument to the condition's of the same position.
    for index in range(min(len(before.arguments), len(after.arguments))):
        start = loop.operands[index]
        checked, argument = before.arguments[index], after.arguments[index]
        if not isinstance(argument.type, ir.MemRefType):
            continue
        copy = _handed_on_copy(ir, checked, condition.operands[1 + index], condition)
        update = _elementwise_update(ir, argument, terminator.operands[index], terminator)
        if copy is None or update is None or not _owned_before(ir, start, loop):
            continue
        condition.operands[1 + index] = checked
        for operation in copy:
            operation.erase()
        _write_into(argument, update, terminator, index)
        rewritten += 1
    return rewritten


# Ops of a while loop's condition region that only read a buffer or make a view of it.
_READS = ("memref.cast", "memref.subview", "memref.load", "memref.copy", "linalg.generic")


def _handed_on_copy(ir, checked, handed, condition) -> list[Any] | None:
    """The ``memref.copy`` and ``memref.alloc`` that make ``handed``, the condition
    region's copy of its argument ``checked``, when the region only reads ``checked``
    (through views or not); else None."""
    allocation = _defining_alloc(ir, handed)
    if allocation is None or handed.type != checked.type:
        return None
    users = [use.owner.operation for use in handed.uses]
    copies = [op for op in users if _name(op) == "memref.copy"]
    if len(users) != 2 or len(copies) != 1 or condition not in users:
        return None
    if copies[0].operands[1] != handed or not _views_of(ir, copies[0].operands[0], checked):
        return None
    return [copies[0], allocation] if _only_read(ir, checked) else None


def _views_of(ir, value, buffer) -> bool:
    """Whether ``value`` is ``buffer`` or a ``memref.cast`` of it."""
    while value != buffer:
        if not isinstance(value, ir.OpResult) or _name(value.owner) != "memref.cast":
            return False
        value = value.owner.operation.operands[0]
    return True


def _only_read(ir, buffer) -> bool:
    """Whether every use of ``buffer`` and of its views reads it."""
    for use in buffer.uses:
        owner = use.owner.operation
        kind = _name(owner)
        if kind == "scf.condition" or kind not in _READS:
            return False
        if kind in ("memref.cast", "memref.subview"):
            if not _only_read(ir, owner.results[0]):
                return False
        elif kind == "memref.copy" and use.operand_number != 0:
            return False
        elif kind == "linalg.generic" and use.operand_number >= _inputs(ir, owner):
            return False
    return True


def _inputs(ir, generic) -> int:
    """How many of a ``linalg.generic``'s operands are inputs."""
    return list(ir.DenseI32ArrayAttr(generic.attributes["operandSegmentSizes"]))[0]


def _elementwise_update(ir, argument, yielded, terminator) -> tuple[Any, Any] | None:
    """The ``linalg.generic`` that reads ``argument`` (its one use) elementwise into a
    buffer allocated in the loop body, which the loop yields in its place (its only other
    use); and that allocation. None when the loop body is anything else."""
    argument_uses = list(argument.uses)
    if len(argument_uses) != 1:
        return None
    generic = argument_uses[0].owner.operation
    if generic.name != "linalg.generic" or len(generic.results) != 0:
        return None
    allocation = _defining_alloc(ir, yielded)
    if allocation is None or yielded.type != argument.type:
        return None
    operands = list(generic.operands)
    if operands[-1] != yielded or operands.count(yielded) != 1:
        return None  # not written there, or not the generic's only output
    segments = list(ir.DenseI32ArrayAttr(generic.attributes["operandSegmentSizes"]))
    if segments[1] != 1:
        return None
    holders = {_name(use.owner) for use in yielded.uses}
    if len(list(yielded.uses)) != 2 or holders != {"linalg.generic", "scf.yield"}:
        return None
    if any(use.owner.operation not in (terminator, generic) for use in yielded.uses):
        return None
    if any(kind != "parallel" for kind in iterator_types(generic)):
        return None
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(generic.attributes["indexing_maps"])]
    position = argument_uses[0].operand_number
    if not (_identity(maps[position]) and _identity(maps[-1])):
        return None
    block = generic.regions[0].blocks[0]
    if list(block.arguments[-1].uses):
        return None  # the body reads what the new buffer held
    return generic, allocation


def _defining_alloc(ir, value) -> Any | None:
    """The ``memref.alloc`` that made ``value``, or None."""
    if not isinstance(value, ir.OpResult):
        return None
    owner = value.owner.operation
    return owner if _name(owner) == "memref.alloc" else None


def _owned_before(ir, start, loop) -> bool:
    """``start`` is a buffer allocated in the loop's block whose every other use is a
    harmless op before the loop: no one holds it but the loop once the loop starts."""
    if _defining_alloc(ir, start) is None:
        return False
    block = loop.block
    carried = 0
    for use in start.uses:
        owner = use.owner.operation
        if owner == loop:
            carried += 1  # twice would make two carried values one buffer
            continue
        if _name(owner) not in _HARMLESS_BEFORE or owner.block != block:
            return False
        if not owner.is_before_in_block(loop):
            return False
    return carried == 1


def _identity(affine_map) -> bool:
    """Whether the map is ``(d0, ..., dn) -> (d0, ..., dn)``."""
    results = list(affine_map.results)
    if len(results) != affine_map.n_dims or affine_map.n_symbols:
        return False
    return str(affine_map) == str(
        type(affine_map).get_identity(affine_map.n_dims, affine_map.context)
    )


def _last(ir, block) -> Any | None:
    """The last operation of ``block``, or None when it is empty."""
    operations = list(block.operations)
    return operations[-1].operation if operations else None


def _name(operation) -> str:
    return str(operation.operation.name)
