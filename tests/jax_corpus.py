"""The real exported modules that ship inside the jax wheel (its back-compat test data).

Each data module holds dictionaries with an ``mlir_module_text`` entry, possibly nested in
lists or dictionaries; we collect every one, named after its module and position.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator

PACKAGE = "jax._src.internal_test_util.export_back_compat_test_data"


def _texts(value: object, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        text = value.get("mlir_module_text")
        if isinstance(text, str):
            yield path, text
            return
        for key, item in value.items():
            yield from _texts(item, f"{path}[{key!r}]")
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _texts(item, f"{path}[{index}]")


def corpus() -> list[tuple[str, str]]:
    """(name, mlir_module_text) for every exported module in the installed jax wheel."""
    package = importlib.import_module(PACKAGE)
    found: list[tuple[str, str]] = []
    for info in pkgutil.walk_packages(package.__path__, prefix=PACKAGE + "."):
        if info.ispkg:
            continue
        module = importlib.import_module(info.name)
        short = info.name[len(PACKAGE) + 1 :]
        for attr, value in sorted(vars(module).items()):
            if attr.startswith("_"):
                continue
            found.extend(_texts(value, f"{short}.{attr}"))
    return found
