"""jax's shape assertions as a function that the caller runs before the compiled code.

A module exported with symbolic sizes begins ``main`` with ``@shape_assertion`` calls
(``shape_assertions.py``). In the compiled code a failed ``cf.assert`` can only abort the
process, and IREE's names no number of jax's message. So each entry whose function holds
assertions at its top level also gets a function of its own, ``@rw_check_F``, of the same
arguments: the ops the assertions' predicates are computed by (a copy: sizes read from
the arguments, integer arithmetic),
and one result per number of the message: the number of the first assertion that fails
(0: none fails), then the values jax formats into its message (``{0}``, ``{1}``, ...), as
i64 scalars, computed by scalar ops where they can be (``host_scalars.py``: on IREE, on
the host, with no dispatch to wait for).
``load``'s functions (both paths') and the C API call it first, with the call's own
arguments, and raise ``ValueError`` or return ``STATUS_INVALID_ARGUMENT`` with jax's
message, the values in place, as ``Exported.call`` does; the program does not run. The
assertions stay in the entry's function, where they become ``cf.assert``: never reached
when the check passed.

A predicate may call a function of the module whose ops compute and nothing else (jax's
``@divmod``, ``@floor_divide`` and ``@remainder`` of a size ``2*n``: StableHLO ops with
no regions, no custom call, calls only of such functions): the check copies the call. An
assertion whose predicate or values come from an op with regions, an op of another block
or a call of any other function is left to the ``cf.assert`` alone (no check copies it):
a broken one stops IREE's call with IREE's message and aborts the compiled code.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NamedTuple

from ..plan.naming import NamePool, c_identifier
from .host_scalars import HostScalars
from .mlir_walk import functions_by_name
from .shape_assertions import SHAPE_ASSERTION

CHECK_PREFIX = "rw_check_"
_NUMBER = re.compile(r"\{(\d+)\}")
# What jax's message says when the module gives none.
DEFAULT_MESSAGE = "a shape assertion of the export failed"


def assertions_of(ir: Any, function: Any) -> list[Any]:
    """The ``@shape_assertion`` calls at the top level of ``function``, in order."""
    found = []
    for operation in function.regions[0].blocks[0].operations:
        op = operation.operation
        if op.name != "stablehlo.custom_call" or op.results or not op.operands:
            continue
        if str(op.attributes["call_target_name"]).strip('"') != SHAPE_ASSERTION:
            continue
        holds = op.operands[0].type
        if not isinstance(holds, ir.RankedTensorType) or holds.rank != 0:
            continue
        if str(holds.element_type) == "i1" and all(_scalar_integer(ir, v) for v in op.operands[1:]):
            found.append(op)
    return found


def message_of(ir: Any, assertion: Any) -> str:
    """jax's message of ``assertion``, with its ``{N}`` placeholders."""
    if "error_message" in assertion.attributes:
        return ir.StringAttr(assertion.attributes["error_message"]).value
    return DEFAULT_MESSAGE


def filled(message: str, values: list[int]) -> str:
    """``message`` with each ``{N}`` replaced by ``values[N]`` (kept where there is none)."""

    def value(found: re.Match[str]) -> str:
        number = int(found.group(1))
        return str(values[number]) if number < len(values) else found.group()

    return _NUMBER.sub(value, message)


def failed_check(messages: tuple[str, ...], results: list[int]) -> str:
    """The message of a check that failed: ``results`` are what it gave, the number of
    the assertion, then the values of its message."""
    return filled(messages[results[0] - 1], results[1:])


def _scalar_integer(ir: Any, value: Any) -> bool:
    kind = value.type
    return (
        isinstance(kind, ir.RankedTensorType)
        and kind.rank == 0
        and isinstance(kind.element_type, ir.IntegerType)
        and kind.element_type.is_signless
    )


