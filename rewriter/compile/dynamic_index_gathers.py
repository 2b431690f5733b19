"""Gathers at indices of dynamic shape or from an array of dynamic shape (an embedding
lookup ``table[tokens]``, ``jnp.take``, ``jnp.interp`` of a symbolic batch; ``x[::-1]``,
``x[::2]`` along a symbolic dimension) as a loop that reads each element.

Exported with a symbolic batch size, ``table[tokens]`` of ``(b, 7)`` tokens is a
``stablehlo.gather`` from the static table at start indices of dynamic shape, and
``x[::-1]`` of a ``(b, 4)`` array a gather from ``x`` at the ``b`` indices ``b - 1`` down
to 0. IREE 3.13's input pipeline flattens those indices with a ``stablehlo.reshape`` of
dynamic shape, an invalid one ("'stablehlo.reshape' op result #0 must be statically
shaped"), on both paths, and does so for a gather at indices collapsed beforehand as well.

Along a symbolic dimension that is not the first (``x[:, ::-1]``, ``x[:, ::2]`` of
``symbolic_shape("b, t, 4")``) jax writes a ``stablehlo.dynamic_gather``, whose slice sizes
(the batch's among them) are an operand; IREE lowers none. The same function takes it,
reading the slice sizes at run time.

Both paths write such a gather, in a function of its own, as a ``linalg.generic`` over the
result that computes each element's operand position as StableHLO defines a gather and
reads it (``tensor.extract``):

- the result's dimensions not in ``offset_dims`` are the batch dimensions: with the index
  vector dimension put back (``index_vector_dim``, 0 when not printed; none when it is
  the indices' rank), they select the start index vector;
- start index ``k`` goes to operand dimension ``start_index_map[k]``, clamped into
  ``[0, size - slice_size]`` of that dimension (the others start at 0), the size read
  with ``tensor.dim`` when it is dynamic;
- the offset dimensions, in order, go to the operand dimensions not collapsed, in order
  (a dynamic one is as long as its slice);
- the operand position is the start plus the offset.

Taken: no batching dimensions, an operand of float or signless integer elements,
signed or unsigned indices of at most 32 bits or signless 64-bit ones (read as signed, as
they compare with sizes below 2^63), and a result of the operand's element type.
"""

from __future__ import annotations

from typing import Any

from .gather_bounds import dimension_numbers
from .mlir_walk import dimension_sizes, outline_into_functions, size_value, tensor_text

GATHER = "stablehlo.gather"
DYNAMIC_GATHER = "stablehlo.dynamic_gather"
_PREFIX = "rw_dynamic_index_gather_"
_SIZED_PREFIX = "rw_dynamic_sized_gather_"
_BATCHING = ("operand_batching_dims", "start_indices_batching_dims")


def dynamic_index_gathers(module: Any) -> int:
    """Rewrite, in place, the gathers the module's doc names of the ``iree.compiler.ir``
    ``module`` (in its context); return how many."""
    count = outline_into_functions(module, GATHER, _PREFIX, _gather_function)
    return count + outline_into_functions(module, DYNAMIC_GATHER, _SIZED_PREFIX, _gather_function)


