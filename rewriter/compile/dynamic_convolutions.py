"""Convolutions over spatial dimensions of symbolic size, as a product per kernel position.

IREE 3.13 lowers a ``stablehlo.convolution`` whose spatial dimensions are static only: a
1-D convolution of ``symbolic_shape("b, t, 4")`` (a sequence of symbolic length), or a 2-D
one of images of symbolic size, fails on both paths ("failed to legalize operation
'stablehlo.convolution'"). A symbolic batch alone is fine. Nor does it lower
``stablehlo.dynamic_conv``, jax's form of a strided convolution of SAME padding over such
sizes (the padding an operand computed from the sizes).

``dynamic_convolutions`` writes such a convolution of one float type as the definition
of the convolution:

0. the input and the kernel transposed to jax's default layouts (input ``[b, 0, 1, ...,
   f]``, kernel ``[0, 1, ..., i, o]``) where they are in others (``NCHW`` images and
   ``OIHW`` kernels, the ``[0, o, i]`` kernel of an input's gradient); the result is
   transposed back to the output's layout at the end;
1. the operand padded as the op says: ``lhs_dilation - 1`` zeros between its elements (a
   transposed convolution) and the low and high padding (``stablehlo.pad``; a
   ``dynamic_conv``'s from its padding operand, ``stablehlo.dynamic_pad``, which
   ``dynamic_pads`` writes for IREE);
2. for each kernel position ``k``, the padded operand times the kernel's ``[k, i, o]``
   matrix (``dot_general`` over the input features: a plain ``x @ w``, which
   ``dynamic_reshapes``, after this fix, writes as IREE lowers it); with feature groups
   (``feature_group_count``), each group's input features times its part of the matrix,
   side by side; with one input feature a group (a depthwise convolution), the products
   of elements of broadcasts, since a matrix of one row becomes a ``dynamic_reshape``
   IREE cannot lower;
3. the window of that product the output's elements read at ``k``: from ``k`` times the
   ``rhs_dilation``, one element in every ``window_strides``, as many as the output has
   (``real_dynamic_slice``; ``ceil(max(0, padded - (kernel - 1) * dilation) / stride)``);
4. the sum of those windows.

Element for element that is ``sum_k sum_i x[b, p * s + k * r, i] w[k, i, o]``, the
convolution's value; the sums are grouped by kernel position, so the rounding differs
from XLA's within a float's accumulated error (``tests/test_dynamic_convolutions.py``).
Not taken, and so still refused by IREE over symbolic sizes: a ``batch_group_count`` (the
kernel's gradient of a grouped convolution) and ``window_reversal``."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

from .mlir_walk import (
    Splats,
    dimension_size,
    element_pieces,
    i32_vector,
    joined_vector,
    op_result,
    replace_each,
)

CONVOLUTION = "stablehlo.convolution"
DYNAMIC_CONVOLUTION = "stablehlo.dynamic_conv"  # its padding an operand, read at run time
_LAYOUTS = re.compile(r"\[([^\]]*)\]x\[([^\]]*)\]->\[([^\]]*)\]")


def dynamic_convolutions(module: Any) -> int:
    """Rewrite every convolution of the ``iree.compiler.ir`` ``module`` that the module's
    doc names; return how many."""
    return replace_each(module, CONVOLUTION, _taken, _taps) + replace_each(
        module, DYNAMIC_CONVOLUTION, _taken, _taps
    )


@dataclass(frozen=True)
class _Form:
    """What a taken convolution does along its spatial dimensions, and its groups."""

    padding: list[tuple[int, int]] | None  # (low, high) per spatial dimension; None: an
    # operand's (``stablehlo.dynamic_conv``: jax's SAME padding of a stride over a symbolic
    # size)
    strides: list[int]  # window_strides
    base_dilation: list[int]  # lhs_dilation: the operand's elements spread apart
    kernel_dilation: list[int]  # rhs_dilation: the kernel's positions spread apart
    groups: int  # feature_group_count
    # the input's and the kernel's dimensions in the layouts the module's doc takes, and the
    # output's dimensions from that layout (``_layout_orders``)
    input_order: list[int]
    kernel_order: list[int]
    output_order: list[int]


def _taken(ir: Any, operation: Any) -> _Form | None:
    """What the convolution does when the module's doc takes it; else None."""
    operand = ir.RankedTensorType(operation.operands[0].type)
    kernel = ir.RankedTensorType(operation.operands[1].type)
    spatial = operand.rank - 2
    result = ir.RankedTensorType(operation.results[0].type)
    if not kernel.has_static_shape or spatial < 1:
        return None
    element = operand.element_type
    if not isinstance(element, ir.FloatType):
        return None
    if kernel.element_type != element or result.element_type != element:
        return None
    attributes = operation.attributes
    orders = _layout_orders(str(attributes["dimension_numbers"]), spatial)
    if orders is None:
        return None
    operand_shape = [operand.shape[d] for d in orders[0]]
    kernel_shape = [kernel.shape[d] for d in orders[1]]
    if not any(ir.ShapedType.is_dynamic_size(size) for size in operand_shape[1:-1]):
        return None  # static spatial sizes (a symbolic batch alone): IREE lowers those
    if ir.ShapedType.is_dynamic_size(operand_shape[-1]):
        return None  # the input features
    if _integer(ir, attributes, "batch_group_count", 1) != 1:
        return None
    groups = _integer(ir, attributes, "feature_group_count", 1)
    if groups < 1 or operand_shape[-1] != groups * kernel_shape[-2]:
        return None
    if kernel_shape[-1] % groups:
        return None
    if "window_reversal" in attributes and any(
        ir.DenseBoolArrayAttr(attributes["window_reversal"])
    ):
        return None
    padding: list[tuple[int, int]] | None = [(0, 0)] * spatial
    if operation.name == DYNAMIC_CONVOLUTION:
        padding = None
    elif "padding" in attributes:
        flat = [int(v) for v in ir.DenseIntElementsAttr(attributes["padding"])]
        padding = [(flat[2 * d], flat[2 * d + 1]) for d in range(spatial)]
    strides, base, dilation = (
        _per_dimension(ir, attributes, name, spatial)
        for name in ("window_strides", "lhs_dilation", "rhs_dilation")
    )
    if min(strides + base + dilation) < 1:
        return None
    return _Form(padding, strides, base, dilation, groups, *orders)


