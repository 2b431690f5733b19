"""Scatters of dynamic shape (a training step of a symbolic batch: the gradients of
``jnp.take_along_axis`` and of a slice) in forms IREE lowers.

IREE 3.13 lowers a ``stablehlo.scatter`` of dynamic shape only in its canonical form (the
updates' one scattered dimension first, the index vector last, no batching dimensions):
the scatters jax writes for these gradients failed on both paths ("failed to legalize
operation 'stablehlo.scatter'"). Both paths write each, in a function of its own:

- **Single elements along batching dimensions** (``jax.grad`` of ``take_along_axis(x, i,
  -1)`` for a ``(b, tokens, classes)`` array: batch and token dimensions are batching
  dimensions, one element per update) as a ``linalg.generic`` over the operand's elements
  and the updates' scattered dimensions, the latter a reduction in row-major order: each
  operand element combines, in that order, the updates whose batching coordinates are its
  own and whose index vector (read with ``tensor.extract``) is its position. That is the
  scatter's definition with updates applied one after another, as XLA's CPU loop applies
  them: an update whose index is out of range matches no element and is dropped, as XLA
  drops it, and an element no update reaches keeps its bits (a ``select``, not an add of
  0). Its cost is the operand's size times the updates per batch element: small for
  ``take_along_axis`` with few indices. Taken: every operand dimension a batching or a
  scattered (inserted) one, no update window dimensions.
- **One window as large as the operand's rank** (the gradient of ``x[:, :-1]``: a window
  added into zeros at a start index) as the window combined with the operand's elements
  under it (``tensor.extract_slice``, a ``linalg.generic``, ``tensor.insert_slice``) when
  the whole window lies in the operand, and the operand unchanged otherwise, as XLA drops
  a window out of range.

Taken in each: a combiner of ``add``, ``multiply``, ``maximum`` or ``minimum`` of its two
arguments (each commutative) or one that returns the update, float or signless integer
elements, signless integer indices (unsigned ones of at most 32 bits converted to ``i64``
first: the same numbers).
"""

from __future__ import annotations

from typing import Any

from .gather_bounds import dimension_numbers
from .mlir_walk import elementwise_lines, one_op_body, outline_into_functions, size_value

SCATTER = "stablehlo.scatter"
_PREFIX = "rw_dynamic_scatter_"
_BATCHING = ("input_batching_dims", "scatter_indices_batching_dims")
_COMBINE = {
    "stablehlo.add": ("arith.addf", "arith.addi"),
    "stablehlo.multiply": ("arith.mulf", "arith.muli"),
    "stablehlo.maximum": ("arith.maximumf", "arith.maxsi"),
    "stablehlo.minimum": ("arith.minimumf", "arith.minsi"),
}


def dynamic_scatters(module: Any) -> int:
    """Rewrite, in place, the scatters the module's doc names of the ``iree.compiler.ir``
    ``module`` (in its context); return how many."""
    _signless_indices(module)
    batched = outline_into_functions(module, SCATTER, _PREFIX, _scatter_function)
    windows = outline_into_functions(module, SCATTER, "rw_window_scatter_", _window_function)
    return batched + windows


def _signless_indices(module: Any) -> None:
    """Unsigned indices of at most 32 bits of a scatter of dynamic shape (the gradient of
    ``jnp.sort`` of a symbolic batch scatters at ``ui32`` positions) converted to ``i64``:
    the same numbers, which the functions above read as signed."""
    from iree.compiler import ir

    from .mlir_walk import op_result, operations_named

    for operation in operations_named(module, SCATTER):
        if len(operation.operands) != 3:
            continue
        kinds = [ir.RankedTensorType(v.type) for v in operation.operands]
        if all(kind.has_static_shape for kind in kinds):
            continue
        indices = kinds[1]
        element = indices.element_type
        if not (isinstance(element, ir.IntegerType) and element.is_unsigned):
            continue
        if element.width > 32:
            continue
        with ir.InsertionPoint(operation), operation.location:
            wide = ir.RankedTensorType.get(indices.shape, ir.IntegerType.get_signless(64))
            operation.operands[1] = op_result(ir, "stablehlo.convert", wide, operation.operands[1])


