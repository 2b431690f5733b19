"""Out-of-range scatter updates made harmless where they are, with no copy of the operand.

``scatter_bounds.py`` pads the operand so that an update out of range lands in the padding:
right for any scatter, but the pad and the slice back copy the operand, so a loop that sets
one row per iteration (``x.at[i].set(row)`` in a ``fori_loop``) becomes quadratic, where
XLA updates in place. For the scatters jax writes most, this module does it in place:

- a combiner that is one elementwise op of the old and the new value (``.add``, ``.mul``,
  ``.max``, ``.min``, ``|``, ``&``): an update out of range becomes the op's identity
  (``-0.0`` for a float sum, ``-inf`` for a maximum, ...) at the index clamped into range,
  and ``combine(x, identity) == x`` for every ``x``, NaN and ``-0.0`` included;
- a combiner that returns the new value (``.set``) with one update (the loop's case): out of
  range, the update becomes the operand's own window at the clamped index, written back.

Soundness: an index in range is unchanged by the clamp and its update by the select, so it
lands as before. An index out of range has some component out of range, and its update,
whatever it becomes, leaves every element it meets as it was: the identity by its law,
the window of a lone ``.set`` because no other update writes there. Any other scatter
(``.set`` with several updates, other combiners, several operands, element types without an
identity here) is left to the padding.
"""

from __future__ import annotations

from typing import Any

from .gather_bounds import component_constant, dimension_numbers

# Element types whose identities are written here, and the bit patterns of infinity.
_INFINITIES = {"f16": "0x7C00", "bf16": "0x7F80", "f32": "0x7F800000", "f64": "0x7FF0000000000000"}
_NEGATIVE_INFINITIES = {
    "f16": "0xFC00",
    "bf16": "0xFF80",
    "f32": "0xFF800000",
    "f64": "0xFFF0000000000000",
}
_NEGATIVE_ZEROS = {
    "f16": "0x8000",
    "bf16": "0x8000",
    "f32": "0x80000000",
    "f64": "0x8000000000000000",
}
_COMBINERS = ("stablehlo.add", "stablehlo.multiply", "stablehlo.maximum", "stablehlo.minimum")
_BITWISE = ("stablehlo.or", "stablehlo.and")


def combiner(ir, scatter) -> str | None:
    """``"set"``, the name of the one elementwise op the region applies to the old and new
    value, or None (several operands, or any other region)."""
    if len(scatter.results) != 1:
        return None
    block = scatter.regions[0].blocks[0]
    operations = list(block.operations)
    old, new = block.arguments[0], block.arguments[1]
    returned = operations[-1].operands[0]
    if len(operations) == 1 and returned == new:
        return "set"
    if len(operations) != 2 or returned != operations[0].result:
        return None
    op = operations[0]
    if op.name not in _COMBINERS + _BITWISE or len(op.operands) != 2:
        return None
    if not (
        (op.operands[0] == old and op.operands[1] == new)
        or (op.operands[0] == new and op.operands[1] == old)
    ):
        return None
    return op.name


def identity(ir, op: str, element) -> str | None:
    """The dense attribute text of ``op``'s identity for ``element``; None when not known."""
    text = str(element)
    if isinstance(element, ir.IntegerType):
        integer = ir.IntegerType(element)
        width, unsigned = integer.width, integer.is_unsigned
        if width == 1:
            values = {
                "stablehlo.add": "false",
                "stablehlo.maximum": "false",
                "stablehlo.minimum": "true",
                "stablehlo.or": "false",
                "stablehlo.and": "true",
                "stablehlo.multiply": "true",
            }
            return values.get(op)
        lowest = 0 if unsigned else -(1 << (width - 1))
        highest = (1 << width) - 1 if unsigned else (1 << (width - 1)) - 1
        numbers = {
            "stablehlo.add": 0,
            "stablehlo.multiply": 1,
            "stablehlo.maximum": lowest,
            "stablehlo.minimum": highest,
            "stablehlo.or": 0,
            "stablehlo.and": highest if unsigned else -1,
        }
        found = numbers.get(op)
        return None if found is None else str(found)
    if text not in _INFINITIES:
        return None
    values = {
        "stablehlo.add": _NEGATIVE_ZEROS[text],
        "stablehlo.multiply": "1.0",
        "stablehlo.maximum": _NEGATIVE_INFINITIES[text],
        "stablehlo.minimum": _INFINITIES[text],
    }
    return values.get(op)


def mask_in_place(
    ir, scatter, addressed: list[int], limits: list[int], window: list[int], vector_dim: int
) -> bool:
    """Make the out-of-range updates of ``scatter`` harmless in place, as the module doc
    says; False (nothing changed) when its combiner is not one this module knows."""
    kind = combiner(ir, scatter)
    if kind is None:
        return False
    indices, updates = scatter.operands[1], scatter.operands[2]
    indices_type = ir.RankedTensorType(indices.type)
    updates_type = ir.RankedTensorType(updates.type)
    batch = [size for d, size in enumerate(indices_type.shape) if d != vector_dim]
    filler_text = None
    if kind == "set":
        if any(size != 1 for size in batch):
            return False
    else:
        filler_text = identity(ir, kind, updates_type.element_type)
        if filler_text is None:
            return False
    numbers_window = _update_scatter_dims(ir, scatter, updates_type.rank)
    with ir.InsertionPoint(scatter), scatter.location:

        def constant(values: list[int]) -> Any:
            return component_constant(ir, values, indices_type, vector_dim)

        outside = outside_range(ir, indices, limits, vector_dim)
        clamped = _op(
            ir,
            "stablehlo.clamp",
            indices_type,
            [constant([0] * len(limits)), indices, constant(limits)],
        )
        dropped = _any_component(ir, outside, vector_dim, batch)
        mask_type = ir.RankedTensorType.get(updates_type.shape, ir.IntegerType.get_signless(1))
        mask = _op(
            ir,
            "stablehlo.broadcast_in_dim",
            mask_type,
            [dropped],
            {"broadcast_dimensions": ir.DenseI64ArrayAttr.get(numbers_window)},
        )
        if filler_text is None:
            filler = _old_window(
                ir, scatter.operands[0], clamped, addressed, window, vector_dim, updates_type
            )
        else:
            scalar = ir.RankedTensorType.get([], updates_type.element_type)
            value = ir.Attribute.parse(f"dense<{filler_text}> : {scalar}")
            one = _op(ir, "stablehlo.constant", scalar, [], {"value": value})
            filler = _op(
                ir,
                "stablehlo.broadcast_in_dim",
                updates_type,
                [one],
                {"broadcast_dimensions": ir.DenseI64ArrayAttr.get([])},
            )
        masked = _op(ir, "stablehlo.select", updates_type, [mask, filler, updates])
    scatter.operands[1] = clamped
    scatter.operands[2] = masked
    return True


