"""Reshapes of a symbolic batch, and its products with a matrix or a vector, as the tensor
dialect's collapses and expansions and linalg's products of a matrix and a vector.

Exported with a symbolic batch size, ``x.reshape(-1, 8)`` of a ``(b, 6, 8)`` array is a
``stablehlo.dynamic_reshape``, and ``x @ w`` a ``stablehlo.dot_general`` that IREE's input
pipeline turns into one (a product of ``(b * 6, 8)`` by ``(8, 4)``). IREE 3.13 lowers no
``dynamic_reshape`` ("failed to legalize operation 'stablehlo.dynamic_reshape'"), on both
paths: a transformer's layers of a symbolic batch did not compile. It lowers
``tensor.collapse_shape`` and ``tensor.expand_shape`` of dynamic shape, and a product of a
matrix of dynamic rows.

Both paths write, each in a function of its own that IREE inlines:

- a ``dynamic_reshape`` whose operand and result have one dynamic dimension each, and
  whose static dimensions before and after them match in groups of equal products
  (``groups``), as a ``tensor.collapse_shape`` (when the result has fewer dimensions) or a
  ``tensor.expand_shape`` (more; the new dynamic size read from the reshape's shape
  operand). Both keep the elements in row-major order, as a reshape does;
- any other ``dynamic_reshape`` (several dynamic sizes on either side, ``x.reshape(-1)``
  of a ``(b, n)`` array, or a merge and a split at once, ``(b, 8)`` to ``(2b, 4)``) as a
  ``tensor.reshape`` to the sizes of its shape operand, as indices (MLIR 22 lowers a
  ``memref.reshape`` to sizes of another type to an unrealized cast that LLVM IR cannot
  hold, and crashes in ``expand-strided-metadata`` on a ``memref.expand_shape`` of two
  dynamic sizes in one group); one to a single dimension as a collapse of all dimensions,
  which IREE lowers where it leaves that ``tensor.reshape`` a ``dynamic_reshape``. Row-major
  order again;
- a ``dot_general`` of an operand of rank 3 or more, of dynamic shape, and a matrix (of
  dynamic sizes too), contracting one dimension of each and no batch dimensions, whose
  large operand is on the right or contracted along another dimension than its last
  (``einsum("st,bsk->btk")``, ``jax.image.resize``'s product), first as the product of
  the large operand transposed (that dimension last) on the left and the matrix,
  transposed back to the ``dot_general``'s order of dimensions (IREE's pipeline makes it
  a ``dynamic_reshape`` it cannot lower);
- a ``dot_general`` of a left operand of rank 3 or more, of dynamic shape, contracted
  along its last dimension only, with a matrix and no batch dimensions, as the
  product of the left operand collapsed to a matrix (its leading dimensions together)
  with the matrix, expanded back (reshaped back, of two dynamic sizes or more: ``(b, t,
  4) @ w``, whose expansion ``expand-strided-metadata`` crashes on). Row ``(i, j)`` of a
  ``(b, 6, 8)`` left operand is row ``6 i + j`` of the collapsed one: the same dot
  products;
- a ``dot_general`` of an operand of dynamic shape with a vector (``x @ v``, ``v @ x.T``,
  ``x.T @ y`` of a ``(b,)`` vector ``y``), which IREE's input pipeline makes a product of
  matrices between two ``stablehlo.reshape``s of dynamic shape, invalid ones ("'stablehlo
  .reshape' op result #0 must be statically shaped", on both paths), as a
  ``linalg.matvec`` (the other operand contracted along its last dimension) or a
  ``linalg.vecmat`` (along its first) on a zero-filled result; an operand of rank 3 or
  more is collapsed to that matrix first and the result expanded back. Both ops are the
  product's sums of products; only the order of the additions may differ from XLA's, as
  in any product. Products that convert their elements (``wide_accumulation``'s) are left
  alone;
- a ``dot_general`` of operands of dynamic shape contracting several adjacent dimensions
  of each, in the same order (a weight's gradient, ``einsum("btd,bte->de")``, which IREE
  makes a ``dynamic_reshape``), as the product of the operands with those dimensions
  collapsed into one: row-major order keeps the pairs of contracted elements together, so
  the sum is over the same products.
"""

