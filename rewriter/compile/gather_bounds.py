"""``stablehlo.gather`` with its start indices clamped, as StableHLO defines them.

A gather reads, for each index vector, the slice that starts there; StableHLO (and XLA)
clamp each start index into ``[0, operand_dim - slice_size]``, so that every slice lies in
the operand: jax relies on it for ``x[i]`` and ``jnp.take(..., mode="clip")``, which pass
indices out of range as they are. IREE 3.13's lowering reads at the index unclamped, out of
the operand's memory: ``x[i]`` of a 6x7 array with ``i = 9`` gave garbage (1e-38, -25.5)
where jax gives row 5, on both paths. Both paths clamp the indices first: a
``stablehlo.clamp`` of the start indices between 0 and, for each component of the index
vector, ``operand_dim - slice_size`` of the dimension it starts (``start_index_map``).
Gathers of dynamic shapes are left as they are.
"""

from __future__ import annotations

from typing import Any

from .mlir_walk import operations_named


def clamp_gather_indices(module: Any) -> int:
    """Clamp, in place, the start indices of every static ``stablehlo.gather`` of the
    ``iree.compiler.ir`` module (in its context); return how many."""
    from iree.compiler import ir

    clamped = 0
    for gather in operations_named(module, "stablehlo.gather"):
        operand_type = ir.RankedTensorType(gather.operands[0].type)
        indices = gather.operands[1]
        indices_type = ir.RankedTensorType(indices.type)
        if not (operand_type.has_static_shape and indices_type.has_static_shape):
            continue
        if not isinstance(indices_type.element_type, ir.IntegerType):
            continue
        numbers = dimension_numbers(str(gather.attributes["dimension_numbers"]))
        sizes = list(ir.DenseI64ArrayAttr(gather.attributes["slice_sizes"]))
        start_map = numbers.get("start_index_map", [])
        vector_dim = numbers.get("index_vector_dim", [0])[0]  # 0 when not printed
        limits = [operand_type.shape[d] - sizes[d] for d in start_map]
        with ir.InsertionPoint(gather), gather.location:
            high = component_constant(ir, limits, indices_type, vector_dim)
            low = component_constant(ir, [0] * len(limits), indices_type, vector_dim)
            clamp = ir.Operation.create(
                "stablehlo.clamp", results=[indices_type], operands=[low, indices, high]
            )
        gather.operands[1] = clamp.result
        clamped += 1
    return clamped


def component_constant(ir, values: list[int], indices_type, vector_dim: int) -> Any:
    """A tensor of ``indices_type`` whose index vectors (along ``vector_dim``; one scalar
    component when it is the rank) are all ``values``, made at the insertion point."""
    import numpy as np

    element = ir.IntegerType(indices_type.element_type)
    dtype = np.dtype(f"{'u' if element.is_unsigned else ''}int{element.width}")
    if vector_dim < indices_type.rank:
        vector = ir.RankedTensorType.get([len(values)], element)
        source, dimensions = _constant(ir, np.array(values, dtype), vector), [vector_dim]
    else:
        scalar = ir.RankedTensorType.get([], element)
        source, dimensions = _constant(ir, np.array(values[0], dtype), scalar), []
    return ir.Operation.create(
        "stablehlo.broadcast_in_dim",
        results=[indices_type],
        operands=[source],
        attributes={"broadcast_dimensions": ir.DenseI64ArrayAttr.get(dimensions)},
    ).result


def _constant(ir, values, type_) -> Any:
    attribute = ir.DenseElementsAttr.get(values, type=type_)
    return ir.Operation.create(
        "stablehlo.constant", results=[type_], attributes={"value": attribute}
    ).result


def dimension_numbers(printed: str) -> dict[str, list[int]]:
    """The integer lists of a printed ``#stablehlo.gather<...>``: ``offset_dims = [1],
    start_index_map = [0], index_vector_dim = 1`` and the others."""
    import re

    found: dict[str, list[int]] = {}
    for name, value in re.findall(r"(\w+) = (\[[^\]]*\]|-?\d+)", printed):
        numbers = value.strip("[]")
        found[name] = [int(n) for n in numbers.split(",") if n.strip()]
    return found