def _window_function(ir: Any, operation: Any, symbol: str) -> str | None:
    """``func.func private @symbol(%operand, %indices, %updates)`` computing the scatter
    ``operation`` of one update window as large as the operand's rank (the gradient of a
    slice, ``x[:, :-1]``, of a symbolic batch), of dynamic shape: the window combined
    with the operand's elements under it, when the whole window lies in the operand (XLA
    drops it otherwise); None for another scatter."""
    parts = _parts(ir, operation)
    if parts is None:
        return None
    operand, indices, updates, combine, numbers = parts
    if any(numbers.get(n) for n in _BATCHING):
        return None
    if numbers.get("inserted_window_dims") or indices.rank != 1:
        return None
    if numbers.get("update_window_dims", []) != list(range(operand.rank)):
        return None
    if numbers.get("index_vector_dim", [0])[0] != 0 or updates.rank != operand.rank:
        return None
    to_operand = numbers.get("scatter_dims_to_operand_dims", [])
    if indices.is_dynamic_dim(0) or indices.shape[0] != len(to_operand):
        return None
    lines = [
        f"func.func private @{symbol}(%operand: {operand}, %indices: {indices}, "
        f"%updates: {updates}) -> {operand} {{",
        "  %zero = arith.constant 0 : index",
    ]
    offsets, sizes, fits = [], [], []
    for d in range(operand.rank):
        size_value(lines, f"size{d}", "operand", operand, d)
        window = size_value(lines, f"window{d}", "updates", updates, d)
        sizes.append(window if updates.is_dynamic_dim(d) else str(updates.shape[d]))
        if d not in to_operand:
            offsets.append("0")
            continue
        k = to_operand.index(d)
        lines += [
            f"  %k{k} = arith.constant {k} : index",
            f"  %raw{k} = tensor.extract %indices[%k{k}] : {indices}",
            f"  %start{d} = arith.index_cast %raw{k} : {indices.element_type} to index",
            f"  %room{d} = arith.subi %size{d}, %window{d} : index",
            f"  %low{d} = arith.cmpi sge, %start{d}, %zero : index",
            f"  %high{d} = arith.cmpi sle, %start{d}, %room{d} : index",
            f"  %fits{d} = arith.andi %low{d}, %high{d} : i1",
            f"  %above{d} = arith.maxsi %start{d}, %zero : index",
            f"  %at{d} = arith.minsi %above{d}, %room{d} : index",
        ]
        fits.append(f"%fits{d}")
        offsets.append(f"%at{d}")
    inside = "%inside0"
    lines.append(f"  {inside} = arith.constant true")
    for n, fit in enumerate(fits, start=1):
        lines.append(f"  %inside{n} = arith.andi {inside}, {fit} : i1")
        inside = f"%inside{n}"
    place = f"[{', '.join(offsets)}] [{', '.join(sizes)}] [{', '.join(['1'] * operand.rank)}]"
    lines.append(f"  %under = tensor.extract_slice %operand{place} : {operand} to {updates}")
    combined = "%updates"
    if combine != "replace":
        combining = [f"%yielded = {combine} %in0, %in1 : {updates.element_type}"]
        lines += elementwise_lines(
            "%combined", ["%under", "%updates"], "%under", updates, combining
        )
        combined = "%combined"
    lines += [
        f"  %written = tensor.insert_slice {combined} into %operand{place} "
        f": {updates} into {operand}",
        f"  %result = arith.select {inside}, %written, %operand : {operand}",
        f"  return %result : {operand}",
        "}",
    ]
    return "\n".join(lines)


