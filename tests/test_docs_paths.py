"""Every file and test the docs name exists: a path in backquotes or a link in README.md,
CONTRIBUTING.md, docs/, abi/README.md and benchmarks/README.md, tried from the checkout's
root, ``rewriter/``, ``tests/`` and ``abi/include/`` (docs name modules by their path in
the package, FileCheck cases by theirs in tests/, headers by their include path);
``file.py::test_name`` names a test that must be defined in that file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted(
    p
    for p in [
        ROOT / "README.md",
        ROOT / "CONTRIBUTING.md",
        ROOT / "abi" / "README.md",
        ROOT / "benchmarks" / "README.md",
        *(ROOT / "docs").glob("*.md"),
    ]
    if p.exists()
)
BASES = [ROOT, ROOT / "rewriter", ROOT / "tests", ROOT / "abi" / "include"]
SUFFIXES = r"(?:py|md|mlir|c|h|cc|lark|sh|toml|cfg|ipynb|txt|json)"
# `some/path.ext` or `some/path.py::test_name` in backquotes, or a markdown link target.
QUOTED = re.compile(rf"`([\w./-]+\.{SUFFIXES})(?:::(\w+))?`")
LINKED = re.compile(rf"\]\(([\w./-]+\.{SUFFIXES})(?:#[\w-]+)?\)")
# Names a user makes, not files of the checkout.
MADE_BY_USERS = re.compile(
    r"^(?:model|my_|kernels?\.|out|adapters|m\.|x\.|t\.|lib|exported|host|a\.|b\.|main\.c)"
)


def named_paths(doc: Path) -> list[tuple[str, str | None]]:
    text = doc.read_text(encoding="utf-8")
    found = [(m.group(1), m.group(2)) for m in QUOTED.finditer(text)]
    found += [(m.group(1), None) for m in LINKED.finditer(text)]
    return [(path, test) for path, test in found if "/" in path or test]


def resolve(doc: Path, path: str) -> Path | None:
    for base in [doc.parent, *BASES]:
        candidate = base / path
        if candidate.exists():
            return candidate
    return None


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_path_the_docs_name_exists(doc: Path):
    missing = []
    for path, test in named_paths(doc):
        if MADE_BY_USERS.match(Path(path).name) and not path.startswith(
            ("rewriter/", "tests/", "samples/", "abi/", "benchmarks/", "docs/", "scripts/")
        ):
            continue
        found = resolve(doc, path)
        if found is None:
            missing.append(path)
        elif test and not re.search(rf"^\s*def {test}\(", found.read_text(), re.MULTILINE):
            missing.append(f"{path}::{test}")
    assert not missing, f"{doc.relative_to(ROOT)} names what does not exist: {missing}"
