"""Finding the operations a fix rewrites, before it rewrites any (``iree.compiler.ir``).

A walk that changed the module while it walks could visit an op it made or skip one it
moved; every fix first collects its ops with ``operations_named`` or ``operations_where``,
then rewrites them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


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


def static_result_of(operation: Any, *element_types: type) -> bool:
    """Whether ``operation``'s first result is a tensor of static shape whose element is
    an instance of one of ``element_types`` (``ir.F32Type``, ...): what the math fixes
    rewrite, since the forms they write need the shape (dynamic shapes keep IREE's op)."""
    from iree.compiler import ir

    tensor = operation.results[0].type
    return (
        isinstance(tensor, ir.RankedTensorType)
        and isinstance(tensor.element_type, element_types)
        and tensor.has_static_shape
    )


def replace_by_template(operation: Any, template: Any) -> None:
    """Replace ``operation`` by a clone of the first two ops of ``template``'s function: a
    ``tensor.empty`` and a ``linalg.generic`` whose inputs become ``operation``'s operands,
    in order, and whose output the empty tensor (the form the math fixes write once per
    tensor type and clone at each op of that type)."""
    from iree.compiler import ir

    body = template.body.operations[0].regions[0].blocks[0].operations
    empty, generic = body[0], body[1]
    with ir.InsertionPoint(operation):
        made = empty.clone()
        result = generic.clone()
    inputs = list(operation.operands)
    for index, operand in enumerate(inputs):
        result.operands[index] = operand
    result.operands[len(inputs)] = made.result
    operation.results[0].replace_all_uses_with(result.result)
    operation.erase()
