"""Finding the operations a fix rewrites, before it rewrites any (``iree.compiler.ir``).

A walk that changed the module while it walks could visit an op it made or skip one it
moved; every fix first collects its ops with ``operations_named`` or ``operations_where``,
then rewrites them.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any, NamedTuple

# What ends a reduce's or window's body, and a function a custom call names as its body.
_RETURNS = ("stablehlo.return", "func.return")


def operations_named(module: Any, *names: str) -> list[Any]:
    """Every operation called one of ``names`` in ``module`` (nested ones included), in
    order."""
    return operations_where(module, lambda operation: operation.name in names)


def operations_where(module: Any, keep: Callable[[Any], bool]) -> list[Any]:
    """Every operation of ``module`` (nested ones included) that ``keep`` keeps, in order."""
    from iree.compiler import ir

    found: list[Any] = []

    def visit(operation):
        if keep(operation):
            found.append(operation)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def remap_operands(operation: Any, mapping: dict[Any, Any]) -> None:
    """Make every operand of ``operation``, and of the ops nested in it, that ``mapping``
    names the value it maps to: a copy of ops (an inlined body, an unrolled loop) whose
    nested regions read values from above."""
    for index, operand in enumerate(operation.operands):
        if operand in mapping:
            operation.operands[index] = mapping[operand]
    for region in operation.regions:
        for block in region.blocks:
            for inner in block.operations:
                remap_operands(inner.operation, mapping)


def ranked_result_of(operation: Any, *element_types: type) -> bool:
    """Whether ``operation``'s first result is a ranked tensor, of static or dynamic shape,
    whose element is an instance of one of ``element_types`` (``ir.F32Type``, ...): what
    the math fixes rewrite (``Splats`` and ``replace_by_template`` take both kinds of
    shape)."""
    from iree.compiler import ir

    tensor = operation.results[0].type
    return isinstance(tensor, ir.RankedTensorType) and isinstance(
        tensor.element_type, element_types
    )


# The float element types the fixes that follow XLA's simplifier rewrite (and pools' windows)
FLOAT_TYPES = ("f16", "bf16", "f32", "f64")


def ranked_of(ir: Any, kind: Any, elements: Collection[str] = FLOAT_TYPES) -> bool:
    """Whether ``kind`` is a ranked tensor type whose element type is one of ``elements``
    (by its name, ``f32``)."""
    return isinstance(kind, ir.RankedTensorType) and str(kind.element_type) in elements


class Splats:
    """Tensors of one number in every element, shaped as the value ``like``, made at the
    insertion point: a splat constant when the shape is static; else a scalar constant
    broadcast to ``like``'s sizes, read once (``stablehlo.get_dimension_size``), as jax
    writes a constant of a symbolic shape."""

    def __init__(self, ir: Any, like: Any) -> None:
        self.ir = ir
        self.like = like
        self._sizes: Any = None

    def __call__(self, value: float, kind: Any) -> Any:
        """A ``kind`` tensor (``like``'s shape, any float element) of ``value``."""
        return self._tensor(self.ir.FloatAttr.get(kind.element_type, value), kind)

    def integer(self, value: int, kind: Any) -> Any:
        """A ``kind`` tensor (``like``'s shape, any integer element) of ``value``, which
        fits the element's bits (unsigned 64-bit ones as their two's complement)."""
        return self._tensor(self.ir.IntegerAttr.get(kind.element_type, value), kind)

    def broadcast(self, scalar: Any, kind: Any) -> Any:
        """The 0-d tensor ``scalar`` (any value) in every element of a ``kind`` tensor
        (``like``'s shape, ``scalar``'s element)."""
        ir = self.ir
        name = "stablehlo.broadcast_in_dim"
        operands = [scalar]
        if not kind.has_static_shape:
            name = "stablehlo.dynamic_broadcast_in_dim"
            operands.append(self._shape())
        return op_result(
            ir, name, kind, *operands, broadcast_dimensions=ir.DenseI64ArrayAttr.get([])
        )

    def _tensor(self, number: Any, kind: Any) -> Any:
        ir = self.ir
        if kind.has_static_shape:
            splat = ir.DenseElementsAttr.get_splat(kind, number)
            return op_result(ir, "stablehlo.constant", kind, value=splat)
        scalar_type = ir.RankedTensorType.get([], kind.element_type)
        scalar = op_result(
            ir,
            "stablehlo.constant",
            scalar_type,
            value=ir.DenseElementsAttr.get_splat(scalar_type, number),
        )
        return self.broadcast(scalar, kind)

    def _shape(self) -> Any:
        """``like``'s sizes as a ``tensor<rank x i32>``."""
        if self._sizes is None:
            ir = self.ir
            i32, i64 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
            one = ir.RankedTensorType.get([1], i32)
            sizes = []
            for dimension in range(self.like.type.rank):
                size = op_result(
                    ir,
                    "stablehlo.get_dimension_size",
                    ir.RankedTensorType.get([], i32),
                    self.like,
                    dimension=ir.IntegerAttr.get(i64, dimension),
                )
                sizes.append(op_result(ir, "stablehlo.reshape", one, size))
            self._sizes = sizes[0]
            if len(sizes) > 1:  # a rank-0 tensor's shape is static: never asked for
                joined = ir.RankedTensorType.get([len(sizes)], i32)
                self._sizes = op_result(
                    ir,
                    "stablehlo.concatenate",
                    joined,
                    *sizes,
                    dimension=ir.IntegerAttr.get(i64, 0),
                )
        return self._sizes


def dimension_size(ir: Any, value: Any, dimension: int) -> Any:
    """``value``'s size along ``dimension`` as a ``tensor<1xi32>`` at the insertion point:
    a piece of a shape operand (``stablehlo.get_dimension_size``, reshaped)."""
    i32 = ir.IntegerType.get_signless(32)
    size = op_result(
        ir,
        "stablehlo.get_dimension_size",
        ir.RankedTensorType.get([], i32),
        value,
        dimension=ir.IntegerAttr.get(ir.IntegerType.get_signless(64), dimension),
    )
    return op_result(ir, "stablehlo.reshape", ir.RankedTensorType.get([1], i32), size)


def i32_vector(ir: Any, values: list[int]) -> Any:
    """A constant ``tensor<N x i32>`` of ``values`` at the insertion point: a shape
    operand's static part."""
    import numpy as np

    kind = ir.RankedTensorType.get([len(values)], ir.IntegerType.get_signless(32))
    attribute = ir.DenseElementsAttr.get(np.array(values, np.int32), type=kind)
    return op_result(ir, "stablehlo.constant", kind, value=attribute)


def joined_vector(ir: Any, pieces: list[Any]) -> Any:
    """The 1-D ``i32`` tensors ``pieces`` (each ``tensor<1xi32>`` here) concatenated at the
    insertion point: a shape operand made of static and dynamic sizes."""
    kind = ir.RankedTensorType.get([len(pieces)], ir.IntegerType.get_signless(32))
    return op_result(
        ir,
        "stablehlo.concatenate",
        kind,
        *pieces,
        dimension=ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 0),
    )