from __future__ import annotations

from typing import Any

from .gather_bounds import dimension_numbers
from .mlir_walk import (
    dimension_sizes,
    op_result,
    outline_into_functions,
    replace_each,
    tensor_text,
)

DYNAMIC_RESHAPE = "stablehlo.dynamic_reshape"
DOT_GENERAL = "stablehlo.dot_general"


def symbolic_reshapes(module: Any) -> int:
    """Rewrite, in place, the ``dynamic_reshape``s and ``dot_general``s of the
    ``iree.compiler.ir`` ``module`` (in its context) that the module's doc names; return
    how many."""
    reshapes = outline_into_functions(
        module, DYNAMIC_RESHAPE, "rw_dynamic_reshape_", _reshape_function
    )
    contractions = outline_into_functions(
        module, DOT_GENERAL, "rw_merged_contraction_", _contraction_function
    )
    vectors = outline_into_functions(
        module, DOT_GENERAL, "rw_vector_product_", _vector_product_function
    )
    turned = replace_each(module, DOT_GENERAL, _turnable, _turned_product)
    products = outline_into_functions(
        module, DOT_GENERAL, "rw_collapsed_product_", _product_function
    )
    return reshapes + contractions + vectors + turned + products


def _turnable(ir: Any, operation: Any) -> tuple[int, list[int], list[int]] | None:
    """For a ``dot_general`` of an operand of rank 3 or more and dynamic shape and a matrix,
    contracting one dimension of each, not yet in the form ``_product_function`` takes (the
    large operand on the left, contracted along its last dimension): which operand is the
    large one, and the permutations that bring its contracted dimension last and the
    product's dimensions back in the ``dot_general``'s order; else None."""
    left, right = _type(ir, operation.operands[0]), _type(ir, operation.operands[1])
    if left is None or right is None or _type(ir, operation.results[0]) is None:
        return None
    contracting = _plain_product(operation)
    if contracting is None:
        return None
    large = 0 if left.rank >= 3 and right.rank == 2 else 1
    big, matrix = (left, right) if large == 0 else (right, left)
    if big.rank < 3 or matrix.rank != 2 or big.has_static_shape:
        return None
    contracted = contracting[large][0]
    if large == 0 and contracted == big.rank - 1:
        return None  # _product_function's form already
    kept = [d for d in range(big.rank) if d != contracted]
    to_last = [*kept, contracted]
    # the new product: the large operand's kept dimensions, then the matrix's free one; the
    # dot_general's: the left operand's free dimensions first
    back = list(range(big.rank)) if large == 0 else [big.rank - 1, *range(big.rank - 1)]
    return large, to_last, back


def _turned_product(ir: Any, operation: Any, form: tuple[int, list[int], list[int]]) -> Any:
    """The ``dot_general`` with its large operand transposed to be contracted along its last
    dimension and put on the left, the product transposed back (``_turnable``)."""
    large, to_last, back = form
    big_value = operation.operands[large]
    matrix_value = operation.operands[1 - large]
    big = ir.RankedTensorType(big_value.type)
    contracting = _plain_product(operation)
    assert contracting is not None
    matrix_contracted = contracting[1 - large][0]
    turned_type = ir.RankedTensorType.get([big.shape[d] for d in to_last], big.element_type)
    turned = op_result(
        ir,
        "stablehlo.transpose",
        turned_type,
        big_value,
        permutation=ir.DenseI64ArrayAttr.get(to_last),
    )
    result = ir.RankedTensorType(operation.results[0].type)
    inverse = [back.index(d) for d in range(result.rank)]
    product_type = ir.RankedTensorType.get([result.shape[d] for d in inverse], result.element_type)
    attributes = {
        "dot_dimension_numbers": ir.Attribute.parse(
            f"#stablehlo.dot<lhs_contracting_dimensions = [{big.rank - 1}], "
            f"rhs_contracting_dimensions = [{matrix_contracted}]>"
        )
    }
    if "precision_config" in operation.attributes:
        attributes["precision_config"] = operation.attributes["precision_config"]
    product = op_result(
        ir, "stablehlo.dot_general", product_type, turned, matrix_value, **attributes
    )
    if back == sorted(back):
        return product
    return op_result(
        ir,
        "stablehlo.transpose",
        result,
        product,
        permutation=ir.DenseI64ArrayAttr.get(back),
    )


