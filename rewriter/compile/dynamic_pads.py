"""Pads of dynamic shape that IREE cannot lower, as ``tensor.pad`` or an elementwise read.

A pad whose amounts are only known at run time is a ``stablehlo.dynamic_pad``: the SAME
padding of a strided convolution over a symbolic length (``dynamic_convolutions.py`` pads
the operand so), ``jnp.pad`` by a symbolic amount. IREE 3.13 lowers none ("failed to
legalize operation 'stablehlo.dynamic_pad'"), on both paths; nor a ``stablehlo.pad`` of
static amounts of an operand of dynamic shape when an amount is negative (a cut:
``lax.pad(x, 0., [(0, 0, 0), (-1, 2, 0)])`` of a symbolic length).

Both paths write such a pad, in a function of its own, as StableHLO defines it. Without
interior padding: the operand padded with the padding value by the positive parts of the
low and high amounts (``tensor.pad``), then cut by their negative parts
(``tensor.extract_slice``). With interior padding (a constant): a ``linalg.generic`` in
which each element of the result reads the operand's element it is (``_spread_lines``) or
is the padding value. Taken: interior padding that is constant, amounts of signless
integers, and elements that are not unsigned integers (which the tensor dialect's ops
inside IREE's input conversion do not take).
"""

from __future__ import annotations

from typing import Any

from .mlir_walk import (
    constant_elements,
    element_pieces,
    index_of_scalar,
    op_result,
    outline_into_functions,
    size_value,
)

DYNAMIC_PAD = "stablehlo.dynamic_pad"
PAD = "stablehlo.pad"


def dynamic_pads(module: Any) -> int:
    """Rewrite, in place, the pads the module's doc names of the ``iree.compiler.ir``
    ``module`` (in its context); return how many."""
    dynamic = outline_into_functions(
        module, DYNAMIC_PAD, "rw_dynamic_pad_", _dynamic_pad_function, operands=_amounts
    )
    cuts = outline_into_functions(
        module, PAD, "rw_cut_pad_", _cut_pad_function, operands=_attribute_amounts
    )
    return dynamic + cuts


def _amounts(operation: Any) -> list[Any]:
    """What the function of a ``dynamic_pad`` takes: the operand, the padding value, and
    each low and high amount as a scalar, cut from the vectors at the call (one vector of
    amounts made by concatenation and passed whole, IREE 3.13 can fail on:
    ``element_pieces``)."""
    from iree.compiler import ir

    operand, value, low, high, _ = operation.operands
    return [operand, value, *_scalars(ir, low), *_scalars(ir, high)]


def _attribute_amounts(operation: Any) -> list[Any]:
    """What the function of a ``stablehlo.pad`` takes: the operand, the padding value, and
    each low and high amount as a scalar ``i64`` constant."""
    from iree.compiler import ir

    scalar = ir.RankedTensorType.get([], ir.IntegerType.get_signless(64))
    amounts = [
        op_result(
            ir,
            "stablehlo.constant",
            scalar,
            value=ir.DenseElementsAttr.get_splat(
                scalar, ir.IntegerAttr.get(ir.IntegerType.get_signless(64), amount)
            ),
        )
        for side in ("edge_padding_low", "edge_padding_high")
        for amount in _attribute(ir, operation, side)
    ]
    return [*operation.operands, *amounts]


def _attribute(ir: Any, operation: Any, name: str) -> list[int]:
    return [int(v) for v in ir.DenseI64ArrayAttr(operation.attributes[name])]


def _interior(ir: Any, operation: Any) -> list[int] | None:
    """The ``dynamic_pad``'s interior padding when it is constant and not negative; else
    None."""
    rank = ir.RankedTensorType(operation.operands[0].type).rank
    interior = constant_elements(ir, operation.operands[4], rank)
    if interior is None or any(amount is None or amount < 0 for amount in interior):
        return None
    return [int(amount) for amount in interior if amount is not None]


def _scalars(ir: Any, vector: Any) -> list[Any]:
    """The elements of the 1-D ``vector`` as scalar tensors, at the insertion point."""
    kind = ir.RankedTensorType(vector.type)
    scalar = ir.RankedTensorType.get([], kind.element_type)
    return [
        op_result(ir, "stablehlo.reshape", scalar, piece) for piece in element_pieces(ir, vector)
    ]


