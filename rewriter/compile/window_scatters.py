"""``stablehlo.select_and_scatter`` as slices, selects and pads, as XLA computes it.

``jax.grad`` of a max pool (``lax.reduce_window`` of ``max``; a min pool alike) is a
``select_and_scatter``: each window of the operand picks one element by the select region
(jax's: ``compare GE`` of the kept and the next element, for a max: the first of equal
greatest ones), and the gradient of that window is added to the picked element. IREE 3.13
gets it wrong twice:

- windows that overlap (a stride under the window's size: ResNet's 3x3 pool of stride 2,
  any pool of stride 1) fail to compile on both paths ("failed to legalize operation
  'stablehlo.select_and_scatter'");
- windows apart are lowered, but picking the last of equal elements: the gradient of a
  2x2 max pool of ``ones((2, 2))`` is 1 at ``[1, 1]``, where ``jax.jit`` puts it at
  ``[0, 0]``. Equal elements are common where a pool follows a ReLU (its zeros).

Both paths write each such op of a float element, with no padding of its own, of static
shape (or dynamic along dimensions where the window is 1 wide with a stride of 1, as a
symbolic batch size; the initial value then a constant), whose select region is one
``stablehlo.compare`` of its two arguments in order and whose scatter region is one
``stablehlo.add``, as ops IREE lowers. With ``k`` the window's
offsets in row-major order and ``S`` the source (one element per window):

1. ``slice_k``: the operand's elements at offset ``k`` of every window (a strided slice of
   the source's shape; a ``real_dynamic_slice`` to a dynamic dimension's size);
2. the selection, as XLA's evaluator makes it: the kept element starts as ``slice_0``, and
   for each further ``k`` stays when ``compare(kept, slice_k)`` holds, else becomes
   ``slice_k``; ``chosen`` holds the offset of the kept one;
3. the result: the initial value, plus, for each ``k`` from the last to the first,
   ``S`` where ``chosen == k`` (else -0.0) placed at offset ``k`` of its window (a pad of
   ``k`` before, stride - 1 between, -0.0 everywhere else).

Why that is XLA's result, bit for bit: adding -0.0 changes no float (-0.0 + -0.0 is -0.0,
0.0 + -0.0 is 0.0), so each element is the initial value plus the gradients of the
windows that picked it. An element ``i`` gets at most one term from each offset ``k``, from
the window ``p`` with ``i = p * stride + k``; ``k`` descending in row-major order is ``p``
ascending in row-major order, the order in which XLA adds the windows' gradients to the
initial value. The cost: a pass over the operand per offset of the window (9 for 3x3).
"""

from __future__ import annotations

import itertools
from typing import Any

from .mlir_walk import (
    Splats,
    dimension_size,
    i32_vector,
    joined_vector,
    op_result,
    replace_each,
    splat_value,
)

SELECT_AND_SCATTER = "stablehlo.select_and_scatter"
_FLOATS = ("f16", "bf16", "f32", "f64")


def window_scatters(module: Any) -> int:
    """Rewrite, in place, every ``select_and_scatter`` of the
    ``iree.compiler.ir`` ``module`` (in its context) that the module's doc names; return
    how many."""
    return replace_each(
        module,
        SELECT_AND_SCATTER,
        _form,
        lambda ir, operation, form: _scattered(ir, operation, *form),
    )


def _form(ir: Any, operation: Any) -> tuple[Any, list[int], list[int]] | None:
    """The op's selecting comparison and its window's sizes and strides when it is one the
    module's doc names; else None."""
    window = _window(ir, operation)
    if window is None:
        return None
    compare = _select_compare(operation)
    if compare is None or _scatter_body(operation) != "stablehlo.add":
        return None
    return (compare, *window)


def _window(ir: Any, operation: Any) -> tuple[list[int], list[int]] | None:
    """The op's window sizes and strides when it is one the module's doc names (float
    elements, no padding, the source one element per window; a dynamic dimension only
    where the window is 1 wide with a stride of 1, and then a constant initial value);
    else None."""
    given = ir.RankedTensorType(operation.operands[0].type)
    source = ir.RankedTensorType(operation.operands[1].type)
    if str(given.element_type) not in _FLOATS or 0 in source.shape:
        return None
    attributes, rank = operation.attributes, given.rank

    def integers(name: str, default: int) -> list[int]:
        if name not in attributes:
            return [default] * rank
        return list(ir.DenseI64ArrayAttr(attributes[name]))

    sizes, strides = integers("window_dimensions", 1), integers("window_strides", 1)
    if "padding" in attributes and any(ir.DenseIntElementsAttr(attributes["padding"])):
        return None
    for d, (size, stride) in enumerate(zip(sizes, strides, strict=True)):
        if given.is_dynamic_dim(d) or source.is_dynamic_dim(d):
            if (size, stride) != (1, 1):
                return None
            continue
        extent, count = given.shape[d], source.shape[d]
        if stride < 1 or size > extent or count != (extent - size) // stride + 1:
            return None
    if not given.has_static_shape and splat_value(ir, operation.operands[2]) is None:
        return None
    return sizes, strides


def _select_compare(operation: Any) -> Any | None:
    """The select region's ``stablehlo.compare`` when it is the region's one op, applied
    to the block's arguments in order, and returned; else None."""
    block = operation.regions[0].blocks[0]
    body = [op.operation for op in block.operations]
    if len(body) != 2 or body[0].name != "stablehlo.compare":
        return None
    if list(body[0].operands) != list(block.arguments):
        return None
    if body[1].name != "stablehlo.return" or list(body[1].operands) != [body[0].results[0]]:
        return None
    return body[0]


