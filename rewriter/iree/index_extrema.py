"""``jnp.argmax`` and ``jnp.argmin`` of floats on the IREE path as two reductions it vectorizes.

jax writes an argmax as a ``stablehlo.reduce`` of two operands, the values and an iota along
the reduced dimension, whose body picks the larger value (a NaN first, the lower index on a
tie) with compares and selects. IREE 3.13 lowers that reduction one element at a time:
4.4 ns an element (``benchmarks/op_complexity.py``: 18 ms at 4M f32, where ``jax.jit``
takes 20 ms and the compiled path, which does the same as this module in
``rewriter/compile/index_extrema.py``, 0.6 ms). ``index_extrema`` writes each such reduce,
when only its index result is read, as

1. the maximum (minimum) of the values along the dimension, a reduce of
   ``stablehlo.maximum``, which is NaN where any value is NaN;
2. the least index of an element equal to it, or NaN where it is NaN: a reduce of
   ``stablehlo.minimum`` over the iota, with the largest index where the element is not;
3. the body's rule applied to the reduce's initial value and (the extremum, that index).

Why this is the reduce's result: the body picks, of two pairs, the greater under one total
preorder (NaN above every number, then the value, then the lower index), so its fold over
the elements and the initial value is the greatest of them all under that order, whatever
the order of the fold. Among the elements, the greatest are those equal to the extremum
(compared as the body compares: -0 equals +0; NaN matches NaN), and of them the lowest
index, the iota's value there. Step 3 then compares it with the initial value as the body
does: the extremum stands for the element, which compares with anything as it does. The
value result is not computed (an element equal to the extremum can differ from it in its
sign of zero), so a reduce whose value result is read stays IREE's. Only the body jax writes
is matched, op for op and operand for operand, over static f32 or f64 values and i32 or
i64 indices (tests/test_iree_index_extrema.py: jax.jit's indices with ties, NaNs, signed
zeros and infinities, 1-D and along either axis of 2-D).
"""

from __future__ import annotations

from typing import Any

from ..compile.mlir_walk import outline_into_functions

_PREFIX = "rw_index_extremum_"
_FLOATS = {"f32": "0x7F800000", "f64": "0x7FF0000000000000"}  # +inf; -inf sets the sign
_NEGATIVE = {"f32": "0xFF800000", "f64": "0xFFF0000000000000"}
_INDEX_LIMITS = {"i32": 2**31 - 1, "i64": 2**63 - 1}
# The body jax writes for argmax ("GT") and argmin ("LT"), over the block's arguments
# a0, a1 (the accumulated value and index) and a2, a3 (the element's): (op, compare
# direction and type, operands), an operand ``rN`` being the result of the body's op N.
_BODY = (
    ("stablehlo.compare", "{direction} FLOAT", ("a0", "a2")),
    ("stablehlo.compare", "NE FLOAT", ("a0", "a0")),
    ("stablehlo.or", "", ("r0", "r1")),
    ("stablehlo.compare", "EQ FLOAT", ("a0", "a2")),
    ("stablehlo.compare", "LT SIGNED", ("a1", "a3")),
    ("stablehlo.and", "", ("r3", "r4")),
    ("stablehlo.or", "", ("r2", "r5")),
    ("stablehlo.select", "", ("r2", "a0", "a2")),
    ("stablehlo.select", "", ("r6", "a1", "a3")),
    ("stablehlo.return", "", ("r7", "r8")),
)
_EXTREMA = {"GT": ("stablehlo.maximum", _NEGATIVE), "LT": ("stablehlo.minimum", _FLOATS)}


def index_extrema(module: Any) -> int:
    """Rewrite, in the ``iree.compiler.ir`` module, every reduce the module's doc names into
    a call of a private function that computes its index result; return how many."""
    return outline_into_functions(module, "stablehlo.reduce", _PREFIX, _function_text, result=1)


