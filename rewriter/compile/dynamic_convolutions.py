"""Convolutions over spatial dimensions of symbolic size, as a product per kernel position.

IREE 3.13 lowers a ``stablehlo.convolution`` whose spatial dimensions are static only: a
1-D convolution of ``symbolic_shape("b, t, 4")`` (a sequence of symbolic length), or a 2-D
one of images of symbolic size, failed on both paths ("failed to legalize operation
'stablehlo.convolution'"). A symbolic batch alone is fine.

``dynamic_convolutions`` writes such a convolution, in jax's default layouts (input and
output ``[b, 0, 1, ..., f]``, kernel ``[0, 1, ..., i, o]``), of one float type, with unit
strides and dilations and one feature group, as the definition of the convolution: the
operand padded as the op says (``stablehlo.pad``), then for each kernel position ``k`` the
padded operand times the kernel's ``[k, i, o]`` matrix (``dot_general`` over the input
features: a plain ``x @ w``, which ``dynamic_reshapes``, after this fix, writes as IREE
lowers it), the window of that product the output's elements read at ``k``
(``real_dynamic_slice`` from ``k``, as long as the output), and the sum of those windows.
Element for element that is ``sum_k sum_i x[b, p + k, i] w[k, i, o]``, the convolution's
value; the sums are grouped by kernel position, so the rounding differs from XLA's within
a float's accumulated error (``tests/test_dynamic_convolutions.py``).
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from .mlir_walk import dimension_size, i32_vector, joined_vector, op_result, replace_each

CONVOLUTION = "stablehlo.convolution"
_LAYOUTS = re.compile(r"\[([^\]]*)\]x\[([^\]]*)\]->\[([^\]]*)\]")


def dynamic_convolutions(module: Any) -> int:
    """Rewrite every convolution of the ``iree.compiler.ir`` ``module`` that the module's
    doc names; return how many."""
    return replace_each(module, CONVOLUTION, _taken, _taps)


def _taken(ir: Any, operation: Any) -> list[tuple[int, int]] | None:
    """The convolution's padding per spatial dimension when the module's doc takes it."""
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
    if not any(ir.ShapedType.is_dynamic_size(size) for size in operand.shape[1:-1]):
        return None  # static spatial sizes (a symbolic batch alone): IREE lowers those
    if ir.ShapedType.is_dynamic_size(operand.shape[-1]):
        return None  # the input features
    attributes = operation.attributes
    found = _LAYOUTS.search(str(attributes["dimension_numbers"]))
    numbers = [str(d) for d in range(spatial)]
    layout = ["b", *numbers, "f"]
    if found is None or [p.strip() for p in found.group(1).split(",")] != layout:
        return None
    if [p.strip() for p in found.group(2).split(",")] != [*numbers, "i", "o"]:
        return None
    if [p.strip() for p in found.group(3).split(",")] != layout:
        return None
    for name in ("feature_group_count", "batch_group_count"):
        if name in attributes and ir.IntegerAttr(attributes[name]).value != 1:
            return None
    for name in ("window_strides", "lhs_dilation", "rhs_dilation"):
        if name in attributes and any(v != 1 for v in ir.DenseI64ArrayAttr(attributes[name])):
            return None
    if "window_reversal" in attributes and any(
        ir.DenseBoolArrayAttr(attributes["window_reversal"])
    ):
        return None
    if "padding" not in attributes:
        return [(0, 0)] * spatial
    flat = [int(v) for v in ir.DenseIntElementsAttr(attributes["padding"])]
    return [(flat[2 * d], flat[2 * d + 1]) for d in range(spatial)]


def _taps(ir: Any, operation: Any, padding: list[tuple[int, int]]) -> Any:
    """The sum over kernel positions of each position's window times its matrix."""
    operand_value, kernel_value = operation.operands[0], operation.operands[1]
    operand = ir.RankedTensorType(operand_value.type)
    kernel = ir.RankedTensorType(kernel_value.type)
    result = ir.RankedTensorType(operation.results[0].type)
    element = operand.element_type
    spatial = operand.rank - 2
    if any(low or high for low, high in padding):
        padded_shape = [
            size
            if d in (0, operand.rank - 1) or ir.ShapedType.is_dynamic_size(size)
            else size + sum(padding[d - 1])
            for d, size in enumerate(operand.shape)
        ]
        zero = op_result(
            ir,
            "stablehlo.constant",
            ir.RankedTensorType.get([], element),
            value=ir.DenseElementsAttr.get_splat(
                ir.RankedTensorType.get([], element), ir.FloatAttr.get(element, 0.0)
            ),
        )
        operand_value = op_result(
            ir,
            "stablehlo.pad",
            ir.RankedTensorType.get(padded_shape, element),
            operand_value,
            zero,
            edge_padding_low=ir.DenseI64ArrayAttr.get([0, *(lo for lo, _ in padding), 0]),
            edge_padding_high=ir.DenseI64ArrayAttr.get([0, *(hi for _, hi in padding), 0]),
            interior_padding=ir.DenseI64ArrayAttr.get([0] * operand.rank),
        )
    padded = ir.RankedTensorType(operand_value.type)
    features_in, features_out = kernel.shape[-2], kernel.shape[-1]
    matrix_type = ir.RankedTensorType.get([features_in, features_out], element)
    # each position's product of the whole padded operand: a contiguous operand, which the
    # product's reshapes take as they are (a window of it would be a strided view)
    product_type = ir.RankedTensorType.get([*padded.shape[:-1], features_out], element)
    # the output's sizes along the spatial dimensions: padded size - kernel size + 1, or 0
    lengths = []
    for d in range(1, spatial + 1):
        size = dimension_size(ir, operand_value, d)
        less = op_result(
            ir, "stablehlo.subtract", size.type, size, i32_vector(ir, [kernel.shape[d - 1] - 1])
        )
        lengths.append(op_result(ir, "stablehlo.maximum", size.type, less, i32_vector(ir, [0])))
    total = None
    for position in itertools.product(*(range(k) for k in kernel.shape[:spatial])):
        tap = op_result(
            ir,
            "stablehlo.slice",
            ir.RankedTensorType.get([1] * spatial + [features_in, features_out], element),
            kernel_value,
            start_indices=ir.DenseI64ArrayAttr.get([*position, 0, 0]),
            limit_indices=ir.DenseI64ArrayAttr.get(
                [k + 1 for k in position] + [features_in, features_out]
            ),
            strides=ir.DenseI64ArrayAttr.get([1] * kernel.rank),
        )
        matrix = op_result(ir, "stablehlo.reshape", matrix_type, tap)
        product = op_result(
            ir,
            "stablehlo.dot_general",
            product_type,
            operand_value,
            matrix,
            dot_dimension_numbers=ir.Attribute.parse(
                f"#stablehlo.dot<lhs_contracting_dimensions = [{operand.rank - 1}], "
                "rhs_contracting_dimensions = [0]>"
            ),
        )
        # the output's elements read the product from this position on
        starts = [i32_vector(ir, [0]), *(i32_vector(ir, [k]) for k in position)]
        starts.append(i32_vector(ir, [0]))
        limits = [dimension_size(ir, operand_value, 0)]
        limits += [
            op_result(ir, "stablehlo.add", length.type, length, i32_vector(ir, [k]))
            for length, k in zip(lengths, position, strict=True)
        ]
        limits.append(i32_vector(ir, [features_out]))
        window = op_result(
            ir,
            "stablehlo.real_dynamic_slice",
            result,
            product,
            joined_vector(ir, starts),
            joined_vector(ir, limits),
            i32_vector(ir, [1] * operand.rank),
        )
        total = window if total is None else op_result(ir, "stablehlo.add", result, total, window)
    return total