def _scatter_body(operation: Any) -> str | None:
    """The name of the scatter region's one op when it combines the block's two arguments
    and is returned; else None."""
    block = operation.regions[1].blocks[0]
    body = [op.operation for op in block.operations]
    if len(body) != 2 or body[1].name != "stablehlo.return":
        return None
    if set(body[0].operands) != set(block.arguments) or len(list(body[0].operands)) != 2:
        return None
    if list(body[1].operands) != [body[0].results[0]]:
        return None
    return str(body[0].name)


def _scattered(ir: Any, operation: Any, compare: Any, sizes: list[int], strides: list[int]) -> Any:
    """The op's result, written as the module's doc says at the insertion point."""
    given_value, source, initial = operation.operands
    given = ir.RankedTensorType(given_value.type)
    windows = ir.RankedTensorType(source.type)
    element = given.element_type
    flags = ir.RankedTensorType.get(windows.shape, ir.IntegerType.get_signless(1))
    offsets_type = ir.RankedTensorType.get(windows.shape, ir.IntegerType.get_signless(32))
    splats = Splats(ir, source)
    scalar = ir.RankedTensorType.get([], element)
    minus_zero = op_result(
        ir,
        "stablehlo.constant",
        scalar,
        value=ir.DenseElementsAttr.get_splat(scalar, ir.FloatAttr.get(element, -0.0)),
    )
    compared = {
        name: compare.attributes[name]
        for name in ("comparison_direction", "compare_type")
        if name in compare.attributes
    }

    def arrays(**values: list[int]) -> dict[str, Any]:
        return {name: ir.DenseI64ArrayAttr.get(list(v)) for name, v in values.items()}

    offsets = list(itertools.product(*(range(size) for size in sizes)))
    kept = chosen = None
    for number, offset in enumerate(offsets):
        part = _slice(ir, given_value, windows, list(offset), strides)
        if kept is None:
            kept, chosen = part, splats.integer(0, offsets_type)
            continue
        stays = op_result(ir, "stablehlo.compare", flags, kept, part, **compared)
        kept = op_result(ir, "stablehlo.select", windows, stays, kept, part)
        here = splats.integer(number, offsets_type)
        chosen = op_result(ir, "stablehlo.select", offsets_type, stays, chosen, here)
    if given.has_static_shape:
        total = op_result(
            ir,
            "stablehlo.broadcast_in_dim",
            given,
            initial,
            broadcast_dimensions=ir.DenseI64ArrayAttr.get([]),
        )
    else:  # a dynamic shape: a constant's splat (``_window``)
        value = splat_value(ir, initial)
        assert value is not None
        total = Splats(ir, given_value)(value, given)
    nothing = splats(-0.0, windows)
    for number in reversed(range(len(offsets))):
        offset = offsets[number]
        picked = op_result(
            ir,
            "stablehlo.compare",
            flags,
            chosen,
            splats.integer(number, offsets_type),
            comparison_direction=ir.Attribute.parse("#stablehlo<comparison_direction EQ>"),
        )
        gradient = op_result(ir, "stablehlo.select", windows, picked, source, nothing)
        ends = _ends(offset, windows.shape, strides)
        after = [  # a dynamic dimension: the whole of it, 1 wide, a stride of 1
            0 if given.is_dynamic_dim(d) else extent - end
            for d, (extent, end) in enumerate(zip(given.shape, ends, strict=True))
        ]
        placed = op_result(
            ir,
            "stablehlo.pad",
            given,
            gradient,
            minus_zero,
            **arrays(
                edge_padding_low=list(offset),
                edge_padding_high=after,
                interior_padding=[s - 1 for s in strides],
            ),
        )
        total = op_result(ir, "stablehlo.add", given, total, placed)
    return total


def _ends(offset: tuple[int, ...], counts: list[int], strides: list[int]) -> list[int]:
    """One past the last element at ``offset`` of the windows, per dimension: ``counts``
    windows, ``strides`` apart."""
    return [o + (n - 1) * s + 1 for o, n, s in zip(offset, counts, strides, strict=True)]


def _slice(ir: Any, given: Any, windows: Any, offset: list[int], strides: list[int]) -> Any:
    """The elements of ``given`` at ``offset`` of every window (of type ``windows``): a
    ``stablehlo.slice``, or for a dynamic shape a ``stablehlo.real_dynamic_slice`` whose
    limit along a dynamic dimension is its size."""
    kind = ir.RankedTensorType(given.type)
    ends = _ends(tuple(offset), windows.shape, strides)
    if kind.has_static_shape:
        return op_result(
            ir,
            "stablehlo.slice",
            windows,
            given,
            start_indices=ir.DenseI64ArrayAttr.get(offset),
            limit_indices=ir.DenseI64ArrayAttr.get(ends),
            strides=ir.DenseI64ArrayAttr.get(strides),
        )
    limit = joined_vector(
        ir,
        [
            dimension_size(ir, given, d) if kind.is_dynamic_dim(d) else i32_vector(ir, [end])
            for d, end in enumerate(ends)
        ],
    )
    return op_result(
        ir,
        "stablehlo.real_dynamic_slice",
        windows,
        given,
        i32_vector(ir, offset),
        limit,
        i32_vector(ir, strides),
    )