def _layout_orders(numbers: str, spatial: int) -> tuple[list[int], list[int], list[int]] | None:
    """From a convolution's ``dimension_numbers`` (``[b, 0, f]x[0, i, o]->[b, 0, f]``, in
    any order: ``NCHW`` inputs, ``OIHW`` kernels, the ``[0, o, i]`` kernel of an input's
    gradient): the dimensions of the input and of the kernel in the order ``[b, 0, 1, ...,
    f]`` and ``[0, 1, ..., i, o]`` (what a transpose to those layouts takes), and the
    positions in ``[b, 0, 1, ..., f]`` of the output's dimensions (what a transpose from that
    layout to the output's takes); None when they cannot be read."""
    found = _LAYOUTS.search(numbers)
    if found is None:
        return None
    places = [str(d) for d in range(spatial)]
    data, filters = ["b", *places, "f"], [*places, "i", "o"]
    layouts = [[part.strip() for part in found.group(k).split(",")] for k in (1, 2, 3)]
    wanted = (data, filters, data)
    if any(sorted(got) != sorted(names) for got, names in zip(layouts, wanted, strict=True)):
        return None
    to_input = [layouts[0].index(name) for name in data]
    to_kernel = [layouts[1].index(name) for name in filters]
    from_result = [data.index(name) for name in layouts[2]]
    return to_input, to_kernel, from_result


def _integer(ir: Any, attributes: Any, name: str, default: int) -> int:
    return ir.IntegerAttr(attributes[name]).value if name in attributes else default


def _per_dimension(ir: Any, attributes: Any, name: str, spatial: int) -> list[int]:
    if name not in attributes:
        return [1] * spatial
    return [int(v) for v in ir.DenseI64ArrayAttr(attributes[name])]