def _gather_function(ir: Any, operation: Any, symbol: str) -> str | None:
    """``func.func private @symbol(%operand, %indices)`` computing the gather
    ``operation`` element by element; None for a gather the module's doc does not name."""
    operand = ir.RankedTensorType(operation.operands[0].type)
    indices = ir.RankedTensorType(operation.operands[1].type)
    result = ir.RankedTensorType(operation.results[0].type)
    if operand.has_static_shape and indices.has_static_shape:
        return None
    element = operand.element_type
    if result.element_type != element or not _plain(ir, element):
        return None
    index_element = indices.element_type
    if not isinstance(index_element, ir.IntegerType):
        return None
    unsigned = index_element.is_unsigned
    if index_element.is_signed or (unsigned and index_element.width > 32):
        return None
    numbers = dimension_numbers(str(operation.attributes["dimension_numbers"]))
    if any(numbers.get(name) for name in _BATCHING):
        return None
    offsets = numbers.get("offset_dims", [])
    collapsed = numbers.get("collapsed_slice_dims", [])
    starts = numbers.get("start_index_map", [])
    vector_dim = numbers.get("index_vector_dim", [0])[0]
    kept = [d for d in range(operand.rank) if d not in collapsed]
    sized = operation.name == DYNAMIC_GATHER  # slice sizes as an operand, read at run time
    if sized:
        sizes_type = ir.RankedTensorType(operation.operands[2].type)
        if not sizes_type.has_static_shape or sizes_type.shape != [operand.rank]:
            return None
        slices: list[int | None] = [None] * operand.rank
        arguments = f"%operand: {operand}, %indices: {indices}, %slice_sizes: {sizes_type}"
    else:
        slices = list(ir.DenseI64ArrayAttr(operation.attributes["slice_sizes"]))
        arguments = f"%operand: {operand}, %indices: {indices}"
    if len(kept) != len(offsets) or any(slices[d] not in (1, None) for d in collapsed):
        return None

    lines = [f"func.func private @{symbol}({arguments}) -> {result} {{"]
    slice_size: dict[int, str] = {}  # a slice size read from the operand, as an index
    if sized:
        for d in range(operand.rank):
            lines.append(f"  %slice_at{d} = arith.constant {d} : index")
            lines.append(
                f"  %slice_raw{d} = tensor.extract %slice_sizes[%slice_at{d}] : {sizes_type}"
            )
            lines.append(
                f"  %slice_size{d} = arith.index_cast %slice_raw{d} : "
                f"{sizes_type.element_type} to index"
            )
            slice_size[d] = f"%slice_size{d}"
    read = "%indices"
    if unsigned:
        signless = tensor_text(dimension_sizes(indices), "i64")
        lines.append(f"  %signless = stablehlo.convert %indices : ({indices}) -> {signless}")
        read, index_type, cast = "%signless", signless, "i64"
    else:
        index_type, cast = str(indices), str(index_element)
    # The indices' dimensions that are the result's batch dimensions, in order.
    batch_of_indices = [d for d in range(indices.rank) if d != vector_dim]
    batch_of_result = [d for d in range(result.rank) if d not in offsets]
    sizes = []
    for d in range(result.rank):
        if not result.is_dynamic_dim(d):
            continue
        if d in offsets:  # an offset dimension: the slice's size along its operand dimension
            if not sized:
                return None
            sizes.append(slice_size[kept[offsets.index(d)]])
            continue
        source = batch_of_indices[batch_of_result.index(d)]
        lines.append(f"  %dimension{d} = arith.constant {source} : index")
        lines.append(f"  %size{d} = tensor.dim {read}, %dimension{d} : {index_type}")
        sizes.append(f"%size{d}")
    last_of = {}
    for k, d in enumerate(starts):
        if operand.is_dynamic_dim(d) or sized:
            size = size_value(lines, f"operand_size{d}", "operand", operand, d)
            if not sized:
                lines.append(f"  %slice_size{d} = arith.constant {slices[d]} : index")
            lines.append(f"  %last{k} = arith.subi {size}, %slice_size{d} : index")
            last_of[k] = f"%last{k}"
    loops = ", ".join(f"d{d}" for d in range(result.rank))
    parallel = ", ".join(['"parallel"'] * result.rank)
    lines += [
        f"  %empty = tensor.empty({', '.join(sizes)}) : {result}",
        f"  %gathered = linalg.generic {{indexing_maps = [affine_map<({loops}) -> ({loops})>], "
        f"iterator_types = [{parallel}]}} outs(%empty : {result}) {{",
        f"  ^bb0(%unused: {element}):",
        "    %zero = arith.constant 0 : index",
    ]
    lines += [f"    %i{d} = linalg.index {d} : index" for d in range(result.rank)]
    coordinates = [f"%i{d}" for d in batch_of_result]
    start_of: dict[int, str] = {}
    for k, d in enumerate(starts):
        at = list(coordinates)
        if vector_dim < indices.rank:
            lines.append(f"    %k{k} = arith.constant {k} : index")
            at.insert(vector_dim, f"%k{k}")
        lines += [
            f"    %raw{k} = tensor.extract {read}[{', '.join(at)}] : {index_type}",
            f"    %wide{k} = arith.index_cast %raw{k} : {cast} to index",
            f"    %above{k} = arith.maxsi %wide{k}, %zero : index",
        ]
        if k not in last_of:
            last_of[k] = f"%last{k}"
            slice_d = slices[d]
            assert slice_d is not None  # a static slice size: read at run time otherwise
            lines.append(f"    %last{k} = arith.constant {operand.shape[d] - slice_d} : index")
        lines.append(f"    %start{k} = arith.minsi %above{k}, {last_of[k]} : index")
        start_of[d] = f"%start{k}"
    offset_of = {d: f"%i{offsets[n]}" for n, d in enumerate(kept)}
    position = []
    for d in range(operand.rank):
        start, offset = start_of.get(d), offset_of.get(d)
        if start is not None and offset is not None:
            lines.append(f"    %position{d} = arith.addi {start}, {offset} : index")
            position.append(f"%position{d}")
        else:
            position.append(start or offset or "%zero")
    lines += [
        f"    %element = tensor.extract %operand[{', '.join(position)}] : {operand}",
        f"    linalg.yield %element : {element}",
        f"  }} -> {result}",
        f"  return %gathered : {result}",
        "}",
    ]
    return "\n".join(lines)


def _plain(ir: Any, element: Any) -> bool:
    """Whether ``element`` is a float or a signless integer type, which linalg reads."""
    if isinstance(element, ir.FloatType):
        return True
    return isinstance(element, ir.IntegerType) and element.is_signless