def constant_elements(ir: Any, value: Any, rank: int) -> list[int | None] | None:
    """The elements of the 1-D integer tensor ``value`` of ``rank`` elements (a gather's
    slice sizes, a window's strides) that are constants (None for the others), read
    through a ``concatenate`` of constants and other pieces; None when they cannot be
    read."""
    if not isinstance(value, ir.OpResult):
        return None
    owner = value.owner
    if owner.name == "stablehlo.constant":
        return [int(v) for v in ir.DenseIntElementsAttr(owner.attributes["value"])]
    if owner.name != "stablehlo.concatenate":
        return None
    sizes: list[int | None] = []
    for piece in owner.operands:
        length = ir.RankedTensorType(piece.type).shape[0]
        read = constant_elements(ir, piece, length)
        sizes += read if read is not None else [None] * length
    return sizes if len(sizes) == rank else None


def vector_element(ir: Any, value: Any, position: int) -> Any:
    """Element ``position`` of the 1-D integer tensor ``value`` as a ``tensor<1xi32>`` at the
    insertion point: a start index or slice size read out of a gather's vector operand."""
    kind = ir.RankedTensorType(value.type)
    cut = op_result(
        ir,
        "stablehlo.slice",
        ir.RankedTensorType.get([1], kind.element_type),
        value,
        start_indices=ir.DenseI64ArrayAttr.get([position]),
        limit_indices=ir.DenseI64ArrayAttr.get([position + 1]),
        strides=ir.DenseI64ArrayAttr.get([1]),
    )
    i32 = ir.IntegerType.get_signless(32)
    if kind.element_type == i32:
        return cut
    return op_result(ir, "stablehlo.convert", ir.RankedTensorType.get([1], i32), cut)


