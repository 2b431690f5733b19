"""An argmax or argmin over a whole 1-D array as two loops that LLVM vectorizes.

jax writes ``jnp.argmax`` as a reduction of two operands, value and index, whose body picks
the larger value (a NaN first, the first index on a tie) with compares and selects. Lowered
as it is, that is one element at a time, and the two 0-d outputs are loaded and stored
every iteration (their pointers are aligned through integers, so LLVM cannot tell them
apart from the input and keeps them in memory): a chain of a store, a load, a compare and
a select per element, 5 ns (``benchmarks/op_complexity.py``: 21 ms at 4M elements, where
``jax.jit`` takes 14 ms of CPU on two threads).

The same result comes from two reductions LLVM vectorizes: the maximum (``maximumf``, NaN
if any element is NaN, made LLVM's intrinsic by ``float_extrema.py``), then the least index
of an element equal to it (a NaN for a NaN maximum), a minimum of integers. The element at
that index is then taken into the outputs' initial value by the body's own rule: the fold
of the body over the elements is the body applied to the initial value and that element
(or the initial value, where no element equals the maximum: it was the initial value's).
Only the body jax writes is matched (``GT`` for argmax, ``LT`` for argmin, ``NE`` for the
NaN test, ``EQ`` and ``LT`` of the indices for ties), over a static 1-D f32 or f64 array
with i32 or i64 indices.
"""

from __future__ import annotations

import re
from typing import Any

from . import contexts
from .library_calls import body_operations, iterator_types
from .mlir_walk import operations_named

# arith.cmpf and arith.cmpi predicates (MLIR's ArithBase.td).
_OEQ, _OGT, _OLT, _UNE = 1, 2, 4, 13
_SLT = 2
_EXTREMUM = {_OGT: "maximumf", _OLT: "minimumf"}
_BODY = (
    "linalg.index",
    "arith.index_cast",
    "arith.cmpf",
    "arith.cmpf",
    "arith.ori",
    "arith.cmpf",
    "arith.cmpi",
    "arith.andi",
    "arith.ori",
    "arith.select",
    "arith.select",
    "linalg.yield",
)
_INPUTS = re.compile(r":\s*(\d+)")  # ``array<i32: INPUTS, OUTPUTS>``
_INDEX_LIMITS = {"i32": 2**31 - 1, "i64": 2**63 - 1}


def two_pass_arg_extrema(text: str) -> str:
    """``text`` (a bufferized module) with each argmax and argmin over a 1-D array written
    as the two loops of the module doc; unchanged without any."""
    from iree.compiler import ir

    context = contexts.context()
    module = ir.Module.parse(text, context)
    found = []
    for generic in operations_named(module, "linalg.generic"):
        matched = _matched(ir, generic)
        if matched is not None:
            found.append((generic, matched))
    if not found:
        return text
    iotas = _iotas([generic for generic, _ in found])
    for generic, template_text in found:
        template = ir.Module.parse(template_text, context)
        block = template.body.operations[0].regions[0].blocks[0]
        with ir.InsertionPoint(generic):
            made = block.operations[0].clone()
        operands = list(generic.operands)
        _rewire(ir, made, list(block.arguments), [operands[0], *operands[-2:]])
        generic.erase()
    for iota in iotas:  # what wrote the indices that the loops no longer read
        buffer = iota.operands[0].owner
        iota.erase()
        buffer.erase()
    return module.operation.get_asm(enable_debug_info=True)


def _iotas(generics: list[Any]) -> list[Any]:
    """The iotas (``linalg.index`` into a buffer of their own) that only ``generics``, the
    ops being replaced, read: they go with them."""
    from iree.compiler import ir

    gone: list[Any] = []
    for generic in generics:
        if len(generic.operands) != 4:
            continue
        users = [use.owner for use in generic.operands[1].uses]
        writers = [user for user in users if _writes_iota(ir, user)]
        if len(writers) != 1 or any(writer == iota for iota in gone for writer in writers):
            continue
        if all(user == writers[0] or any(user == g for g in generics) for user in users):
            gone.append(writers[0])
    return gone


