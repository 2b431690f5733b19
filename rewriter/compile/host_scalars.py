"""jax's size arithmetic on 0-d tensors as scalar ``arith`` ops, which run on the host.

jax computes the predicates and values of its shape assertions (``shape_assertions.py``,
``shape_checks.py``) from the arguments' sizes with StableHLO ops on ``tensor<i32>`` and
``tensor<i1>``: ``get_dimension_size``, ``compare``, ``and``, integer arithmetic. IREE
makes a dispatch of each such op and reads the predicate back before the call goes on: on
``local-task`` a handover to a worker and a wait for it, 0.2 ms a call of
``jnp.tanh(x) * 2 + jnp.exp(-x * x)`` of ``symbolic_shape("b, 1024")`` (at batch 8, 0.29
ms against 0.10 without the assertions; 0.035 against 0.019 on ``local-sync``).
``scalar_of`` writes the same computation as scalar ops (``tensor.dim``, ``arith``), which
IREE runs in its VM, on the host, with no dispatch; the compiled path compiles them
alike.

Each op is written as StableHLO defines it on integers: two's complement arithmetic that
wraps, comparisons signed unless the op says ``UNSIGNED`` (and unsigned on ``i1``),
``convert`` sign-extending all but ``i1`` (0 or 1). A value that comes from anything
else (an op not in ``_WRITERS``, a tensor of another rank or element, a division by
anything but a nonzero constant, whose result StableHLO leaves to the implementation)
has no scalar form: ``scalar_of`` returns None and the caller keeps the tensor ops (the
scalar ops written for its operands are left unused, and canonicalization drops them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_COMPARISONS = {
    ("EQ", False): "eq",
    ("NE", False): "ne",
    ("LT", False): "slt",
    ("LE", False): "sle",
    ("GT", False): "sgt",
    ("GE", False): "sge",
    ("EQ", True): "eq",
    ("NE", True): "ne",
    ("LT", True): "ult",
    ("LE", True): "ule",
    ("GT", True): "ugt",
    ("GE", True): "uge",
}
# arith.cmpi's predicate attribute is an i64 of this enumeration.
_PREDICATE_NUMBERS = {
    "eq": 0,
    "ne": 1,
    "slt": 2,
    "sle": 3,
    "sgt": 4,
    "sge": 5,
    "ult": 6,
    "ule": 7,
    "ugt": 8,
    "uge": 9,
}
_BINARY = {
    "stablehlo.add": "arith.addi",
    "stablehlo.subtract": "arith.subi",
    "stablehlo.multiply": "arith.muli",
    "stablehlo.and": "arith.andi",
    "stablehlo.or": "arith.ori",
    "stablehlo.xor": "arith.xori",
    "stablehlo.maximum": "arith.maxsi",
    "stablehlo.minimum": "arith.minsi",
}
_DIVISIONS = {"stablehlo.divide": "arith.divsi", "stablehlo.remainder": "arith.remsi"}


class HostScalars:
    """Scalars of 0-d integer tensors, written at the insertion point and remembered.

    A size is read from a block argument (as jax's assertions read the function's
    arguments; a size of any other tensor has no scalar form here). ``arguments`` maps an
    argument to the value to read it from instead (the same argument of a copy of the
    function, where the check runs); by default, the argument itself."""

    def __init__(self, ir: Any, arguments: dict[Any, Any] | None = None) -> None:
        self.ir = ir
        self.arguments = arguments or {}
        self._written: dict[Any, Any] = {}

    def scalar_of(self, value: Any) -> Any | None:
        """The scalar of ``value`` (a ``tensor<iN>``), or None when it has none (module
        doc); the ops that compute it are written at the insertion point."""
        if value in self._written:
            return self._written[value]
        element = _integer_element(self.ir, value)
        if element is None or isinstance(value, self.ir.BlockArgument):
            return None
        operation = value.owner.operation
        writer = _WRITERS.get(operation.name)
        if writer is None:
            return None
        operands = []
        if operation.name != "stablehlo.get_dimension_size":
            for operand in operation.operands:
                scalar = self.scalar_of(operand)
                if scalar is None:
                    return None
                operands.append(scalar)
        written = writer(self, operation, element, operands)
        if written is not None:
            self._written[value] = written
        return written

    def _create(self, name: str, result: Any, operands: list[Any], **attributes: Any) -> Any:
        return self.ir.Operation.create(
            name, results=[result], operands=operands, attributes=attributes
        ).result

    def constant(self, element: Any, number: int) -> Any:
        """``arith.constant number : element``."""
        value = self.ir.IntegerAttr.get(element, number)
        return self._create("arith.constant", element, [], value=value)

    def cast(self, scalar: Any, element: Any, signed: bool) -> Any:
        """``scalar`` as an integer of ``element``'s width: extended (by its sign when
        ``signed``), truncated or the same."""
        ir = self.ir
        source, target = ir.IntegerType(scalar.type).width, ir.IntegerType(element).width
        if source == target:
            return scalar
        if source > target:
            return self._create("arith.trunci", element, [scalar])
        return self._create("arith.extsi" if signed else "arith.extui", element, [scalar])


def _integer_element(ir: Any, value: Any) -> Any | None:
    """The element type of ``value`` when it is a 0-d tensor of signless integers."""
    kind = value.type
    if not isinstance(kind, ir.RankedTensorType) or kind.rank != 0:
        return None
    element = kind.element_type
    if isinstance(element, ir.IntegerType) and element.is_signless:
        return element
    return None


def _dimension_size(scalars: HostScalars, operation: Any, element: Any, _: list[Any]) -> Any:
    ir = scalars.ir
    shaped = operation.operands[0]
    if not isinstance(shaped, ir.BlockArgument) or not isinstance(shaped.type, ir.RankedTensorType):
        return None  # jax reads the sizes of the function's arguments, which a copy maps
    shaped = scalars.arguments.get(shaped, shaped)
    index = ir.IndexType.get()
    dimension = ir.IntegerAttr(operation.attributes["dimension"]).value
    at = ir.IntegerAttr.get(index, dimension)
    position = scalars._create("arith.constant", index, [], value=at)
    size = scalars._create("tensor.dim", index, [shaped, position])
    return scalars._create("arith.index_cast", element, [size])


def _constant(scalars: HostScalars, operation: Any, element: Any, _: list[Any]) -> Any:
    ir = scalars.ir
    attribute = ir.DenseIntElementsAttr(operation.attributes["value"])
    number = ir.IntegerAttr(attribute.get_splat_value()).value
    return scalars.constant(element, number)


def _compare(scalars: HostScalars, operation: Any, element: Any, operands: list[Any]) -> Any:
    ir = scalars.ir
    attributes = operation.attributes
    direction = str(attributes["comparison_direction"]).split()[-1].rstrip(">")
    unsigned = ir.IntegerType(operands[0].type).width == 1
    if "compare_type" in attributes:
        kind = str(attributes["compare_type"]).split()[-1].rstrip(">")
        if kind not in ("SIGNED", "UNSIGNED"):
            return None
        unsigned = kind == "UNSIGNED"
    predicate = _COMPARISONS.get((direction, unsigned))
    if predicate is None:
        return None
    i64 = ir.IntegerType.get_signless(64)
    number = ir.IntegerAttr.get(i64, _PREDICATE_NUMBERS[predicate])
    return scalars._create("arith.cmpi", element, operands, predicate=number)


def _binary(scalars: HostScalars, operation: Any, element: Any, operands: list[Any]) -> Any:
    return scalars._create(_BINARY[operation.name], element, operands)


def _division(scalars: HostScalars, operation: Any, element: Any, operands: list[Any]) -> Any:
    divisor = operation.operands[1].owner.operation
    if divisor.name != "stablehlo.constant" or _constant_number(scalars.ir, divisor) in (0, -1):
        return None  # by zero: the implementation's; by -1: overflow at the least value
    return scalars._create(_DIVISIONS[operation.name], element, operands)


def _constant_number(ir: Any, operation: Any) -> int:
    attribute = ir.DenseIntElementsAttr(operation.attributes["value"])
    return ir.IntegerAttr(attribute.get_splat_value()).value


def _negate(scalars: HostScalars, operation: Any, element: Any, operands: list[Any]) -> Any:
    return scalars._create("arith.subi", element, [scalars.constant(element, 0), operands[0]])


def _not(scalars: HostScalars, operation: Any, element: Any, operands: list[Any]) -> Any:
    return scalars._create("arith.xori", element, [operands[0], scalars.constant(element, -1)])


def _select(scalars: HostScalars, operation: Any, element: Any, operands: list[Any]) -> Any:
    return scalars._create("arith.select", element, operands)


def _convert(scalars: HostScalars, operation: Any, element: Any, operands: list[Any]) -> Any:
    source = scalars.ir.IntegerType(operands[0].type).width
    return scalars.cast(operands[0], element, signed=source != 1)


_Writer = Callable[[HostScalars, Any, Any, list[Any]], Any]
_WRITERS: dict[str, _Writer] = {
    "stablehlo.get_dimension_size": _dimension_size,
    "stablehlo.constant": _constant,
    "stablehlo.compare": _compare,
    **dict.fromkeys(_BINARY, _binary),
    **dict.fromkeys(_DIVISIONS, _division),
    "stablehlo.negate": _negate,
    "stablehlo.not": _not,
    "stablehlo.select": _select,
    "stablehlo.convert": _convert,
}