def _scatter_function(ir: Any, operation: Any, symbol: str) -> str | None:
    """``func.func private @symbol(%operand, %indices, %updates)`` computing the scatter
    ``operation`` element by element; None for a scatter the module's doc does not name."""
    parts = _parts(ir, operation)
    if parts is None:
        return None
    operand, indices, updates, combine, numbers = parts
    element, index_element = operand.element_type, indices.element_type
    if numbers.get("update_window_dims"):
        return None
    inserted = numbers.get("inserted_window_dims", [])
    batching = numbers.get("input_batching_dims", [])
    indices_batching = numbers.get("scatter_indices_batching_dims", [])
    to_operand = numbers.get("scatter_dims_to_operand_dims", [])
    vector_dim = numbers.get("index_vector_dim", [0])[0]
    if not to_operand or sorted(inserted) != sorted(to_operand):
        return None
    if sorted(inserted + batching) != list(range(operand.rank)):
        return None
    # The updates' dimensions are the indices' dimensions but the index vector's, in order:
    # each is a batching dimension (an operand dimension's loop) or a scattered one (a
    # reduction loop of its own).
    of_indices = [d for d in range(indices.rank) if d != vector_dim]
    if len(of_indices) != updates.rank:
        return None
    loops = [f"d{d}" for d in range(operand.rank)]
    update_loops, reductions = [], 0
    for d in of_indices:
        if d in indices_batching:
            update_loops.append(loops[batching[indices_batching.index(d)]])
        else:
            update_loops.append(f"d{operand.rank + reductions}")
            reductions += 1
    every = [*loops, *(f"d{operand.rank + r}" for r in range(reductions))]
    kinds = ['"parallel"'] * operand.rank + ['"reduction"'] * reductions
    header = f"func.func private @{symbol}(%operand: {operand}, %indices: {indices}, "
    lines = [
        f"{header}%updates: {updates}) -> {operand} {{",
        f"  %scattered = linalg.generic {{indexing_maps = ["
        f"affine_map<({', '.join(every)}) -> ({', '.join(update_loops)})>, "
        f"affine_map<({', '.join(every)}) -> ({', '.join(loops)})>], "
        f"iterator_types = [{', '.join(kinds)}]}} "
        f"ins(%updates : {updates}) outs(%operand : {operand}) {{",
        f"  ^bb0(%update: {element}, %current: {element}):",
    ]
    lines += [f"    %i{d} = linalg.index {d} : index" for d in range(len(every))]
    matches = []
    for k, operand_dim in enumerate(to_operand):
        at = [f"%i{int(name[1:])}" for name in update_loops]
        if vector_dim < indices.rank:
            lines.append(f"    %k{k} = arith.constant {k} : index")
            at.insert(vector_dim, f"%k{k}")
        lines += [
            f"    %raw{k} = tensor.extract %indices[{', '.join(at)}] : {indices}",
            f"    %wide{k} = arith.index_cast %raw{k} : {index_element} to index",
            f"    %match{k} = arith.cmpi eq, %wide{k}, %i{operand_dim} : index",
        ]
        matches.append(f"%match{k}")
    hit = matches[0]
    for k, match in enumerate(matches[1:], start=1):
        lines.append(f"    %both{k} = arith.andi {hit}, {match} : i1")
        hit = f"%both{k}"
    if combine == "replace":
        combined = "%update"
    else:
        lines.append(f"    %combined = {combine} %current, %update : {element}")
        combined = "%combined"
    lines += [
        f"    %next = arith.select {hit}, {combined}, %current : {element}",
        f"    linalg.yield %next : {element}",
        f"  }} -> {operand}",
        f"  return %scattered : {operand}",
        "}",
    ]
    return "\n".join(lines)


def _parts(ir: Any, operation: Any) -> tuple[Any, Any, Any, str, dict[str, list[int]]] | None:
    """The operand, indices and updates types, the arith op that combines (``_combiner``)
    and the dimension numbers of ``operation``, a scatter of dynamic shape of one operand of
    float or signless integer elements at signless integer indices, with a combiner the
    module's doc names; None for any other."""
    if len(operation.operands) != 3 or len(operation.results) != 1:
        return None
    operand, indices, updates = (ir.RankedTensorType(v.type) for v in operation.operands)
    if operand.has_static_shape and indices.has_static_shape and updates.has_static_shape:
        return None
    element = operand.element_type
    is_float = isinstance(element, ir.FloatType)
    if not is_float and not (isinstance(element, ir.IntegerType) and element.is_signless):
        return None
    index_element = indices.element_type
    if not (isinstance(index_element, ir.IntegerType) and index_element.is_signless):
        return None
    combine = _combiner(ir, operation, is_float)
    if combine is None:
        return None
    numbers = dimension_numbers(str(operation.attributes["scatter_dimension_numbers"]))
    return operand, indices, updates, combine, numbers


def _combiner(ir: Any, operation: Any, is_float: bool) -> str | None:
    """The arith op that combines an element with an update (``"replace"``: the update
    takes its place), or None for another body."""
    block = operation.regions[0].blocks[0]
    body = [op.operation for op in block.operations]
    arguments = list(block.arguments)
    if len(body) == 1 and len(arguments) == 2 and list(body[0].operands) == [arguments[1]]:
        return "replace"
    name = one_op_body(operation, _COMBINE)  # each commutative: the arguments' order
    return None if name is None else _COMBINE[name][0 if is_float else 1]