def groups(given: list[int | None], wanted: list[int | None]) -> list[list[int]] | None:
    """The reassociation of a collapse from ``given`` sizes to ``wanted`` ones (None: the
    one dynamic size of each): for each wanted dimension, the given ones it takes. The
    static wanted dimensions before the dynamic one take given ones from the left, those
    after it from the right, each as many as multiply to its size; the dynamic one takes
    what is left, the dynamic given one among them. None when that fails."""
    if given.count(None) != 1 or wanted.count(None) != 1:
        return None
    dynamic = wanted.index(None)
    before: list[list[int]] = []
    start = 0
    for size in wanted[:dynamic]:
        group, start = _take(given, size, start, 1)
        if group is None:
            return None
        before.append(group)
    after: list[list[int]] = []
    end = len(given) - 1
    for size in reversed(wanted[dynamic + 1 :]):
        group, end = _take(given, size, end, -1)
        if group is None:
            return None
        after.insert(0, sorted(group))
    middle = list(range(start, end + 1))
    if given.index(None) not in middle:
        return None
    return [*before, middle, *after]


def _take(
    given: list[int | None], size: int | None, position: int, step: int
) -> tuple[list[int] | None, int]:
    """The static given dimensions from ``position`` on, in the direction ``step``, whose
    sizes multiply to ``size``, and the position after them; None when they do not."""
    group: list[int] = []
    product = 1
    while 0 <= position < len(given) and (not group or product < (size or 0)):
        current = given[position]
        if current is None:
            return None, position
        product *= current
        group.append(position)
        position += step
    return (group if group and product == size else None), position


def _type(ir: Any, value: Any) -> Any:
    kind = value.type
    return ir.RankedTensorType(kind) if isinstance(kind, ir.RankedTensorType) else None


def _text_of(reassociation: list[list[int]]) -> str:
    return "[" + ", ".join("[" + ", ".join(map(str, group)) + "]" for group in reassociation) + "]"


def _reshape_function(ir: Any, operation: Any, symbol: str) -> str | None:
    """``func.func private @symbol`` computing the ``dynamic_reshape`` ``operation`` by a
    collapse or an expansion; None for a form the module's doc does not name."""
    given, shape = _type(ir, operation.operands[0]), _type(ir, operation.operands[1])
    result = _type(ir, operation.results[0])
    if given is None or shape is None or result is None or not given.rank or not result.rank:
        return None
    header = f"func.func private @{symbol}(%given: {given}, %shape: {shape}) -> {result} {{"
    body = _by_groups(given, shape, result)
    if body is None:
        body = _through_one_dimension(given, shape, result)
    return "\n".join([header, *body, f"  return %reshaped : {result}", "}"])


def _by_groups(given: Any, shape: Any, result: Any) -> list[str] | None:
    """The lines of ``%reshaped``, a collapse or an expansion by ``groups``; None when the
    sizes do not match in groups."""
    if given.rank == result.rank:
        return None
    if result.rank < given.rank:
        collapse = groups(dimension_sizes(given), dimension_sizes(result))
        if collapse is None:
            return None
        return [
            f"  %reshaped = tensor.collapse_shape %given {_text_of(collapse)} "
            f": {given} into {result}"
        ]
    expand = groups(dimension_sizes(result), dimension_sizes(given))
    if expand is None:
        return None
    body: list[str] = []
    sizes = ", ".join(_result_sizes(body, shape, result))
    body.append(
        f"  %reshaped = tensor.expand_shape %given {_text_of(expand)} output_shape [{sizes}] "
        f": {given} into {result}"
    )
    return body


