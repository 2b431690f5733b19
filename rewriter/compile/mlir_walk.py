"""Finding the operations a fix rewrites, before it rewrites any (``iree.compiler.ir``).

A walk that changed the module while it walks could visit an op it made or skip one it
moved; every fix first collects its ops with ``operations_named``, then rewrites them.
"""

from __future__ import annotations

from typing import Any


def operations_named(module: Any, name: str) -> list[Any]:
    """Every operation called ``name`` in ``module`` (nested ones included), in order."""
    from iree.compiler import ir

    found: list[Any] = []

    def visit(operation):
        if operation.name == name:
            found.append(operation)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found