def _function_text(ir: Any, operation: Any, name: str) -> str | None:
    """The text of ``func.func private @name`` that computes the index result of
    ``operation`` as the module's doc says, or None when it is not such a reduce."""
    if len(operation.operands) != 4 or len(operation.results) != 2:
        return None
    if _has_uses(operation.results[0]):
        return None  # the value result is read: see the module docstring
    dimensions = list(ir.DenseI64ArrayAttr(operation.attributes["dimensions"]))
    if len(dimensions) != 1:
        return None
    dimension = dimensions[0]
    values, indices = (ir.RankedTensorType(operation.operands[k].type) for k in (0, 1))
    if not values.has_static_shape or values.shape != indices.shape:
        return None
    element, index = str(values.element_type), str(indices.element_type)
    if element not in _FLOATS or index not in _INDEX_LIMITS:
        return None
    if not 0 < values.shape[dimension] <= _INDEX_LIMITS[index]:
        return None
    if not _is_iota(ir, operation.operands[1], dimension):
        return None
    direction = _body_direction(operation)
    if direction is None:
        return None
    extremum, limits = _EXTREMA[direction]
    shape = list(values.shape)
    kept = [d for d in range(len(shape)) if d != dimension]
    out = [shape[d] for d in kept]

    def tensor(dims: list[int], type_: str) -> str:
        return f"tensor<{'x'.join(map(str, dims))}x{type_}>" if dims else f"tensor<{type_}>"

    x, i, b = tensor(shape, element), tensor(shape, index), tensor(shape, "i1")
    v, n, c = tensor(out, element), tensor(out, index), tensor(out, "i1")
    scalar, scalar_index = tensor([], element), tensor([], index)
    largest = _INDEX_LIMITS[index]
    return "\n".join(
        [
            f"func.func private @{name}(%x: {x}, %i: {i}, %v0: {scalar}, %i0: {scalar_index}) "
            f"-> {n} {{",
            # 1. the extremum along the dimension (NaN where any value is NaN)
            f"%limit = stablehlo.constant dense<{limits[element]}> : {scalar}",
            f"%m = stablehlo.reduce(%x init: %limit) applies {extremum} across dimensions = "
            f"[{dimension}] : ({x}, {scalar}) -> {v}",
            # 2. the least index of an element equal to it (NaN: of a NaN)
            f"%mb = stablehlo.broadcast_in_dim %m, dims = {kept} : ({v}) -> {x}",
            f"%equal = stablehlo.compare EQ, %x, %mb, FLOAT : ({x}, {x}) -> {b}",
            f"%x_nan = stablehlo.compare NE, %x, %x, FLOAT : ({x}, {x}) -> {b}",
            f"%m_nan = stablehlo.compare NE, %mb, %mb, FLOAT : ({x}, {x}) -> {b}",
            f"%nans = stablehlo.and %x_nan, %m_nan : {b}",
            f"%hit = stablehlo.or %equal, %nans : {b}",
            f"%none = stablehlo.constant dense<{largest}> : {i}",
            f"%candidates = stablehlo.select %hit, %i, %none : {b}, {i}",
            f"%none0 = stablehlo.constant dense<{largest}> : {scalar_index}",
            f"%at = stablehlo.reduce(%candidates init: %none0) applies stablehlo.minimum "
            f"across dimensions = [{dimension}] : ({i}, {scalar_index}) -> {n}",
            # 3. the body's rule on the initial value (a) and the extremum at that index (b)
            f"%va = stablehlo.broadcast_in_dim %v0, dims = [] : ({scalar}) -> {v}",
            f"%ia = stablehlo.broadcast_in_dim %i0, dims = [] : ({scalar_index}) -> {n}",
            f"%beyond = stablehlo.compare {direction}, %va, %m, FLOAT : ({v}, {v}) -> {c}",
            f"%a_nan = stablehlo.compare NE, %va, %va, FLOAT : ({v}, {v}) -> {c}",
            f"%keeps = stablehlo.or %beyond, %a_nan : {c}",
            f"%tie = stablehlo.compare EQ, %va, %m, FLOAT : ({v}, {v}) -> {c}",
            f"%lower = stablehlo.compare LT, %ia, %at, SIGNED : ({n}, {n}) -> {c}",
            f"%tie_lower = stablehlo.and %tie, %lower : {c}",
            f"%keeps_index = stablehlo.or %keeps, %tie_lower : {c}",
            f"%index = stablehlo.select %keeps_index, %ia, %at : {c}, {n}",
            f"return %index : {n}",
            "}",
        ]
    )


def _has_uses(value: Any) -> bool:
    return any(True for _ in value.uses)


def _is_iota(ir: Any, value: Any, dimension: int) -> bool:
    """Whether ``value`` is a ``stablehlo.iota`` along ``dimension``."""
    if not isinstance(value, ir.OpResult):
        return False
    owner = value.owner
    if owner.name != "stablehlo.iota":
        return False
    return ir.IntegerAttr(owner.attributes["iota_dimension"]).value == dimension


def _body_direction(operation: Any) -> str | None:
    """``GT`` (argmax) or ``LT`` (argmin) when the reduce's body is the one jax writes
    (``_BODY``), else None."""
    block = operation.regions[0].blocks[0]
    arguments = list(block.arguments)
    body = [op.operation for op in block.operations]
    if len(arguments) != 4 or len(body) != len(_BODY):
        return None
    names: dict[Any, str] = {argument: f"a{k}" for k, argument in enumerate(arguments)}
    direction = None
    for number, (op, (name, compared, operands)) in enumerate(zip(body, _BODY, strict=True)):
        if op.name != name or tuple(names.get(o) for o in op.operands) != operands:
            return None
        if compared:
            written = _comparison(op)
            if number == 0 and written in ("GT FLOAT", "LT FLOAT"):
                direction = written.split()[0]
            elif written != compared:
                return None
        for k, result in enumerate(op.results):
            names[result] = f"r{number}" if k == 0 else f"r{number}.{k}"
    return direction


def _comparison(op: Any) -> str:
    """``GT FLOAT``: a ``stablehlo.compare``'s direction and type."""
    attributes = op.attributes
    direction = str(attributes["comparison_direction"]).split()[-1].rstrip(">")
    if "compare_type" not in attributes:
        return direction
    return f"{direction} {str(attributes['compare_type']).split()[-1].rstrip('>')}"