def _dynamic_pad_function(ir: Any, operation: Any, symbol: str) -> str | None:
    """``func.func private @symbol(%operand, %value, %low0, ..., %high0, ...)`` computing
    the ``dynamic_pad`` ``operation``; None for one the module's doc does not name."""
    interior = _interior(ir, operation)
    amounts = ir.RankedTensorType(operation.operands[2].type)
    if interior is None or ir.RankedTensorType(operation.operands[3].type) != amounts:
        return None
    integer = amounts.element_type
    if not (isinstance(integer, ir.IntegerType) and integer.is_signless):
        return None
    return _pad_function(ir, operation, symbol, interior, str(integer))


def _cut_pad_function(ir: Any, operation: Any, symbol: str) -> str | None:
    """The function computing the ``stablehlo.pad`` ``operation`` (its amounts passed as
    ``i64`` scalars), when its operand has a dynamic shape and an amount is negative; else
    None."""
    operand = ir.RankedTensorType(operation.operands[0].type)
    if operand.has_static_shape:
        return None
    edges = _attribute(ir, operation, "edge_padding_low")
    edges += _attribute(ir, operation, "edge_padding_high")
    if min(edges, default=0) >= 0:
        return None
    interior = _attribute(ir, operation, "interior_padding")
    return _pad_function(ir, operation, symbol, interior, "i64")


def _pad_function(
    ir: Any, operation: Any, symbol: str, interior: list[int], integer: str
) -> str | None:
    """The function of a pad of ``interior`` padding whose amounts it takes as scalars of
    the ``integer`` type (the module's doc); None for an operand it does not take."""
    operand = ir.RankedTensorType(operation.operands[0].type)
    result = ir.RankedTensorType(operation.results[0].type)
    element = operand.element_type
    if operand.rank == 0 or isinstance(element, ir.IntegerType) and element.is_unsigned:
        return None
    rank = operand.rank
    dynamic = "tensor<" + "?x" * rank + f"{element}>"
    amount = f"tensor<{integer}>"
    parameters = [f"%operand: {operand}", f"%value: tensor<{element}>"]
    parameters += [f"%{side}{d}: {amount}" for side in ("low", "high") for d in range(rank)]
    lines = [f"func.func private @{symbol}({', '.join(parameters)}) -> {result} {{"]
    lines.append("  %zero = arith.constant 0 : index")
    lines.append(f"  %fill = tensor.extract %value[] : tensor<{element}>")
    if any(interior):
        if any(size == 0 for size in operand.shape):
            return None  # no element to read
        return "\n".join(_spread_lines(lines, operand, result, interior, integer))
    grown_low, grown_high, offsets, sizes = [], [], [], []
    for d in range(rank):
        size = size_value(lines, f"size{d}", "operand", operand, d)
        for side in ("low", "high"):
            index_of_scalar(lines, f"{side}_wide{d}", f"{side}{d}", integer)
            lines += [
                f"  %{side}_added{d} = arith.maxsi %{side}_wide{d}, %zero : index",
                f"  %{side}_less{d} = arith.subi %zero, %{side}_wide{d} : index",
                f"  %{side}_cut{d} = arith.maxsi %{side}_less{d}, %zero : index",
            ]
        lines += [
            f"  %grown{d} = arith.addi {size}, %low_added{d} : index",
            f"  %whole{d} = arith.addi %grown{d}, %high_added{d} : index",
            f"  %kept_low{d} = arith.subi %whole{d}, %low_cut{d} : index",
            f"  %kept{d} = arith.subi %kept_low{d}, %high_cut{d} : index",
        ]
        grown_low.append(f"%low_added{d}")
        grown_high.append(f"%high_added{d}")
        offsets.append(f"%low_cut{d}")
        sizes.append(f"%kept{d}")
    indices = ", ".join(f"%i{d}: index" for d in range(rank))
    ones = ", ".join(["1"] * rank)
    lines += [
        f"  %padded = tensor.pad %operand low[{', '.join(grown_low)}] "
        f"high[{', '.join(grown_high)}] {{",
        f"  ^bb0({indices}):",
        f"    tensor.yield %fill : {element}",
        f"  }} : {operand} to {dynamic}",
        f"  %cut = tensor.extract_slice %padded[{', '.join(offsets)}] [{', '.join(sizes)}] "
        f"[{ones}] : {dynamic} to {dynamic}",
        f"  %typed = tensor.cast %cut : {dynamic} to {result}",
        f"  return %typed : {result}",
        "}",
    ]
    return "\n".join(lines)


