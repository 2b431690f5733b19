"""``stablehlo.scatter`` that drops the updates whose window leaves the operand, as XLA does.

XLA skips an update whose window does not lie whole in the operand (its start index below 0
or above ``operand_dim - window_size`` in some dimension); jax relies on it for
``x.at[i].add(v)``, whose default mode drops updates at indices out of range. IREE 3.13's
lowering writes at the index unchecked: on the compiled path the loops wrote past the
result's buffer and corrupted the heap (``x.at[100].add`` of an 8-row array).

Both paths make every such update harmless. Where the combiner allows, in place
(``scatter_masks.py``: the scatters jax writes for ``.add``, ``.max``, ``.min``, ``.mul`` and a
lone ``.set``). Otherwise each operand is padded at the high end of every dimension an index
vector addresses, by that dimension's window size; an index component out of range is
replaced by the dimension's own size, which starts the window in the padding; the results
are sliced back to the operands' shapes (a copy of the operand, which a lone scatter costs
XLA too, since the arguments are not donated).

Soundness: a window is dropped exactly when some component is out of range, and then that
component's window lies in the padding, so the window meets no element of the slice kept;
a window whose components are all in range is where it was, and the padding at the high
end moves no element of the operand. Any combiner (set, add, max, several operands) stays as
it is. Indices and updates of dynamic shape (a symbolic batch's) are redirected the same
way, by a ``linalg.generic`` in a function of its own, since no constant of their shape
can be written. Scatters into an operand of dynamic shape, and those whose dimension sizes
the index type cannot hold, are left as they are (``dynamic_scatters.py`` takes some of
the former, and drops what is out of range itself).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .gather_bounds import component_constant, dimension_numbers
from .mlir_walk import add_functions, elementwise_lines, operations_named
from .scatter_masks import mask_in_place, outside_range


def drop_out_of_range_updates(module: Any) -> int:
    """Rewrite, in place, every static ``stablehlo.scatter`` of the ``iree.compiler.ir``
    module (in its context) so that out-of-range updates are dropped; return how many."""
    from iree.compiler import ir

    rewritten = 0
    redirections: list[str] = []
    for scatter in operations_named(module, "stablehlo.scatter"):
        plan = _plan(ir, scatter)
        if plan is None:
            continue
        rewritten += 1
        count = len(scatter.results)
        indices = scatter.operands[count]
        static = ir.RankedTensorType(indices.type).has_static_shape
        if static and mask_in_place(
            ir, scatter, plan.addressed, plan.limits, plan.window, plan.vector_dim
        ):
            continue
        with ir.InsertionPoint(scatter), scatter.location:
            if static:
                redirected = _redirected(ir, indices, plan.limits, plan.sizes, plan.vector_dim)
            else:
                redirected = _redirected_by_call(ir, indices, plan, redirections)
            scatter.operands[count] = redirected
            for position in range(count):
                scatter.operands[position] = _padded(ir, scatter.operands[position], plan.padding)
        for result in scatter.results:
            _slice_back(ir, scatter, result, plan.padding)
    add_functions(module, redirections)
    return rewritten


def _redirected_by_call(ir, indices, plan: _Plan, functions: list[str]) -> Any:
    """``_redirected`` for ``indices`` of dynamic shape, whose constants of their shape
    cannot be written: a call of a function (its text appended to ``functions``) holding
    a ``linalg.generic`` that gives each component out of ``[0, limit]`` the size of its
    dimension, the component read from the element's position along ``vector_dim``."""
    indices_type = ir.RankedTensorType(indices.type)
    symbol = f"rw_redirected_indices_{len(functions)}"
    element, rank = indices_type.element_type, indices_type.rank
    lines = [f"func.func private @{symbol}(%indices: {indices_type}) -> {indices_type} {{"]
    sizes = []
    for d in range(rank):
        if indices_type.is_dynamic_dim(d):
            lines.append(f"  %at{d} = arith.constant {d} : index")
            lines.append(f"  %size{d} = tensor.dim %indices, %at{d} : {indices_type}")
            sizes.append(f"%size{d}")
    body = ["%zero = arith.constant 0 : " + str(element)]
    if plan.vector_dim < rank:
        body.append(f"%component = linalg.index {plan.vector_dim} : index")
    limit, size = "", ""
    for k, (last, past) in enumerate(zip(plan.limits, plan.sizes, strict=True)):
        body += [
            f"%limit{k} = arith.constant {last} : {element}",
            f"%past{k} = arith.constant {past} : {element}",
        ]
        if k == 0:
            limit, size = "%limit0", "%past0"
            continue
        body += [
            f"%k{k} = arith.constant {k} : index",
            f"%is{k} = arith.cmpi eq, %component, %k{k} : index",
            f"%limit_upto{k} = arith.select %is{k}, %limit{k}, {limit} : {element}",
            f"%past_upto{k} = arith.select %is{k}, %past{k}, {size} : {element}",
        ]
        limit, size = f"%limit_upto{k}", f"%past_upto{k}"
    unsigned = ir.IntegerType(element).is_unsigned
    below = "arith.cmpi ult" if unsigned else "arith.cmpi slt"
    above = "arith.cmpi ugt" if unsigned else "arith.cmpi sgt"
    body += [
        f"%below = {below}, %in0, %zero : {element}",
        f"%above = {above}, %in0, {limit} : {element}",
        "%outside = arith.ori %below, %above : i1",
        f"%yielded = arith.select %outside, {size}, %in0 : {element}",
    ]
    lines.append(f"  %empty = tensor.empty({', '.join(sizes)}) : {indices_type}")
    lines += elementwise_lines("%redirected", ["%indices"], "%empty", indices_type, body)
    lines += [f"  return %redirected : {indices_type}", "}"]
    functions.append("\n".join(lines))
    call = ir.Operation.create(
        "func.call",
        results=[indices_type],
        operands=[indices],
        attributes={"callee": ir.FlatSymbolRefAttr.get(symbol)},
    )
    return call.result


