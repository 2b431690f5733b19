"""``--ffi-bridge``: compile the XLA FFI host and the adapters of every extern into a module.

The adapters (``rewriter.ffi_adapters``) define ``_mlir_ciface_S`` for each extern that
carries a ``rewriter.xla_ffi`` description; ``abi/xla_ffi_bridge.c`` turns their arguments
into XLA FFI call frames. Both need the XLA FFI C API header from ``jax.ffi.include_dir()``.
"""

from __future__ import annotations

from pathlib import Path

from ..abi import bridge_dir
from ..ffi_adapters import Extern, adapters_source, externs_in
from ..ffi_facts import FactsError
from .toolchain import ToolchainError

# What a host calls (xla_ffi_bridge.h); everything else of the bridge stays local.
BRIDGE_EXPORTS = (
    "rw_ffi_register_handler",
    "rw_ffi_handler_version",
    "rw_ffi_required_target",
    "rw_ffi_last_error",
    "rw_ffi_clear_error",
)


def xla_ffi_include_dir() -> str:
    try:
        import jax.ffi
    except ImportError:
        raise ToolchainError(
            "--ffi-bridge needs the XLA FFI C API header from jax: pip install jax jaxlib"
        ) from None
    return jax.ffi.include_dir()


def externs_of(text: str) -> list[Extern]:
    """The externs of a rewritten module with their descriptions (ToolchainError if one is
    malformed)."""
    try:
        return externs_in(text)
    except FactsError as error:
        raise ToolchainError(str(error)) from None


def bridge_sources(
    externs: list[Extern], work: Path, origin: str = ""
) -> tuple[list[Path], list[str]]:
    """Write the adapters of ``externs`` into ``work``; the C sources and compiler flags."""
    adapters = work / "ffi_adapters.c"
    adapters.write_text(adapters_source(externs, origin), encoding="utf-8")
    folder = bridge_dir()
    flags = ["-std=c11", f"-I{folder}", f"-I{xla_ffi_include_dir()}"]
    return [adapters, Path(folder) / "xla_ffi_bridge.c"], flags
