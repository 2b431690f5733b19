"""A short loop of elementwise updates of one buffer as one pass over it, the loop inside.

A ``lax.fori_loop`` of a few iterations that updates an array elementwise (the benchmark's
loop carrying a token, three doublings) is, once ``loop_carries.py`` has made the update
write in place, an ``scf.for`` around one ``linalg.generic``: each iteration a pass over
the whole buffer, after a pass copying the argument into it. At 4M elements (16 MB, past
every cache) each pass is a read and a write of memory: four of them, where the work is
three multiplies an element (``benchmarks/op_complexity.py``'s ``token_while``: 3.5 ms of
CPU, ``jax.jit`` 2.9 on two threads).

Each element's updates depend on that element only (the generic's maps are the identity,
every dimension parallel, and the loop does nothing else), so the loop can run inside the
generic, for each element in turn: one pass, which reads the copy's source directly (the
copy goes) and writes the buffer. Every element gets the same operations in the same order,
so the result is the same to the bit. Only loops of at most ``MOST_ITERATIONS`` iterations
of constant bounds are changed, which LLVM unrolls inside the pass and then vectorizes: a
loop left inside would keep the pass from being vectorized, slower than passes over a buffer
that stays in cache.
"""

from __future__ import annotations

from typing import Any

from . import contexts
from .library_calls import iterator_types
from .mlir_walk import operations_named

MOST_ITERATIONS = 8


def loops_inside_elements(text: str) -> str:
    """``text`` (a bufferized module, its loops' updates in place) with each short
    ``scf.for`` of one elementwise update of its carried buffer run inside the update, as
    the module doc says; unchanged without any."""
    from iree.compiler import ir

    context = contexts.context()
    module = ir.Module.parse(text, context)
    found = [loop for loop in operations_named(module, "scf.for") if _fusable(ir, loop)]
    if not found:
        return text
    with context:
        for loop in found:
            _fuse(ir, loop)
    return module.operation.get_asm(enable_debug_info=True)


def _constant(ir, value) -> int | None:
    """The value of an integer or index ``arith.constant``, else None."""
    if not isinstance(value, ir.OpResult) or value.owner.name != "arith.constant":
        return None
    attribute = value.owner.attributes["value"]
    return ir.IntegerAttr(attribute).value if isinstance(attribute, ir.IntegerAttr) else None


def _fusable(ir, loop) -> bool:
    """Whether ``loop`` is a short ``scf.for`` whose body is one elementwise
    ``linalg.generic`` writing its one carried buffer in place, and yielding it."""
    operands = list(loop.operands)
    if len(operands) != 4 or len(loop.results) != 1 or len(loop.regions[0].blocks) != 1:
        return False
    bounds = [_constant(ir, value) for value in operands[:3]]
    if None in bounds:
        return False
    lower, upper, step = bounds
    assert lower is not None and upper is not None and step is not None
    if step <= 0 or (upper - lower + step - 1) // step > MOST_ITERATIONS:
        return False
    body = loop.regions[0].blocks[0]
    operations = list(body.operations)
    if len(operations) != 2 or operations[0].operation.name != "linalg.generic":
        return False
    generic, terminator = operations[0].operation, operations[1].operation
    carried = body.arguments[1]
    if not isinstance(carried.type, ir.MemRefType) or list(terminator.operands) != [carried]:
        return False
    if len(generic.results) or any(kind != "parallel" for kind in iterator_types(generic)):
        return False
    inputs = list(ir.DenseI32ArrayAttr(generic.attributes["operandSegmentSizes"]))
    if inputs[1] != 1 or generic.operands[len(generic.operands) - 1] != carried:
        return False
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(generic.attributes["indexing_maps"])]
    start = operands[3]
    for position, operand in enumerate(generic.operands):
        if operand == carried and not _identity(maps[position]):
            return False
        if operand != carried and _view_of(ir, operand, start):
            return False  # it reads the buffer each iteration writes: not once per element
    # the carried buffer only used by the generic and the yield
    return all(use.owner.operation in (generic, terminator) for use in carried.uses)