def element_pieces(ir: Any, value: Any) -> list[Any]:
    """The elements of the small static integer tensor ``value`` (a pad's amounts, a
    ``dynamic_conv``'s padding), in row-major order, each a ``tensor<1x..>`` value: the
    one-element values it was concatenated and reshaped from where it was, else slices of
    it made at the insertion point. IREE 3.13 miscompiles some of those tensors when it
    must build them ("'stream.async.fill' op has invalid Write access range"); read apart,
    they are left unused."""
    kind = ir.RankedTensorType(value.type)
    one = ir.RankedTensorType.get([1], kind.element_type)
    if kind.rank == 1 and kind.shape[0] == 1:
        return [value]
    owner = value.owner if isinstance(value, ir.OpResult) else None
    if owner is not None and owner.name == "stablehlo.reshape":
        return element_pieces(ir, owner.operands[0])
    if owner is not None and owner.name == "stablehlo.concatenate":
        dimension = ir.IntegerAttr(owner.attributes["dimension"]).value
        if all(size == 1 for size in kind.shape[:dimension]):  # row-major: one after another
            return [piece for part in owner.operands for piece in element_pieces(ir, part)]
    flat = value
    if kind.rank != 1:
        flat_type = ir.RankedTensorType.get([int(element_count(kind))], kind.element_type)
        flat = op_result(ir, "stablehlo.reshape", flat_type, value)
    return [
        op_result(
            ir,
            "stablehlo.slice",
            one,
            flat,
            start_indices=ir.DenseI64ArrayAttr.get([position]),
            limit_indices=ir.DenseI64ArrayAttr.get([position + 1]),
            strides=ir.DenseI64ArrayAttr.get([1]),
        )
        for position in range(int(element_count(kind)))
    ]


def element_count(kind: Any) -> int:
    """How many elements the static tensor type ``kind`` holds."""
    count = 1
    for size in kind.shape:
        count *= size
    return count


def op_result(ir: Any, name: str, result: Any, *operands: Any, **attributes: Any) -> Any:
    """The result of a new op ``name`` of one result of type ``result``, at the current
    insertion point: how the fixes write their ops."""
    return ir.Operation.create(
        name, results=[result], operands=list(operands), attributes=attributes
    ).result


def signless_bits(ir: Any, value: Any) -> Any:
    """``value``, a tensor of integers, as the signless integers of the same width
    (``stablehlo.bitcast_convert`` at the insertion point): what the fixes for IREE's
    unsigned tensors move, size or combine instead of the unsigned ones."""
    kind = ir.RankedTensorType(value.type)
    width = ir.IntegerType(kind.element_type).width
    bits = ir.RankedTensorType.get(kind.shape, ir.IntegerType.get_signless(width), kind.encoding)
    return op_result(ir, "stablehlo.bitcast_convert", bits, value)


