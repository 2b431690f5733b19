"""The package's modules import each other without cycles: every ``import`` counts, at module
level, inside functions (a deferred import is still a dependency) and under TYPE_CHECKING."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "rewriter"


def _module_names() -> dict[str, Path]:
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def _imported(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that ``module`` imports (``from . import x`` names module x)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in modules}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                child = f"{source}.{alias.name}"
                found.add(child if child in modules else source)
    return {name for name in found if name in modules and name != module}


def import_graph() -> dict[str, set[str]]:
    modules = _module_names()
    return {name: _imported(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for successor in sorted(graph[node]):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_package_has_no_import_cycle():
    assert cycles(import_graph()) == []


def test_the_graph_sees_deferred_and_type_checking_imports():
    graph = import_graph()
    assert "rewriter.plan" in graph["rewriter.ffi_adapters"]  # under TYPE_CHECKING
    assert "rewriter.html" in graph["rewriter.api"]  # inside a method
    assert "rewriter.compile.bridge" in graph["rewriter.compile.loader"]
    assert "rewriter.compile.bridge" in graph["rewriter.iree.ffi_handlers"]  # from ..compile
    assert "rewriter.model" in graph["rewriter.ffi_facts"]  # from . import model


def test_a_cycle_is_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
