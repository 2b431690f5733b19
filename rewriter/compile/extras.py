"""The packages the runners need beyond the rewrite's own, and what to say when one is missing.

``pip install stablehlo-ffi-rewriter`` installs the rewrite alone (lark). The compiled path
needs the extra ``[compile]`` (cffi, numpy, iree-base-compiler), ``rewriter.iree`` the extra
``[iree]`` (the same and iree-base-runtime), ``--ffi-bridge`` and jaxlib's handlers the
extra ``[jax]``. Their entry points import those packages inside ``needs(extra)``, which turns
the bare ``ModuleNotFoundError`` into a ``MissingDependency`` that names the extra.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any

DISTRIBUTION = "stablehlo-ffi-rewriter"

# The optional packages by top-level module, and the extra of those that have their own.
_OPTIONAL = {"cffi", "numpy", "ml_dtypes", "iree", "jax", "jaxlib"}
_OWN_EXTRA = {"jax": "jax", "jaxlib": "jax", "iree.runtime": "iree"}


class MissingDependency(ModuleNotFoundError):
    """An optional package is not installed; the message says which extra installs it."""


def install_hint(extra: str) -> str:
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def missing(module: str, extra: str) -> str:
    """The message for ``module`` missing where ``extra`` is needed."""
    return f"{module} is not installed: {install_hint(_OWN_EXTRA.get(module, extra))}"


@contextlib.contextmanager
def needs(extra: str, iree: str = "iree.compiler") -> Iterator[None]:
    """Inside: an optional package that is not installed raises ``MissingDependency``,
    naming the extra to install (``extra``, or the package's own). Without any IREE
    package, the one named is ``iree`` (``iree.compiler`` or ``iree.runtime``)."""
    try:
        yield
    except MissingDependency:
        raise
    except ModuleNotFoundError as error:
        name = error.name or ""
        if name.split(".")[0] not in _OPTIONAL:
            raise
        if name == "iree":  # the namespace itself: name the package that was imported
            name = iree
        raise MissingDependency(missing(name, extra), name=error.name) from None


def lazy_names(
    package: str, homes: Mapping[str, str], extra: str
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` that import each public name from its
    module (``homes``) on first use, inside ``needs(extra)``: importing the package costs
    nothing, and a name whose module needs a missing package says which extra to install."""
    module = sys.modules[package]

    def attribute(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        with needs(extra):
            value = getattr(importlib.import_module(homes[name], package), name)
        setattr(module, name, value)
        return value

    def names() -> list[str]:
        return sorted(set(vars(module)) | set(homes))

    return attribute, names