@dataclass(frozen=True)
class _Plan:
    addressed: list[int]  # the operand dimension of each index component
    window: list[int]  # the window's size in each operand dimension
    limits: list[int]  # of each component: the largest start in range
    sizes: list[int]  # of each component: the operand's size, where the padding starts
    padding: list[int]  # of each operand dimension
    vector_dim: int


def _plan(ir, scatter) -> _Plan | None:
    """What the rewrite of ``scatter`` needs; None to leave it as it is."""
    count = len(scatter.results)
    operand = ir.RankedTensorType(scatter.operands[0].type)
    indices = ir.RankedTensorType(scatter.operands[count].type)
    updates = ir.RankedTensorType(scatter.operands[count + 1].type)
    if not operand.has_static_shape:
        return None
    if not isinstance(indices.element_type, ir.IntegerType) or 0 in operand.shape:
        return None
    numbers = dimension_numbers(str(scatter.attributes["scatter_dimension_numbers"]))
    whole = set(numbers.get("inserted_window_dims", []) + numbers.get("input_batching_dims", []))
    windowed = [d for d in range(operand.rank) if d not in whole]
    window = [1] * operand.rank
    for d, update_dim in zip(windowed, numbers.get("update_window_dims", []), strict=True):
        if updates.is_dynamic_dim(update_dim):
            return None
        window[d] = updates.shape[update_dim]
    addressed = numbers.get("scatter_dims_to_operand_dims", [])
    element = ir.IntegerType(indices.element_type)
    largest = (1 << (element.width - (0 if element.is_unsigned else 1))) - 1
    sizes = [operand.shape[d] for d in addressed]
    if any(size > largest for size in sizes):
        return None
    padding = [window[d] if d in addressed else 0 for d in range(operand.rank)]
    limits = [operand.shape[d] - window[d] for d in addressed]
    vector_dim = numbers.get("index_vector_dim", [0])[0]  # 0 when not printed
    return _Plan(addressed, window, limits, sizes, padding, vector_dim)


def _redirected(ir, indices, limits: list[int], sizes: list[int], vector_dim: int) -> Any:
    """``indices`` with each component outside ``[0, limit]`` replaced by ``size``."""
    indices_type = ir.RankedTensorType(indices.type)
    outside = outside_range(ir, indices, limits, vector_dim)
    size = component_constant(ir, sizes, indices_type, vector_dim)
    return _create(ir, "stablehlo.select", indices_type, [outside, size, indices])


def _padded(ir, operand, padding: list[int]) -> Any:
    operand_type = ir.RankedTensorType(operand.type)
    shape = [size + extra for size, extra in zip(operand_type.shape, padding, strict=True)]
    padded_type = ir.RankedTensorType.get(shape, operand_type.element_type)
    value = _zero_value(ir, operand_type.element_type)
    zeros = [0] * len(padding)
    attributes = {
        "edge_padding_low": ir.DenseI64ArrayAttr.get(zeros),
        "edge_padding_high": ir.DenseI64ArrayAttr.get(padding),
        "interior_padding": ir.DenseI64ArrayAttr.get(zeros),
    }
    return _create(ir, "stablehlo.pad", padded_type, [operand, value], attributes)


def _slice_back(ir, scatter, result, padding: list[int]) -> None:
    """Give ``result`` the padded type and its users the slice of the operand's shape."""
    original = ir.RankedTensorType(result.type)
    shape = [size + extra for size, extra in zip(original.shape, padding, strict=True)]
    with ir.InsertionPoint.after(scatter), scatter.location:
        result.set_type(ir.RankedTensorType.get(shape, original.element_type))
        attributes = {
            "start_indices": ir.DenseI64ArrayAttr.get([0] * original.rank),
            "limit_indices": ir.DenseI64ArrayAttr.get(list(original.shape)),
            "strides": ir.DenseI64ArrayAttr.get([1] * original.rank),
        }
        kept = ir.Operation.create(
            "stablehlo.slice", results=[original], operands=[result], attributes=attributes
        )
    result.replace_all_uses_except(kept.result, kept)


def _zero_value(ir, element) -> Any:
    """A 0-d tensor of zero of ``element`` (the padding is never read): a constant, or of
    complex elements ``stablehlo.complex`` of two, as the bindings cannot read back a dense
    attribute of complex elements ("Can't cast unknown element type")."""
    scalar = ir.RankedTensorType.get([], element)
    if isinstance(element, ir.ComplexType):
        part = _zero_value(ir, ir.ComplexType(element).element_type)
        return _create(ir, "stablehlo.complex", scalar, [part, part])
    if isinstance(element, ir.IntegerType):
        text = "false" if ir.IntegerType(element).width == 1 else "0"
    else:
        text = "0.0"
    zero = ir.Attribute.parse(f"dense<{text}> : {scalar}")
    return _create(ir, "stablehlo.constant", scalar, [], {"value": zero})


def _create(ir, name: str, type_, operands: list[Any], attributes: dict | None = None) -> Any:
    return ir.Operation.create(
        name, results=[type_], operands=operands, attributes=attributes or {}
    ).result