def replace_by_template(operation: Any, template: Any) -> None:
    """Replace ``operation`` by a clone of the ``linalg.generic`` that begins ``template``'s
    function (its inputs the function's first arguments, its output the last): its inputs
    become ``operation``'s operands, in order, and its output a ``tensor.empty`` of the
    result's type, of the sizes of ``operation``'s first operand where they are dynamic
    (the form the math fixes write once per tensor type and clone at each op of that
    type)."""
    from iree.compiler import ir

    generic = template.body.operations[0].regions[0].blocks[0].operations[0]
    kind = operation.results[0].type
    inputs = list(operation.operands)
    with ir.InsertionPoint(operation), operation.location:
        index = ir.IndexType.get()
        sizes = [
            op_result(
                ir,
                "tensor.dim",
                index,
                inputs[0],
                op_result(ir, "arith.constant", index, value=ir.IntegerAttr.get(index, dimension)),
            )
            for dimension in range(kind.rank)
            if kind.is_dynamic_dim(dimension)
        ]
        made = ir.Operation.create("tensor.empty", results=[kind], operands=sizes)
        result = generic.clone()
    for position, operand in enumerate(inputs):
        result.operands[position] = operand
    result.operands[len(inputs)] = made.result
    operation.results[0].replace_all_uses_with(result.result)
    operation.erase()


def replace_each(
    module: Any,
    name: str,
    form: Callable[[Any, Any], Any],
    build: Callable[[Any, Any, Any], Any],
) -> int:
    """Replace every op called ``name`` whose ``form(ir, op)`` is not None by the value
    ``build(ir, op, form)`` makes in its place (at its location), return how many: the
    fixes that write their ops inline, where ``outline_into_functions`` writes a function
    (``fold_each`` with the test and the build apart)."""

    def replaced(ir: Any, operation: Any) -> Any:
        found = form(ir, operation)
        return None if found is None else build(ir, operation, found)

    return fold_each(module, (name,), replaced)


def fold_each(module: Any, names: Sequence[str], folded: Callable[[Any, Any], Any]) -> int:
    """Replace every op called one of ``names`` by ``folded(ir, op)``, a value that
    ``folded`` finds or makes at the op's place (and location), where it is not None;
    return how many: the fixes that rewrite an op as XLA's simplifier does. ``folded``
    makes no op when it gives None."""
    from iree.compiler import ir

    count = 0
    for operation in operations_named(module, *names):
        with ir.InsertionPoint(operation), operation.location:
            value = folded(ir, operation)
        if value is None:
            continue
        operation.results[0].replace_all_uses_with(value)
        operation.erase()
        count += 1
    return count


def of_complex_elements(ir: Any, operation: Any) -> Any:
    """``operation``'s first operand's type when it is a ranked tensor of complex elements,
    else None: the ``form`` of ``replace_each`` for the complex arithmetic fixes."""
    given = operation.operands[0].type
    if isinstance(given, ir.RankedTensorType) and isinstance(given.element_type, ir.ComplexType):
        return given
    return None


def outline_into_functions(
    module: Any,
    name: str,
    prefix: str,
    function_text: Callable[[Any, Any, str], str | None],
    *,
    result: int = 0,
    operands: Callable[[Any], list[Any]] = lambda operation: list(operation.operands),
) -> int:
    """Replace every op called ``name`` for which ``function_text(ir, op, symbol)`` gives
    the text of a ``func.func private @symbol`` by a call of that function (``prefix`` and
    a number make the symbols), return how many. The call takes ``operands(op)`` and stands
    for the op's result number ``result``, whose uses it takes; the op, whose other results
    must be unused, is erased, and the functions are added at the module's start."""
    from iree.compiler import ir

    found: list[tuple[Any, str]] = []
    for operation in operations_named(module, name):
        text = function_text(ir, operation, f"{prefix}{len(found)}")
        if text is not None:
            found.append((operation, text))
    for number, (operation, _) in enumerate(found):
        with operation.context, operation.location, ir.InsertionPoint(operation):
            call = ir.Operation.create(
                "func.call",
                results=[operation.results[result].type],
                operands=operands(operation),
                attributes={"callee": ir.FlatSymbolRefAttr.get(f"{prefix}{number}")},
            )
        operation.results[result].replace_all_uses_with(call.results[0])
        operation.erase()
    add_functions(module, [text for _, text in found])
    return len(found)