def _taps(ir: Any, operation: Any, form: _Form) -> Any:
    """The sum over kernel positions of each position's window times its matrix."""
    operand_value = _transposed(ir, operation.operands[0], form.input_order)
    kernel_value = _transposed(ir, operation.operands[1], form.kernel_order)
    operand = ir.RankedTensorType(operand_value.type)
    kernel = ir.RankedTensorType(kernel_value.type)
    final = ir.RankedTensorType(operation.results[0].type)
    inverse = [form.output_order.index(d) for d in range(final.rank)]
    result = ir.RankedTensorType.get([final.shape[d] for d in inverse], final.element_type)
    element = operand.element_type
    spatial = operand.rank - 2
    operand_value = _padded(ir, operand_value, form, list(operation.operands)[2:])
    padded = ir.RankedTensorType(operand_value.type)
    features_in, features_out = kernel.shape[-2], kernel.shape[-1]
    group_out = features_out // form.groups
    # each position's product of the whole padded operand: a contiguous operand, which the
    # product's reshapes take as they are (a window of it would be a strided view)
    product_type = ir.RankedTensorType.get([*padded.shape[:-1], features_out], element)
    # one input feature a group (a depthwise convolution): products of elements, which
    # a matrix of one row would only hide (IREE makes its product a dynamic_reshape that it
    # cannot lower)
    depthwise = form.groups > 1 and features_in == 1
    sources = [] if depthwise else _feature_groups(ir, operand_value, form.groups, features_in)
    # the output's sizes along the spatial dimensions: the positions where the dilated
    # kernel fits in the padded operand, one in every stride
    extents = []
    for d in range(1, spatial + 1):
        size = dimension_size(ir, operand_value, d)
        reach = (kernel.shape[d - 1] - 1) * form.kernel_dilation[d - 1]
        room = _vector_op(ir, "stablehlo.subtract", size, i32_vector(ir, [reach]))
        room = _vector_op(ir, "stablehlo.maximum", room, i32_vector(ir, [0]))
        extents.append(_strided_extent(ir, room, form.strides[d - 1]))
    total = None
    for position in itertools.product(*(range(k) for k in kernel.shape[:spatial])):
        if depthwise:
            product = _depthwise_product(ir, operand_value, kernel_value, position, group_out)
        else:
            product = _matrix_product(ir, sources, kernel_value, position, product_type)
        # the output's elements read the product from this position on, a stride apart
        offsets = [k * r for k, r in zip(position, form.kernel_dilation, strict=True)]
        limits = [dimension_size(ir, operand_value, 0)]
        limits += [
            _vector_op(ir, "stablehlo.add", extent, i32_vector(ir, [k]))
            for extent, k in zip(extents, offsets, strict=True)
        ]
        limits.append(i32_vector(ir, [features_out]))
        window = op_result(
            ir,
            "stablehlo.real_dynamic_slice",
            result,
            product,
            i32_vector(ir, [0, *offsets, 0]),
            joined_vector(ir, limits),
            i32_vector(ir, [1, *form.strides, 1]),
        )
        total = window if total is None else op_result(ir, "stablehlo.add", result, total, window)
    return _transposed(ir, total, form.output_order)


def _transposed(ir: Any, value: Any, order: list[int]) -> Any:
    """``value`` with its dimensions in ``order`` (itself when that is theirs)."""
    if order == sorted(order):
        return value
    kind = ir.RankedTensorType(value.type)
    shape = [kind.shape[d] for d in order]
    return op_result(
        ir,
        "stablehlo.transpose",
        ir.RankedTensorType.get(shape, kind.element_type),
        value,
        permutation=ir.DenseI64ArrayAttr.get(order),
    )


def _matrix_product(
    ir: Any, sources: list[Any], kernel_value: Any, position: tuple[int, ...], product_type: Any
) -> Any:
    """The product at kernel ``position`` of each feature group's operand (``sources``)
    with the group's ``[i, o]`` matrix of the kernel there, the groups' side by side."""
    kernel = ir.RankedTensorType(kernel_value.type)
    element = kernel.element_type
    features_in, group_out = kernel.shape[-2], kernel.shape[-1] // len(sources)
    matrix_type = ir.RankedTensorType.get([features_in, group_out], element)
    product_shape = ir.RankedTensorType(product_type).shape
    group_type = ir.RankedTensorType.get([*product_shape[:-1], group_out], element)
    rank = len(product_shape)
    products = []
    for group, source in enumerate(sources):
        tap = op_result(
            ir,
            "stablehlo.slice",
            ir.RankedTensorType.get([1] * len(position) + [features_in, group_out], element),
            kernel_value,
            start_indices=ir.DenseI64ArrayAttr.get([*position, 0, group * group_out]),
            limit_indices=ir.DenseI64ArrayAttr.get(
                [k + 1 for k in position] + [features_in, (group + 1) * group_out]
            ),
            strides=ir.DenseI64ArrayAttr.get([1] * kernel.rank),
        )
        matrix = op_result(ir, "stablehlo.reshape", matrix_type, tap)
        products.append(
            op_result(
                ir,
                "stablehlo.dot_general",
                group_type if len(sources) > 1 else product_type,
                source,
                matrix,
                dot_dimension_numbers=ir.Attribute.parse(
                    f"#stablehlo.dot<lhs_contracting_dimensions = [{rank - 1}], "
                    "rhs_contracting_dimensions = [0]>"
                ),
            )
        )
    if len(products) == 1:
        return products[0]
    return op_result(
        ir,
        "stablehlo.concatenate",
        product_type,
        *products,
        dimension=ir.IntegerAttr.get(ir.IntegerType.get_signless(64), rank - 1),
    )