def _spread_lines(
    lines: list[str], operand: Any, result: Any, interior: list[int], integer: str
) -> list[str]:
    """The body of a pad's function with interior padding: each result element reads the
    operand element it is (its index less the low amount, on a multiple of ``interior + 1``
    and within the operand) or is the padding value, in one ``linalg.generic``. Written as
    a ``stablehlo.pad`` of the interior then a ``tensor.pad``, IREE 3.13 reads the wrong
    elements (``tests/test_dynamic_pads.py``, ``spread``)."""
    rank = operand.rank
    lines.append("  %one = arith.constant 1 : index")
    out_sizes = []
    for d in range(rank):
        size = size_value(lines, f"size{d}", "operand", operand, d)
        index_of_scalar(lines, f"low_at{d}", f"low{d}", integer)
        index_of_scalar(lines, f"high_at{d}", f"high{d}", integer)
        lines += [
            f"  %step{d} = arith.constant {interior[d] + 1} : index",
            f"  %gap{d} = arith.constant {interior[d]} : index",
            f"  %spaces{d} = arith.subi {size}, %one : index",
            f"  %spaces_kept{d} = arith.maxsi %spaces{d}, %zero : index",
            f"  %gaps{d} = arith.muli %spaces_kept{d}, %gap{d} : index",
            f"  %spread{d} = arith.addi {size}, %gaps{d} : index",
            f"  %with_low{d} = arith.addi %spread{d}, %low_at{d} : index",
            f"  %out{d} = arith.addi %with_low{d}, %high_at{d} : index",
        ]
        out_sizes.append((f"%out{d}", size))
    dynamic = [f"%out{d}" for d in range(rank) if result.is_dynamic_dim(d)]
    loops = ", ".join(f"d{d}" for d in range(rank))
    parallel = ", ".join(['"parallel"'] * rank)
    element = operand.element_type
    lines += [
        f"  %empty = tensor.empty({', '.join(dynamic)}) : {result}",
        f"  %padded = linalg.generic {{indexing_maps = [affine_map<({loops}) -> ({loops})>], "
        f"iterator_types = [{parallel}]}} outs(%empty : {result}) {{",
        f"  ^bb0(%unused: {element}):",
        "    %true = arith.constant true",
    ]
    kept = "%true"
    for d in range(rank):
        size = out_sizes[d][1]
        lines += [
            f"    %j{d} = linalg.index {d} : index",
            f"    %t{d} = arith.subi %j{d}, %low_at{d} : index",
            f"    %q{d} = arith.divsi %t{d}, %step{d} : index",
            f"    %r{d} = arith.remsi %t{d}, %step{d} : index",
            f"    %after_low{d} = arith.cmpi sge, %t{d}, %zero : index",
            f"    %on_element{d} = arith.cmpi eq, %r{d}, %zero : index",
            f"    %within{d} = arith.cmpi slt, %q{d}, {size} : index",
            f"    %both{d} = arith.andi %after_low{d}, %on_element{d} : i1",
            f"    %read{d} = arith.andi %both{d}, %within{d} : i1",
            f"    %at{d} = arith.select %read{d}, %q{d}, %zero : index",
            f"    %kept{d} = arith.andi {kept}, %read{d} : i1",
        ]
        kept = f"%kept{d}"
    indices = ", ".join(f"%at{d}" for d in range(rank))
    lines += [
        f"    %element = tensor.extract %operand[{indices}] : {operand}",
        f"    %chosen = arith.select {kept}, %element, %fill : {element}",
        f"    linalg.yield %chosen : {element}",
        f"  }} -> {result}",
        f"  return %padded : {result}",
        "}",
    ]
    return lines