def _writes_iota(ir, generic) -> bool:
    """Whether ``generic`` writes each element's index into its one operand, an output."""
    if generic.name != "linalg.generic" or len(generic.operands) != 1:
        return False
    body = body_operations(ir, generic)
    if tuple(op.name for op in body) != ("linalg.index", "arith.index_cast", "linalg.yield"):
        return False
    index, cast, end = body
    return (
        ir.IntegerAttr(index.attributes["dim"]).value == 0
        and cast.operands[0] == index.results[0]
        and end.operands[0] == cast.results[0]
    )


def _rewire(ir, operation, old: list[Any], new: list[Any]) -> None:
    """Every operand of ``operation`` and the ops nested in it that is one of ``old`` made
    the ``new`` value at its place."""

    def visit(op):
        for position, operand in enumerate(op.operands):
            for before, after in zip(old, new, strict=True):
                if operand == before:
                    op.operands[position] = after
        return ir.WalkResult.ADVANCE

    operation.walk(visit)


def _predicate(ir, operation) -> int:
    return ir.IntegerAttr(operation.attributes["predicate"]).value


_MAPS = {
    3: "[affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> ()>]",
    4: "[affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, "
    "affine_map<(d0) -> ()>]",
}


def _matched(ir, generic) -> str | None:
    """The template of ``generic``'s two loops when it is an argmax or argmin over a 1-D
    array, else None: its indices made by ``linalg.index`` in its body, or read from a
    buffer that an iota wrote (jax's argmax and argmin of one array share one iota)."""
    count = len(generic.operands)
    if iterator_types(generic) != ["reduction"] or count not in _MAPS:
        return None
    if str(generic.attributes["indexing_maps"]) != _MAPS[count]:
        return None
    types = [str(operand.type) for operand in generic.operands]
    source, value, index = types[0], types[-2], types[-1]
    element = value.removeprefix("memref<").removesuffix(">")
    index_type = index.removeprefix("memref<").removesuffix(">")
    if element not in ("f32", "f64") or index_type not in _INDEX_LIMITS:
        return None
    size_text = source.removeprefix("memref<").removesuffix(f"x{element}>")
    if not size_text.isdigit() or not 0 < int(size_text) < _INDEX_LIMITS[index_type]:
        return None
    body = body_operations(ir, generic)
    arguments = list(generic.regions[0].blocks[0].arguments)
    if count == 3:
        if tuple(op.name for op in body) != _BODY or not _writes_iota_value(ir, body[:2]):
            return None
        given, current, current_index = arguments
        position = body[1].results[0]
        body = body[2:]
    else:
        if (
            tuple(op.name for op in body) != _BODY[2:]
            or types[1] != f"memref<{size_text}x{index_type}>"
        ):
            return None
        if not _iota_buffer(ir, generic.operands[1]):
            return None
        given, position, current, current_index = arguments

    def takes(op, *operands) -> bool:
        return len(op.operands) == len(operands) and all(
            a == b for a, b in zip(op.operands, operands, strict=True)
        )

    (order, nan, keep, equal, earlier, tie, keep_index, pick, pick_index, end) = body
    result = [op.results[0] for op in body[:-1]]
    predicate = _predicate(ir, order)
    if (
        predicate not in _EXTREMUM
        or not takes(order, current, given)
        or _predicate(ir, nan) != _UNE
        or not takes(nan, current, current)
        or not takes(keep, result[0], result[1])
        or _predicate(ir, equal) != _OEQ
        or not takes(equal, current, given)
        or _predicate(ir, earlier) != _SLT
        or not takes(earlier, current_index, position)
        or not takes(tie, result[3], result[4])
        or not takes(keep_index, result[2], result[5])
        or not takes(pick, result[2], current, given)
        or not takes(pick_index, result[6], current_index, position)
        or not takes(end, result[7], result[8])
    ):
        return None
    return _template(int(size_text), element, index_type, predicate)


