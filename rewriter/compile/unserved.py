"""Externs that nothing will serve: compiled without ``--ffi-bridge``, a module's externs
need ``_mlir_ciface_`` functions from a ``--link`` library or from kernels given to
``load``. One that carries an XLA FFI description (``rewriter.xla_ffi``) was most likely
meant for its FFI handler, and ``load(..., ffi_handlers=...)`` cannot serve it then: the
command line says so at compile time."""

from __future__ import annotations

import shutil
from collections.abc import Sequence

from ..syntax.diagnostics import RewriteError
from .link_items import defined_symbols, library_file
from .toolchain import LLVM_VERSION, ToolchainError, find_tool


def unserved_externs(text: str, link: Sequence[str], filename: str) -> list[str]:
    """The described externs of ``text`` (a rewritten module) that no library of ``link``
    defines, in declaration order. None are reported when the descriptions cannot be read
    (only ``--ffi-bridge`` reads them) or the symbols of a library cannot be listed."""
    if "rewriter.xla_ffi" not in text:  # no description (the reader is not even loaded)
        return []
    from ..emit.ffi_adapters import externs_in

    try:
        externs = externs_in(text, filename)
    except RewriteError:
        return []
    if not externs:
        return []
    defined: set[str] = set()
    if link:
        nm = shutil.which("nm") or shutil.which("llvm-nm", path=f"/usr/lib/llvm-{LLVM_VERSION}/bin")
        try:
            clang = find_tool(f"clang-{LLVM_VERSION}")
        except ToolchainError:
            return []
        if nm is None:
            return []
        files = [found for item in link if (found := library_file(item, clang)) is not None]
        defined = defined_symbols(files, nm)
    return [e.symbol for e in externs if f"_mlir_ciface_{e.symbol}" not in defined]
