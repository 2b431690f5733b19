"""The package's modules import each other without cycles and only downwards through the layers
of LAYERS: every ``import`` counts, at module level, inside functions (a deferred import is
still a dependency) and under TYPE_CHECKING."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
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


ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"


def declared_layers(text: str) -> dict[str, tuple[set[str], set[str]]]:
    """The table under "## Layers": each layer, the modules it holds (a name, or a package
    and everything under it) and the layers it may import."""
    section = text.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    layers = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 4 or cells[0] in ("Layer", "---"):
            continue
        layer, modules, _, may_import = cells
        members = set(re.findall(r"`(rewriter[\w.]*)`", modules))
        below = set() if may_import == "nothing" else {n.strip() for n in may_import.split(",")}
        layers[layer] = (members, below)
    return layers


LAYERS = declared_layers(ARCHITECTURE.read_text(encoding="utf-8"))


def layer_of(module: str, layers: dict[str, tuple[set[str], set[str]]]) -> str | None:
    """The layer holding ``module``: the one naming it or the package around it (the root
    package ``rewriter`` names only its ``__init__``)."""
    for layer, (members, _) in layers.items():
        for member in members:
            if module == member or (member != "rewriter" and module.startswith(member + ".")):
                return layer
    return None


def upward_imports(
    graph: dict[str, set[str]], layers: dict[str, tuple[set[str], set[str]]]
) -> list[str]:
    """Every import that leaves its layer for one the layer may not import."""
    found = []
    for module, imported in sorted(graph.items()):
        own = layer_of(module, layers)
        for target in sorted(imported):
            theirs = layer_of(target, layers)
            allowed = layers[own][1] if own else set()
            if theirs != own and theirs not in allowed:
                found.append(f"{module} ({own}) imports {target} ({theirs})")
    return found


def test_the_table_names_the_layers_each_layer_may_import():
    assert {"syntax", "plan", "emit", "front doors", "compile", "iree"} <= set(LAYERS)
    assert LAYERS["syntax"] == ({"rewriter.syntax"}, set())
    for _, below in LAYERS.values():
        assert below <= set(LAYERS)


def test_every_module_has_a_layer():
    graph = import_graph()
    assert [module for module in sorted(graph) if layer_of(module, LAYERS) is None] == []


def test_no_module_imports_upwards():
    assert upward_imports(import_graph(), LAYERS) == []


def test_an_upward_import_is_found():
    layers = {"low": ({"p.low"}, set()), "high": ({"p.high"}, {"low"})}
    graph = {"p.low.a": {"p.high.b"}, "p.high.b": {"p.low.a"}, "p.high.c": {"p.high.b"}}
    assert upward_imports(graph, layers) == ["p.low.a (low) imports p.high.b (high)"]


def test_the_package_has_no_import_cycle():
    assert cycles(import_graph()) == []


def test_the_graph_sees_deferred_and_type_checking_imports():
    graph = import_graph()
    assert "rewriter.plan.planner" in graph["rewriter.emit.ffi_adapters"]  # under TYPE_CHECKING
    assert "rewriter.emit.notebook" in graph["rewriter.api"]  # inside a method
    assert "rewriter.compile.bridge" in graph["rewriter.compile.loader"]
    assert "rewriter.compile.bridge" in graph["rewriter.iree.ffi_handlers"]  # from ..compile
    assert "rewriter.syntax.model" in graph["rewriter.plan.ffi_facts"]  # from . import model


def test_a_cycle_is_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_the_command_line_parses_before_it_loads_the_parser():
    """``import rewriter`` and the CLI module load neither lark nor the planner: the public
    names load on first use, so ``--help`` and argument errors stay fast."""
    probe = (
        "import sys, rewriter, rewriter.cli; "
        "print(sorted(m for m in ('lark', 'rewriter.api', 'rewriter.plan.planner') "
        "if m in sys.modules))"
    )
    shown = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert shown.strip() == "[]"
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, rewriter; rewriter.rewrite; print('lark' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert loaded.strip() == "True"


def test_no_module_takes_a_standard_library_name():
    """A module named like one of the standard library (``select``, ``html``) reads as that
    module to a newcomer, and shadows it for a script run from inside its package."""
    names = {name.rpartition(".")[2] for name in import_graph()}
    assert {"select", "html"} <= set(sys.stdlib_module_names)
    assert sorted(names & set(sys.stdlib_module_names)) == []
