"""The packages the runners need beyond the rewrite's own, and what to say when one is missing.

``pip install stablehlo-ffi-rewriter`` installs the rewrite alone (lark). The compiled path
needs the extra ``[compile]`` (cffi, numpy, iree-base-compiler), ``rewriter.iree`` the extra
``[iree]`` (the same and iree-base-runtime), ``--ffi-bridge`` and jaxlib's handlers the
extra ``[jax]``. Their entry points import those packages inside ``needs(extra)``, which turns
the bare ``ModuleNotFoundError`` into a ``MissingDependency`` that names the extra.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

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