def _depthwise_product(
    ir: Any, operand_value: Any, kernel_value: Any, position: tuple[int, ...], multiplier: int
) -> Any:
    """The product at kernel ``position`` of a convolution of one input feature per group:
    output feature ``g * multiplier + j`` is input feature ``g`` times the kernel's weight
    ``[position, 0, g * multiplier + j]``, as elementwise products of broadcasts (jax's
    ``dynamic_broadcast_in_dim``, which ``dynamic_broadcasts`` writes for IREE after this)."""
    operand = ir.RankedTensorType(operand_value.type)
    kernel = ir.RankedTensorType(kernel_value.type)
    element, rank = operand.element_type, operand.rank
    groups = operand.shape[-1]
    sizes = [dimension_size(ir, operand_value, d) for d in range(rank - 1)]
    tap = op_result(
        ir,
        "stablehlo.slice",
        ir.RankedTensorType.get([1] * len(position) + [1, groups * multiplier], element),
        kernel_value,
        start_indices=ir.DenseI64ArrayAttr.get([*position, 0, 0]),
        limit_indices=ir.DenseI64ArrayAttr.get(
            [k + 1 for k in position] + [1, groups * multiplier]
        ),
        strides=ir.DenseI64ArrayAttr.get([1] * kernel.rank),
    )
    wide_shape = [*operand.shape[:-1], groups, multiplier]
    wide = ir.RankedTensorType.get(wide_shape, element)
    shape = joined_vector(ir, [*sizes, i32_vector(ir, [groups]), i32_vector(ir, [multiplier])])
    weights = op_result(
        ir, "stablehlo.reshape", ir.RankedTensorType.get([groups, multiplier], element), tap
    )
    spread_weights = op_result(
        ir,
        "stablehlo.dynamic_broadcast_in_dim",
        wide,
        weights,
        shape,
        broadcast_dimensions=ir.DenseI64ArrayAttr.get([rank - 1, rank]),
    )
    spread_operand = op_result(
        ir,
        "stablehlo.dynamic_broadcast_in_dim",
        wide,
        operand_value,
        shape,
        broadcast_dimensions=ir.DenseI64ArrayAttr.get(list(range(rank))),
    )
    product = op_result(ir, "stablehlo.multiply", wide, spread_operand, spread_weights)
    flat_shape = joined_vector(ir, [*sizes, i32_vector(ir, [groups * multiplier])])
    return op_result(
        ir,
        "stablehlo.dynamic_reshape",
        ir.RankedTensorType.get([*operand.shape[:-1], groups * multiplier], element),
        product,
        flat_shape,
    )