def outside_range(ir, indices, limits: list[int], vector_dim: int) -> Any:
    """Per index component: is it outside ``[0, limit]`` (``i1``, the shape of ``indices``)."""
    indices_type = ir.RankedTensorType(indices.type)
    flags = ir.RankedTensorType.get(indices_type.shape, ir.IntegerType.get_signless(1))

    def constant(values: list[int]) -> Any:
        return component_constant(ir, values, indices_type, vector_dim)

    outside = _op(ir, "stablehlo.compare", flags, [indices, constant(limits)], _direction(ir, "GT"))
    if ir.IntegerType(indices_type.element_type).is_unsigned:
        return outside
    zeros = constant([0] * len(limits))
    below = _op(ir, "stablehlo.compare", flags, [indices, zeros], _direction(ir, "LT"))
    return _op(ir, "stablehlo.or", flags, [outside, below])


def _update_scatter_dims(ir, scatter, rank: int) -> list[int]:
    numbers = dimension_numbers(str(scatter.attributes["scatter_dimension_numbers"]))
    windows = set(numbers.get("update_window_dims", []))
    return [d for d in range(rank) if d not in windows]


def _any_component(ir, outside, vector_dim: int, batch: list[int]) -> Any:
    """Per index vector: is any of its components out of range (shape ``batch``)."""
    outside_type = ir.RankedTensorType(outside.type)
    boolean = ir.IntegerType.get_signless(1)
    if vector_dim == outside_type.rank:
        return outside
    shape = list(outside_type.shape)
    found = None
    for k in range(shape[vector_dim]):
        starts, limits = [0] * len(shape), list(shape)
        starts[vector_dim], limits[vector_dim] = k, k + 1
        piece_shape = list(shape)
        piece_shape[vector_dim] = 1
        attributes = {
            "start_indices": ir.DenseI64ArrayAttr.get(starts),
            "limit_indices": ir.DenseI64ArrayAttr.get(limits),
            "strides": ir.DenseI64ArrayAttr.get([1] * len(shape)),
        }
        piece_type = ir.RankedTensorType.get(piece_shape, boolean)
        piece = _op(ir, "stablehlo.slice", piece_type, [outside], attributes)
        found = piece if found is None else _op(ir, "stablehlo.or", piece_type, [found, piece])
    return _op(ir, "stablehlo.reshape", ir.RankedTensorType.get(batch, boolean), [found])


def _old_window(
    ir, operand, clamped, addressed: list[int], window: list[int], vector_dim: int, updates_type
) -> Any:
    """The operand's window at the one clamped index vector, in the updates' shape."""
    indices_type = ir.RankedTensorType(clamped.type)
    element = indices_type.element_type
    components = len(addressed)
    vector = _op(ir, "stablehlo.reshape", ir.RankedTensorType.get([components], element), [clamped])
    scalar_type = ir.RankedTensorType.get([], element)
    operand_type = ir.RankedTensorType(operand.type)
    zero = _op(
        ir,
        "stablehlo.constant",
        scalar_type,
        [],
        {"value": ir.Attribute.parse(f"dense<0> : {scalar_type}")},
    )
    starts = []
    for d in range(operand_type.rank):
        if d not in addressed:
            starts.append(zero)
            continue
        k = addressed.index(d)
        attributes = {
            "start_indices": ir.DenseI64ArrayAttr.get([k]),
            "limit_indices": ir.DenseI64ArrayAttr.get([k + 1]),
            "strides": ir.DenseI64ArrayAttr.get([1]),
        }
        piece = _op(
            ir, "stablehlo.slice", ir.RankedTensorType.get([1], element), [vector], attributes
        )
        starts.append(_op(ir, "stablehlo.reshape", scalar_type, [piece]))
    window_type = ir.RankedTensorType.get(window, operand_type.element_type)
    sizes = {"slice_sizes": ir.DenseI64ArrayAttr.get(window)}
    old = _op(ir, "stablehlo.dynamic_slice", window_type, [operand, *starts], sizes)
    return _op(ir, "stablehlo.reshape", updates_type, [old])


def _direction(ir, direction: str) -> dict:
    return {
        "comparison_direction": ir.Attribute.parse(f"#stablehlo<comparison_direction {direction}>")
    }


def _op(ir, name: str, type_, operands: list[Any], attributes: dict | None = None) -> Any:
    return ir.Operation.create(
        name, results=[type_], operands=operands, attributes=attributes or {}
    ).result