class ShapeCheck(NamedTuple):
    """The check of one function's assertions: its symbol, the assertions' messages (in
    the order of their numbers, 1, 2, ...), how many values follow the number, and whether
    it reads nothing but the arguments' sizes (every value a scalar op of
    ``host_scalars.py``): then its result is the same for arguments of the same shapes."""

    symbol: str
    messages: list[str]
    values: int
    sizes_only: bool


def add_shape_checks(
    ir: Any,
    module: Any,
    functions: list[tuple[str, Any]],
    pool: NamePool,
) -> dict[str, ShapeCheck]:
    """A check (``add_shape_check``) for each of ``functions`` (its name and its op) that
    holds assertions, named ``rw_check_F`` from ``pool`` (a ``NamePool`` of the module's
    symbols), by function name."""
    added = {}
    for name, function in functions:
        if not assertions_of(ir, function):
            continue
        symbol = pool.claim(CHECK_PREFIX + c_identifier(name))
        check = add_shape_check(ir, module, function, symbol)
        if check.messages:
            added[name] = check
    return added


def add_shape_check(ir: Any, module: Any, function: Any, symbol: str) -> ShapeCheck:
    """Add ``@symbol``, the check of ``function``'s assertions (the module's doc), at the end
    of ``module``. No function is added, and a check of no messages returned, when no
    assertion can be checked."""
    block = function.regions[0].blocks[0]
    order = {op.operation: index for index, op in enumerate(block.operations)}
    computes = _ComputingFunctions(module)
    checked: list[tuple[Any, set[int]]] = []
    for assertion in assertions_of(ir, function):
        needed = _computed_by(ir, list(assertion.operands), block, order, computes)
        if needed is not None:
            checked.append((assertion, needed))
    if not checked:
        return ShapeCheck(symbol, [], 0, sizes_only=False)
    # At least one value: two results or more come back through a pointer, the first
    # parameter of MLIR's C interface, as an entry's do; one would be returned.
    values = max(1, *(len(assertion.operands) - 1 for assertion, _ in checked))
    arguments = list(
        ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value).inputs
    )
    i64 = ir.IntegerType.get_signless(64)
    copied = set().union(*(needed for _, needed in checked))
    with function.context, ir.Location.unknown(), ir.InsertionPoint(module.body):
        returned = [i64] * (1 + values)
        check = ir.Operation.create(
            "func.func",
            attributes={
                "sym_name": ir.StringAttr.get(symbol),
                "function_type": ir.TypeAttr.get(ir.FunctionType.get(arguments, returned)),
                "llvm.emit_c_interface": ir.UnitAttr.get(),
            },
            regions=1,
        )
        body = check.regions[0].blocks.append(*arguments)
        mapping = {a: b for a, b in zip(block.arguments, body.arguments, strict=True)}
        with ir.InsertionPoint(body):
            scalar_of = _host_scalars(ir, checked, mapping)
            sizes_only = scalar_of is not None
            if scalar_of is None:  # the tensor ops copied, each value read from its tensor
                _copy(block, copied, order, mapping)

                def scalar_of(value: Any) -> Any:
                    return _scalar(ir, mapping[value])

            zero = _i64_constant(ir, 0)
            results = [zero] * (1 + values)
            for number in range(len(checked), 0, -1):  # the first that fails wins
                assertion = checked[number - 1][0]
                holds = scalar_of(assertion.operands[0])
                candidates = [_i64_constant(ir, number)]
                candidates += [_as_i64(ir, scalar_of(v)) for v in assertion.operands[1:]]
                candidates += [zero] * (1 + values - len(candidates))
                for index, candidate in enumerate(candidates):
                    results[index] = ir.Operation.create(
                        "arith.select",
                        results=[i64],
                        operands=[holds, results[index], candidate],
                    ).result
            ir.Operation.create("func.return", operands=results)
    messages = [message_of(ir, assertion) for assertion, _ in checked]
    return ShapeCheck(symbol, messages, values, sizes_only)