def _padded(ir: Any, operand_value: Any, form: _Form, operands: Any) -> Any:
    """The operand padded as the convolution pads it: ``lhs_dilation - 1`` zeros between
    its elements, then the low and high padding (which may be negative: cut); the padding
    read from ``operands``, a ``dynamic_conv``'s third operand."""
    interior = [d - 1 for d in form.base_dilation]
    padding = form.padding
    if padding is not None and not any(interior) and not any(lo or hi for lo, hi in padding):
        return operand_value
    operand = ir.RankedTensorType(operand_value.type)
    element = operand.element_type
    padded_shape = list(operand.shape)
    for d in range(1, operand.rank - 1):
        size = operand.shape[d]
        if padding is None:
            padded_shape[d] = ir.ShapedType.get_dynamic_size()
        elif not ir.ShapedType.is_dynamic_size(size):
            spread = size + max(size - 1, 0) * interior[d - 1]
            padded_shape[d] = spread + sum(padding[d - 1])
    zero = Splats(ir, operand_value)(0.0, ir.RankedTensorType.get([], element))
    padded_type = ir.RankedTensorType.get(padded_shape, element)
    if padding is None:  # the interior padding first, then the edges (``dynamic_pads.py``)
        if any(interior):
            spread_shape = [
                size
                if d in (0, operand.rank - 1) or ir.ShapedType.is_dynamic_size(size)
                else size + max(size - 1, 0) * interior[d - 1]
                for d, size in enumerate(operand.shape)
            ]
            none = [0] * operand.rank
            operand_value = op_result(
                ir,
                "stablehlo.pad",
                ir.RankedTensorType.get(spread_shape, element),
                operand_value,
                zero,
                edge_padding_low=ir.DenseI64ArrayAttr.get(none),
                edge_padding_high=ir.DenseI64ArrayAttr.get(none),
                interior_padding=ir.DenseI64ArrayAttr.get([0, *interior, 0]),
            )
        spatial = range(operand.rank - 2)
        unpadded = i32_vector(ir, [0])
        pieces = element_pieces(ir, operands[0])  # jax's: a concatenation of amounts
        low = [_as_size(ir, pieces[2 * d]) for d in spatial]
        high = [_as_size(ir, pieces[2 * d + 1]) for d in spatial]
        return op_result(
            ir,
            "stablehlo.dynamic_pad",
            padded_type,
            operand_value,
            zero,
            joined_vector(ir, [unpadded, *low, unpadded]),
            joined_vector(ir, [unpadded, *high, unpadded]),
            i32_vector(ir, [0] * operand.rank),
        )
    return op_result(
        ir,
        "stablehlo.pad",
        padded_type,
        operand_value,
        zero,
        edge_padding_low=ir.DenseI64ArrayAttr.get([0, *(lo for lo, _ in padding), 0]),
        edge_padding_high=ir.DenseI64ArrayAttr.get([0, *(hi for _, hi in padding), 0]),
        interior_padding=ir.DenseI64ArrayAttr.get([0, *interior, 0]),
    )


def _as_size(ir: Any, piece: Any) -> Any:
    """The one-element integer tensor ``piece`` (an amount of a ``dynamic_conv``'s
    padding, whose rows are ``[low, high]`` per spatial dimension) as a ``tensor<1xi32>``."""
    kind = ir.RankedTensorType(piece.type)
    i32 = ir.IntegerType.get_signless(32)
    if kind.rank != 1:
        piece = op_result(
            ir, "stablehlo.reshape", ir.RankedTensorType.get([1], kind.element_type), piece
        )
    if kind.element_type == i32:
        return piece
    return op_result(ir, "stablehlo.convert", ir.RankedTensorType.get([1], i32), piece)


def _feature_groups(ir: Any, operand_value: Any, groups: int, width: int) -> list[Any]:
    """The operand's input features of each group (``feature_group_count``): the operand
    itself for one group, else its features ``[g * width, (g + 1) * width)`` for each."""
    if groups == 1:
        return [operand_value]
    operand = ir.RankedTensorType(operand_value.type)
    part = ir.RankedTensorType.get([*operand.shape[:-1], width], operand.element_type)
    parts = []
    for group in range(groups):
        starts = [i32_vector(ir, [0])] * (operand.rank - 1) + [i32_vector(ir, [group * width])]
        limits = [dimension_size(ir, operand_value, d) for d in range(operand.rank - 1)]
        limits.append(i32_vector(ir, [(group + 1) * width]))
        parts.append(
            op_result(
                ir,
                "stablehlo.real_dynamic_slice",
                part,
                operand_value,
                joined_vector(ir, starts),
                joined_vector(ir, limits),
                i32_vector(ir, [1] * operand.rank),
            )
        )
    return parts


def _strided_extent(ir: Any, room: Any, stride: int) -> Any:
    """How far a window of stride ``stride`` reaches to read ``ceil(room / stride)``
    elements (``room`` at least 0): ``room`` itself for a unit stride, else
    ``(n - 1) * stride + 1`` elements for ``n`` of them, 0 for none."""
    if stride == 1:
        return room
    count = _vector_op(ir, "stablehlo.add", room, i32_vector(ir, [stride - 1]))
    count = _vector_op(ir, "stablehlo.divide", count, i32_vector(ir, [stride]))
    reach = _vector_op(ir, "stablehlo.multiply", count, i32_vector(ir, [stride]))
    reach = _vector_op(ir, "stablehlo.subtract", reach, i32_vector(ir, [stride - 1]))
    return _vector_op(ir, "stablehlo.maximum", reach, i32_vector(ir, [0]))


def _vector_op(ir: Any, name: str, left: Any, right: Any) -> Any:
    """``name`` of two ``tensor<1xi32>`` sizes."""
    return op_result(ir, name, left.type, left, right)