def add_functions(module: Any, texts: list[str]) -> None:
    """Parse the functions ``texts`` (each a ``func.func``) in ``module``'s context and
    put them at the module's start."""
    if not texts:
        return
    from iree.compiler import ir

    with module.context, ir.Location.unknown():
        parsed = ir.Module.parse("\n".join(texts))
        first = module.body.operations[0]
        for new in list(parsed.body.operations):
            new.operation.move_before(first)


def dimension_sizes(shaped: Any) -> list[int | None]:
    """The sizes of the tensor type ``shaped``, None for a dynamic one."""
    return [None if shaped.is_dynamic_dim(d) else shaped.shape[d] for d in range(shaped.rank)]


def tensor_text(sizes: Sequence[int | None], element: Any) -> str:
    """The text of the tensor type of ``sizes`` (None: dynamic) and ``element``: what the
    functions ``outline_into_functions`` adds are written with."""
    return (
        f"tensor<{''.join(('?' if size is None else str(size)) + 'x' for size in sizes)}{element}>"
    )


def size_value(lines: list[str], value: str, argument: str, shaped: Any, dimension: int) -> str:
    """``%value``, the size of ``dimension`` of the argument ``%argument`` (of the tensor
    type ``shaped``) as an index: a ``tensor.dim`` when it is dynamic, a constant when not,
    appended to ``lines`` (the body of a function ``outline_into_functions`` adds)."""
    if shaped.is_dynamic_dim(dimension):
        lines.append(f"  %{value}_at = arith.constant {dimension} : index")
        lines.append(f"  %{value} = tensor.dim %{argument}, %{value}_at : {shaped}")
    else:
        lines.append(f"  %{value} = arith.constant {shaped.shape[dimension]} : index")
    return f"%{value}"


def index_of_scalar(lines: list[str], value: str, argument: str, integer: str) -> str:
    """``%value``, the 0-d tensor of ``integer`` elements ``%argument`` (a start index, a
    pad's amount) as an index, appended to ``lines`` (the body of a function
    ``outline_into_functions`` adds)."""
    lines.append(f"  %{value}_raw = tensor.extract %{argument}[] : tensor<{integer}>")
    lines.append(f"  %{value} = arith.index_cast %{value}_raw : {integer} to index")
    return f"%{value}"


def elementwise_lines(
    result: str, inputs: list[str], output: str, shaped: Any, body: list[str]
) -> list[str]:
    """The lines of ``%result = linalg.generic`` over the elements of ``inputs`` and
    ``output`` (values of the tensor type ``shaped``), whose block arguments are ``%in0``,
    ``%in1``, ... and ``%out`` and whose ``body`` ends by defining ``%yielded``."""
    element, rank = shaped.element_type, shaped.rank
    loops = ", ".join(f"d{d}" for d in range(rank))
    same = f"affine_map<({loops}) -> ({loops})>"
    parallel = ", ".join(['"parallel"'] * rank)
    arguments = [f"%in{n}: {element}" for n in range(len(inputs))] + [f"%out: {element}"]
    return [
        f"  {result} = linalg.generic {{indexing_maps = [{', '.join([same] * (len(inputs) + 1))}],"
        f" iterator_types = [{parallel}]}} ins({', '.join(inputs)} : "
        f"{', '.join([str(shaped)] * len(inputs))}) outs({output} : {shaped}) {{",
        f"  ^bb0({', '.join(arguments)}):",
        *(f"    {line}" for line in body),
        f"    linalg.yield %yielded : {element}",
        f"  }} -> {shaped}",
    ]