def _result_sizes(body: list[str], shape: Any, result: Any) -> list[str]:
    """The result's sizes: its static ones, and its dynamic ones read from the reshape's
    shape operand by lines appended to ``body``."""
    return [
        _size_read(body, shape, d) if result.is_dynamic_dim(d) else str(result.shape[d])
        for d in range(result.rank)
    ]


def _size_read(body: list[str], shape: Any, d: int) -> str:
    """Size ``d`` of the reshape's shape operand as an index, read by lines appended to
    ``body``."""
    body += [
        f"  %at{d} = arith.constant {d} : index",
        f"  %read{d} = tensor.extract %shape[%at{d}] : {shape}",
    ]
    if str(shape.element_type) == "index":
        return f"%read{d}"
    body.append(f"  %size{d} = arith.index_cast %read{d} : {shape.element_type} to index")
    return f"%size{d}"


def _through_one_dimension(given: Any, shape: Any, result: Any) -> list[str]:
    """The lines of ``%reshaped``, a ``tensor.reshape`` to the reshape's shape operand, or a
    collapse of every dimension into one for a 1-D result: any reshape, several dynamic
    sizes on either side (``x.reshape(-1)`` of a ``(b, n)`` array), or a merge and a
    split at once."""
    if result.rank == 1 and given.rank > 1:  # all in one: IREE lowers the collapse
        every = [list(range(given.rank))]
        flat = tensor_text([None], given.element_type)
        return [
            f"  %flat = tensor.collapse_shape %given {_text_of(every)} : {given} into {flat}",
            f"  %reshaped = tensor.cast %flat : {flat} to {result}",
        ]
    # The sizes as indices: MLIR 22 lowers a reshape to sizes of another type to an
    # unrealized cast that LLVM IR cannot hold.
    lines: list[str] = []
    sizes = [_size_read(lines, shape, d) for d in range(result.rank)]
    vector = f"tensor<{result.rank}xindex>"
    return [
        *lines,
        f"  %sizes = tensor.from_elements {', '.join(sizes)} : {vector}",
        f"  %reshaped = tensor.reshape %given(%sizes) : ({given}, {vector}) -> {result}",
    ]


def _plain_product(operation: Any) -> tuple[list[int], list[int]] | None:
    """The contracting dimensions (left, right) of the ``dot_general`` ``operation``, one
    each; None when it has batch dimensions or an attribute a rewritten product would lose
    (an algorithm)."""
    numbers = dimension_numbers(str(operation.attributes["dot_dimension_numbers"]))
    if numbers.get("lhs_batching_dimensions") or numbers.get("rhs_batching_dimensions"):
        return None
    left = numbers.get("lhs_contracting_dimensions", [])
    right = numbers.get("rhs_contracting_dimensions", [])
    attributes = operation.attributes
    names = {attributes[index].name for index in range(len(attributes))}
    if len(left) != 1 or len(right) != 1:
        return None
    return (left, right) if names <= {"dot_dimension_numbers", "precision_config"} else None


def _contraction_function(ir: Any, operation: Any, symbol: str) -> str | None:
    """``func.func private @symbol`` computing the ``dot_general`` ``operation``, which
    contracts several adjacent dimensions of operands of dynamic shape, with each
    operand's contracted dimensions collapsed into one; None for another product."""
    left, right = _type(ir, operation.operands[0]), _type(ir, operation.operands[1])
    result = _type(ir, operation.results[0])
    if left is None or right is None or result is None:
        return None
    if left.has_static_shape and right.has_static_shape:
        return None
    numbers = dimension_numbers(str(operation.attributes["dot_dimension_numbers"]))
    if numbers.get("lhs_batching_dimensions") or numbers.get("rhs_batching_dimensions"):
        return None
    attributes = operation.attributes
    names = {attributes[index].name for index in range(len(attributes))}
    if not names <= {"dot_dimension_numbers", "precision_config"}:
        return None
    contracted = (
        numbers.get("lhs_contracting_dimensions", []),
        numbers.get("rhs_contracting_dimensions", []),
    )
    if len(contracted[0]) < 2 or len(contracted[1]) != len(contracted[0]):
        return None
    lines = [f"func.func private @{symbol}(%left: {left}, %right: {right}) -> {result} {{"]
    merged = []
    for name, kind, dims in (("left", left, contracted[0]), ("right", right, contracted[1])):
        if dims != list(range(dims[0], dims[0] + len(dims))):
            return None  # not adjacent and in order: a transpose first, left to IREE
        sizes = dimension_sizes(kind)
        inside = [sizes[d] for d in dims]
        size = None if None in inside else _product(inside)
        kept = sizes[: dims[0]] + [size] + sizes[dims[-1] + 1 :]
        grouping = [[d] for d in range(dims[0])] + [dims]
        grouping += [[d] for d in range(dims[-1] + 1, kind.rank)]
        collapsed = tensor_text(kept, kind.element_type)
        lines.append(
            f"  %{name}_merged = tensor.collapse_shape %{name} {_text_of(grouping)} "
            f": {kind} into {collapsed}"
        )
        merged.append((dims[0], collapsed))
    (left_at, left_type), (right_at, right_type) = merged
    lines.append(
        f"  %product = stablehlo.dot_general %left_merged, %right_merged, contracting_dims = "
        f"[{left_at}] x [{right_at}] : ({left_type}, {right_type}) -> {result}"
    )
    lines += [f"  return %product : {result}", "}"]
    return "\n".join(lines)