def _host_scalars(ir: Any, checked: list[tuple[Any, set[int]]], mapping: dict) -> Any:
    """A function from each value of the ``checked`` assertions to its scalar, written at
    the insertion point by scalar ops that read the sizes of the check's own arguments
    (``host_scalars.py``: no dispatch on IREE); None when one of them has no scalar form
    (the scalar ops written for the others are then unused, and canonicalization drops
    them)."""
    scalars = HostScalars(ir, mapping)
    values = [v for assertion, _ in checked for v in assertion.operands]
    written = [scalars.scalar_of(v) for v in values]
    if any(w is None for w in written):
        return None
    found = dict(zip(values, written, strict=True))
    return found.__getitem__


def _copy(block: Any, positions: set[int], order: dict[Any, int], mapping: dict) -> None:
    """Copy the ops of ``block`` at ``positions``, in order, to the insertion point, each
    reading the copies of its operands (``mapping``, which gets their results)."""
    for operation in block.operations:
        op = operation.operation
        if order[op] not in positions:
            continue
        copy = op.clone()
        for index, operand in enumerate(op.operands):
            copy.operands[index] = mapping[operand]
        for old, new in zip(op.results, copy.results, strict=True):
            mapping[old] = new


class _ComputingFunctions:
    """Which functions of a module compute and do nothing else: every op a StableHLO op
    with no regions but a custom call, a ``func.return``, or a call of such a function."""

    def __init__(self, module: Any) -> None:
        self._functions = functions_by_name(module)
        self._known: dict[str, bool] = {}

    def __call__(self, call: Any) -> bool:
        """Whether ``call`` (a ``func.call``) calls such a function."""
        return self._computes(str(call.attributes["callee"]).lstrip("@").strip('"'))

    def _computes(self, name: str) -> bool:
        if name not in self._known:
            self._known[name] = False  # a function that calls itself is refused
            function = self._functions.get(name)
            self._known[name] = function is not None and all(
                self._computing_op(op.operation) for op in function.regions[0].blocks[0]
            )
        return self._known[name]

    def _computing_op(self, op: Any) -> bool:
        if op.regions:
            return False
        if op.name == "func.call":
            return self(op)
        if op.name == "func.return":
            return True
        return op.name.startswith("stablehlo.") and op.name != "stablehlo.custom_call"


def _computed_by(
    ir: Any,
    values: list[Any],
    block: Any,
    order: dict[Any, int],
    computes: Callable[[Any], bool],
) -> set[int] | None:
    """The positions in ``block`` of the ops that ``values`` are computed by; None when one
    of them is no op of ``block`` with its operands there (an op with regions, a call of a
    function that does more than compute (``computes``), a value of another block)."""
    needed: set[int] = set()
    stack = list(values)
    while stack:
        value = stack.pop()
        if isinstance(value, ir.BlockArgument):
            if value.owner != block:
                return None
            continue
        op = value.owner.operation
        position = order.get(op)
        if position is None or op.regions or op.name == "stablehlo.custom_call":
            return None
        if op.name == "func.call" and not computes(op):
            return None
        if position not in needed:
            needed.add(position)
            stack.extend(op.operands)
    return needed


def _scalar(ir: Any, tensor: Any) -> Any:
    element = ir.RankedTensorType(tensor.type).element_type
    return ir.Operation.create("tensor.extract", results=[element], operands=[tensor]).result


def _as_i64(ir: Any, value: Any) -> Any:
    width = ir.IntegerType(value.type).width
    if width == 64:
        return value
    i64 = ir.IntegerType.get_signless(64)
    return ir.Operation.create("arith.extsi", results=[i64], operands=[value]).result


def _i64_constant(ir: Any, number: int) -> Any:
    i64 = ir.IntegerType.get_signless(64)
    return ir.Operation.create(
        "arith.constant", results=[i64], attributes={"value": ir.IntegerAttr.get(i64, number)}
    ).result
