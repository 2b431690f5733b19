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