def _vector_product_function(ir: Any, operation: Any, symbol: str) -> str | None:
    """``func.func private @symbol`` computing the ``dot_general`` ``operation`` of an
    operand of dynamic shape and a vector as ``linalg.matvec`` or ``linalg.vecmat``; None
    for a form the module's doc does not name."""
    left, right = _type(ir, operation.operands[0]), _type(ir, operation.operands[1])
    result = _type(ir, operation.results[0])
    contracting = _plain_product(operation)
    if left is None or right is None or result is None or contracting is None:
        return None
    if (left.rank == 1) == (right.rank == 1) or left.has_static_shape and right.has_static_shape:
        return None
    element = result.element_type
    if left.element_type != element or right.element_type != element:
        return None  # a product that converts: wide_accumulation's, or none to rewrite
    if not isinstance(element, (ir.FloatType, ir.IntegerType)):
        return None
    vector_on_right = right.rank == 1
    other, name = (left, "%left") if vector_on_right else (right, "%right")
    contracted = contracting[0 if vector_on_right else 1][0]
    if contracted not in (0, other.rank - 1):
        return None
    lines = [f"func.func private @{symbol}(%left: {left}, %right: {right}) -> {result} {{"]
    # The other operand as a matrix whose columns (matvec) or rows (vecmat) are contracted.
    kept = [d for d in range(other.rank) if d != contracted]
    sizes = dimension_sizes(other)
    free = None if any(sizes[d] is None for d in kept) else _product([sizes[d] for d in kept])
    matrix_sizes = [free, sizes[contracted]] if contracted else [sizes[0], free]
    matrix = tensor_text(matrix_sizes, element)
    if other.rank == 2:
        lines.append(f"  %matrix = tensor.cast {name} : {other} to {matrix}")
    else:
        groups = [kept, [contracted]] if contracted else [[0], kept]
        lines.append(
            f"  %matrix = tensor.collapse_shape {name} {_text_of(groups)} : {other} into {matrix}"
        )
    vector = "%right" if vector_on_right else "%left"
    vector_type = right if vector_on_right else left
    flat = tensor_text([free], element)
    lines.append("  %free_at = arith.constant " + ("0" if contracted else "1") + " : index")
    lines.append(f"  %free = tensor.dim %matrix, %free_at : {matrix}")
    lines.append(f"  %empty = tensor.empty({'%free' if free is None else ''}) : {flat}")
    zero = "0.0" if isinstance(element, ir.FloatType) else "0"
    lines.append(f"  %zero = arith.constant {zero} : {element}")
    lines.append(f"  %init = linalg.fill ins(%zero : {element}) outs(%empty : {flat}) -> {flat}")
    if contracted:  # matrix x vector
        inputs = f"ins(%matrix, {vector} : {matrix}, {vector_type})"
        named = "linalg.matvec"
    else:  # vector x matrix
        inputs = f"ins({vector}, %matrix : {vector_type}, {matrix})"
        named = "linalg.vecmat"
    lines.append(f"  %product = {named} {inputs} outs(%init : {flat}) -> {flat}")
    if result.rank == 1:
        lines.append(f"  %shaped = tensor.cast %product : {flat} to {result}")
    else:
        output = []
        for d in kept:
            if sizes[d] is None:
                lines.append(f"  %at{d} = arith.constant {d} : index")
                lines.append(f"  %size{d} = tensor.dim {name}, %at{d} : {other}")
                output.append(f"%size{d}")
            else:
                output.append(str(sizes[d]))
        lines.append(
            f"  %shaped = tensor.expand_shape %product [{list(range(result.rank))}] "
            f"output_shape [{', '.join(output)}] : {flat} into {result}"
        )
    lines += [f"  return %shaped : {result}", "}"]
    return "\n".join(lines)