# Ops whose result is a view of their first operand's memory.
_VIEWS = (
    "memref.cast",
    "memref.subview",
    "memref.reinterpret_cast",
    "memref.collapse_shape",
    "memref.expand_shape",
    "memref.transpose",
)


def _view_of(ir, value, buffer) -> bool:
    """Whether ``value`` is ``buffer`` or a view of it."""
    while value != buffer:
        if not isinstance(value, ir.OpResult) or value.owner.name not in _VIEWS:
            return False
        value = value.owner.operands[0]
    return True


def _identity(mapping) -> bool:
    """Whether the map is ``(d0, ..., dn) -> (d0, ..., dn)``."""
    identity = type(mapping).get_identity(mapping.n_dims, mapping.context)
    return not mapping.n_symbols and str(mapping) == str(identity)


def _fuse(ir, loop) -> None:
    """Run ``loop`` inside its generic, the generic in its place."""
    body = loop.regions[0].blocks[0]
    generic = list(body.operations)[0].operation
    induction, carried = body.arguments[0], body.arguments[1]
    start = loop.operands[3]
    source = _copied_from(ir, start, loop)
    inner = generic.regions[0].blocks[0]
    element_operations = list(inner.operations)
    end = element_operations[-1].operation
    count = len(generic.operands)
    carried_arguments = [
        inner.arguments[position]
        for position, operand in enumerate(generic.operands)
        if operand == carried
    ]
    element = inner.arguments[count - 1]  # the output's element, which the loop carries
    with ir.InsertionPoint(element_operations[0]):
        repeated = ir.Operation.create(
            "scf.for",
            results=[element.type],
            operands=[*list(loop.operands)[:3], element],
            regions=1,
            loc=loop.location,
        )
    locations = [loop.location, loop.location]
    block = repeated.regions[0].blocks.append(induction.type, element.type, arg_locs=locations)
    with ir.InsertionPoint(block):
        yielded = ir.Operation.create("scf.yield", operands=[end.operands[0]], loc=end.location)
    for operation in element_operations[:-1]:
        operation.operation.move_before(yielded)
    # The element read (or the output's, the same in place) is where the loop starts.
    for argument in (*carried_arguments, element):
        argument.replace_all_uses_with(block.arguments[1])
    repeated.operands[3] = carried_arguments[0] if carried_arguments else element
    induction.replace_all_uses_with(block.arguments[0])
    end.operands[0] = repeated.results[0]
    generic.move_before(loop)
    for position in range(count):
        if generic.operands[position] == carried:
            generic.operands[position] = start
    if source is not None and carried_arguments:  # else the output's element is read
        copy, read = source
        for position in range(count - 1):
            if generic.operands[position] == start:
                generic.operands[position] = read
        copy.erase()
    loop.results[0].replace_all_uses_with(start)
    loop.erase()


def _copied_from(ir, start, loop) -> tuple[Any, Any] | None:
    """The ``memref.copy`` into ``start``, a buffer allocated here, right before ``loop``
    (nothing but constants between) and its source, when the copy and ``loop`` are all
    that use ``start``; else None."""
    if not isinstance(start, ir.OpResult) or start.owner.name != "memref.alloc":
        return None
    users = [use.owner.operation for use in start.uses]
    copies = [user for user in users if user.name == "memref.copy"]
    if len(users) != 2 or len(copies) != 1 or loop not in users:
        return None
    copy = copies[0]
    if copy.operands[1] != start or copy.operands[0].type != start.type:
        return None
    between = copy.block.operations
    seen = False
    for operation in between:
        operation = operation.operation
        if operation == copy:
            seen = True
        elif operation == loop:
            return (copy, copy.operands[0]) if seen else None
        elif seen and operation.name != "arith.constant":
            return None
    return None