def one_op_body(operation: Any, names: Collection[str]) -> str | None:
    """The name of the one op of ``operation``'s body (a reduce's or a window's region, or
    the function a custom call names as its computation) when it is one of ``names``
    applied to the block's two arguments, each once, and its result is what the body
    returns; else None."""
    block = operation.regions[0].blocks[0]
    body = [op.operation for op in block.operations]
    arguments = list(block.arguments)
    if len(body) != 2 or body[0].name not in names or body[1].name not in _RETURNS:
        return None
    operands = list(body[0].operands)
    if len(arguments) != 2 or len(operands) != 2 or set(operands) != set(arguments):
        return None
    if list(body[1].operands) != [body[0].results[0]]:
        return None
    return str(body[0].name)


class Window(NamedTuple):
    """A reduce_window of one operand and one static result: its body's one op, the
    operand's and the result's types, and its integer attributes by name."""

    body: str
    given: Any  # ir.RankedTensorType
    result: Any  # ir.RankedTensorType
    integers: Callable[[str], list[int]]  # an attribute, or its default: 1 per dimension


def window_of(ir: Any, operation: Any, bodies: Collection[str]) -> Window | None:
    """``operation`` as a ``Window`` when it reduces one operand to one result, both of
    static shape and the result not empty, with a body of one of ``bodies``
    (``one_op_body``); else None: the cases the window rewrites leave to IREE."""
    if len(operation.operands) != 2 or len(operation.results) != 1:
        return None
    body = one_op_body(operation, bodies)
    if body is None:
        return None
    given = ir.RankedTensorType(operation.operands[0].type)
    result = ir.RankedTensorType(operation.results[0].type)
    if not (given.has_static_shape and result.has_static_shape) or 0 in result.shape:
        return None
    attributes, rank = operation.attributes, given.rank

    def integers(name: str) -> list[int]:
        if name not in attributes:
            return [1] * rank
        return list(ir.DenseI64ArrayAttr(attributes[name]))

    return Window(body, given, result, integers)


def functions_by_name(module: Any) -> dict[str, Any]:
    """The module's functions by name: where a window's body, or a function a body calls,
    is looked up."""
    found = {}
    for operation in module.body.operations:
        if operation.operation.name == "func.func":
            name = str(operation.operation.attributes["sym_name"]).strip('"')
            found[name] = operation.operation
    return found


def constant_attribute(ir: Any, operation: Any) -> Any:
    """The ``value`` attribute of a constant op, or None when its elements are complex:
    the bindings cannot give a dense attribute of complex elements to Python ("Can't cast
    unknown element type"), and no fix reads a complex constant's value."""
    kind = operation.results[0].type
    if isinstance(kind, ir.ShapedType) and isinstance(
        ir.ShapedType(kind).element_type, ir.ComplexType
    ):
        return None
    return operation.attributes["value"]


def splat_value(ir: Any, value: Any, dynamic: bool = False) -> float | None:
    """The number of a float ``value`` that is a splat constant (through
    ``broadcast_in_dim``s, and with ``dynamic`` through ``dynamic_broadcast_in_dim``s, as
    jax writes a constant of a symbolic shape), or None: a reduce's initial value, say."""
    through = ("stablehlo.broadcast_in_dim", "stablehlo.dynamic_broadcast_in_dim")
    while isinstance(value, ir.OpResult):
        owner = value.owner
        if owner.name in through[: 1 + dynamic]:
            value = owner.operands[0]
            continue
        found = constant_attribute(ir, owner) if owner.name == "stablehlo.constant" else None
        if found is None:
            return None
        attribute = ir.DenseElementsAttr(found)
        if not attribute.is_splat:
            return None
        return float(ir.FloatAttr(attribute.get_splat_value()).value)
    return None