def _product(sizes: list[int | None]) -> int:
    total = 1
    for size in sizes:
        total *= size or 0
    return total


def _product_function(ir: Any, operation: Any, symbol: str) -> str | None:
    """``func.func private @symbol`` computing the ``dot_general`` ``operation`` on the
    collapsed left operand; None for a form the module's doc does not name."""
    left, right = _type(ir, operation.operands[0]), _type(ir, operation.operands[1])
    result = _type(ir, operation.results[0])
    if left is None or right is None or result is None:
        return None
    if left.rank < 3 or left.has_static_shape or right.rank != 2:
        return None
    contracting = _plain_product(operation)
    if contracting is None or contracting[0] != [left.rank - 1]:
        return None
    contracted = contracting[1]
    rows = tensor_text([None, dimension_sizes(left)[-1]], left.element_type)
    product = tensor_text([None, dimension_sizes(result)[-1]], result.element_type)
    leading = list(range(left.rank - 1))
    reassociation = _text_of([leading, [left.rank - 1]])
    lines = [f"func.func private @{symbol}(%left: {left}, %right: {right}) -> {result} {{"]
    lines.append(f"  %rows = tensor.collapse_shape %left {reassociation} : {left} into {rows}")
    lines.append(
        f"  %product = stablehlo.dot_general %rows, %right, contracting_dims = [1] x "
        f"[{contracted[0]}] : ({rows}, {right}) -> {product}"
    )
    sizes = []
    for d in leading:
        if left.is_dynamic_dim(d):
            lines.append(f"  %at{d} = arith.constant {d} : index")
            lines.append(f"  %size{d} = tensor.dim %left, %at{d} : {left}")
            sizes.append(f"%size{d}")
        else:
            sizes.append(str(left.shape[d]))
    if result.is_dynamic_dim(result.rank - 1):  # the matrix's free dimension, read from it
        free = 1 - contracted[0]
        lines.append(f"  %at_free = arith.constant {free} : index")
        lines.append(f"  %size_free = tensor.dim %right, %at_free : {right}")
        sizes.append("%size_free")
    else:
        sizes.append(str(result.shape[-1]))
    if sum(left.is_dynamic_dim(d) for d in leading) > 1:
        # Two dynamic sizes in one group: MLIR 22's expand-strided-metadata crashes on the
        # memref.expand_shape of that (``(b, t, 4) @ w``); a reshape to the sizes, as
        # indices, keeps the rows in row-major order too.
        for d, size in enumerate(sizes):
            if not size.startswith("%"):
                lines.append(f"  %fixed{d} = arith.constant {size} : index")
                sizes[d] = f"%fixed{d}"
        vector = f"tensor<{result.rank}xindex>"
        lines.append(f"  %sizes = tensor.from_elements {', '.join(sizes)} : {vector}")
        lines.append(
            f"  %expanded = tensor.reshape %product(%sizes) : ({product}, {vector}) -> {result}"
        )
    else:
        lines.append(
            f"  %expanded = tensor.expand_shape %product {reassociation} output_shape "
            f"[{', '.join(sizes)}] : {product} into {result}"
        )
    lines += [f"  return %expanded : {result}", "}"]
    return "\n".join(lines)