def _iota_buffer(ir, buffer) -> bool:
    """Whether ``buffer`` is allocated here, written by one iota and only read by the other
    ``linalg.generic`` ops that use it (nothing else uses it)."""
    if buffer.owner.name != "memref.alloc":
        return False
    writers = 0
    for use in buffer.uses:
        user = use.owner
        if user.name != "linalg.generic":
            return False
        inputs = _INPUTS.search(str(user.attributes["operandSegmentSizes"]))
        if inputs is None or use.operand_number >= int(inputs.group(1)):
            if not _writes_iota(ir, user):
                return False
            writers += 1
    return writers == 1


def _writes_iota_value(ir, operations: list[Any]) -> bool:
    """Whether ``operations`` are ``linalg.index 0`` and its ``arith.index_cast``."""
    index, cast = operations
    return (
        ir.IntegerAttr(index.attributes["dim"]).value == 0 and cast.operands[0] == index.results[0]
    )


def _template(size: int, element: str, index: str, predicate: int) -> str:
    """A function whose one op (an ``scf.execute_region``) does the two loops and the
    final step of the module doc, on ``%x`` into ``%v`` and ``%i``."""
    order = "ogt" if predicate == _OGT else "olt"
    return f"""
func.func @arg_extremum(%x: memref<{size}x{element}>, %v: memref<{element}>,
                        %i: memref<{index}>) {{
  scf.execute_region {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant {size} : index
    %none = arith.constant {size} : {index}
    %true = arith.constant true
    %start = memref.load %v[] : memref<{element}>
    %start_index = memref.load %i[] : memref<{index}>
    %extremum = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %start) -> ({element}) {{
      %e = memref.load %x[%k] : memref<{size}x{element}>
      %r = arith.{_EXTREMUM[predicate]} %acc, %e : {element}
      scf.yield %r : {element}
    }}
    %nan_extremum = arith.cmpf uno, %extremum, %extremum : {element}
    %first = scf.for %k = %c0 to %n step %c1 iter_args(%best = %none) -> ({index}) {{
      %e = memref.load %x[%k] : memref<{size}x{element}>
      %same = arith.cmpf oeq, %e, %extremum : {element}
      %nan = arith.cmpf uno, %e, %e : {element}
      %both_nan = arith.andi %nan, %nan_extremum : i1
      %match = arith.ori %same, %both_nan : i1
      %at = arith.index_cast %k : index to {index}
      %candidate = arith.select %match, %at, %none : {index}
      %r = arith.minsi %best, %candidate : {index}
      scf.yield %r : {index}
    }}
    %found = arith.cmpi slt, %first, %none : {index}
    %missing = arith.xori %found, %true : i1
    %first_index = arith.index_cast %first : {index} to index
    %safe = arith.select %found, %first_index, %c0 : index
    %e = memref.load %x[%safe] : memref<{size}x{element}>
    %order = arith.cmpf {order}, %start, %e : {element}
    %start_nan = arith.cmpf une, %start, %start : {element}
    %keep = arith.ori %order, %start_nan : i1
    %equal = arith.cmpf oeq, %start, %e : {element}
    %earlier = arith.cmpi slt, %start_index, %first : {index}
    %tie = arith.andi %equal, %earlier : i1
    %keep_index = arith.ori %keep, %tie : i1
    %keep_value = arith.ori %keep, %missing : i1
    %keep_position = arith.ori %keep_index, %missing : i1
    %value = arith.select %keep_value, %start, %e : {element}
    %position = arith.select %keep_position, %start_index, %first : {index}
    memref.store %value, %v[] : memref<{element}>
    memref.store %position, %i[] : memref<{index}>
    scf.yield
  }}
  return
}}
"""
