"""``--ffi-bridge``: the XLA FFI host compiled into a module, and its API once loaded.

The adapters (``rewriter.emit.ffi_adapters``) define ``_mlir_ciface_S`` for each extern that
carries a ``rewriter.xla_ffi`` description; ``abi/xla_ffi_bridge.c`` turns their arguments
into XLA FFI call frames. Both need the XLA FFI C API header from ``jax.ffi.include_dir()``.
Once the module is loaded, ``Bridge`` drives that host: handlers are registered with it
(``register_handlers``) and it keeps the error of the last failing handler.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..abi import bridge_dir
from ..emit.ffi_adapters import Extern, adapters_source
from .handlers import handler_address, jaxlib_handlers
from .load_errors import LoadError
from .toolchain import ToolchainError

# What a host calls (xla_ffi_bridge.h); everything else of the bridge stays local.
BRIDGE_EXPORTS = (
    "rw_ffi_register_handler",
    "rw_ffi_handler_version",
    "rw_ffi_required_target",
    "rw_ffi_last_error",
    "rw_ffi_clear_error",
)
# The host API of abi/xla_ffi_bridge.h, as cffi declarations.
BRIDGE_CDEF = """
int rw_ffi_register_handler(const char *target, void *handler);
int rw_ffi_handler_version(const char *target);
const char *rw_ffi_required_target(int64_t index);
const char *rw_ffi_last_error(void);
void rw_ffi_clear_error(void);
"""


def xla_ffi_include_dir() -> str:
    try:
        import jax.ffi
    except ImportError:
        raise ToolchainError(
            "--ffi-bridge needs the XLA FFI C API header from jax: pip install jax jaxlib"
        ) from None
    return jax.ffi.include_dir()


def bridge_sources(
    externs: list[Extern], work: Path, origin: str = ""
) -> tuple[list[Path], list[str]]:
    """Write the adapters of ``externs`` into ``work``; the C sources and compiler flags."""
    adapters = work / "ffi_adapters.c"
    adapters.write_text(adapters_source(externs, origin), encoding="utf-8")
    folder = bridge_dir()
    flags = ["-std=c11", f"-I{folder}", f"-I{xla_ffi_include_dir()}"]
    return [adapters, Path(folder) / "xla_ffi_bridge.c"], flags


class Bridge:
    """The host API of one loaded library that holds the bridge (abi/xla_ffi_bridge.h),
    declared with ``BRIDGE_CDEF`` in ``ffi``."""

    def __init__(self, ffi, library):
        self.ffi = ffi
        self.library = library

    def take_error(self) -> str | None:
        """This thread's first error since the last call, now cleared; None if none."""
        message = self.library.rw_ffi_last_error()
        if message == self.ffi.NULL:
            return None
        text = self.ffi.string(message).decode("utf-8", "replace")
        self.library.rw_ffi_clear_error()
        return text

    def register(self, target: str, handler: object) -> None:
        """Register ``handler`` (see ``handler_address``) for ``target``; a ValueError says
        why the bridge refused it (its metadata probe)."""
        address = self.ffi.cast("void *", handler_address(handler))
        if self.library.rw_ffi_register_handler(target.encode(), address) != 0:
            raise ValueError(
                f"cannot register the XLA FFI handler for '{target}': {self.take_error()}"
            )

    def targets_without_handler(self) -> list[str]:
        """The targets the adapters call that have no handler yet."""
        missing = []
        index = 0
        while (target := self.library.rw_ffi_required_target(index)) != self.ffi.NULL:
            if self.library.rw_ffi_handler_version(target) < 0:
                missing.append(self.ffi.string(target).decode("utf-8", "replace"))
            index += 1
        return missing


def register_handlers(
    ffi, library, path: str | Path, handlers: Mapping[str, object] | str | None, keep_alive
) -> Bridge | None:
    """Register ``handlers`` with the module's bridge; None if the module has none.

    Raises LoadError for a module without a bridge given handlers, a handler that fails
    XLA's metadata probe, and every target the module calls that has no handler.
    """
    try:
        library.rw_ffi_required_target  # noqa: B018 (present only with --ffi-bridge)
    except AttributeError:
        if handlers:
            raise LoadError(
                f"{path} was not compiled with --ffi-bridge; it calls no XLA FFI handlers"
            ) from None
        return None
    if isinstance(handlers, str) and handlers != "jaxlib":
        raise ValueError(
            f"ffi_handlers is a mapping of targets to handlers or 'jaxlib', not {handlers!r}"
        )
    given = jaxlib_handlers() if isinstance(handlers, str) else dict(handlers or {})
    keep_alive.extend(given.values())  # a capsule's library must stay loaded
    bridge = Bridge(ffi, library)
    for target, handler in given.items():
        try:
            bridge.register(target, handler)
        except ValueError as error:
            raise LoadError(str(error)) from None
    missing = bridge.targets_without_handler()
    if missing:
        raise LoadError(
            f"{path} calls the XLA FFI target{'s' if len(missing) > 1 else ''} "
            f"{', '.join(missing)} but no handler was given for "
            f"{'them' if len(missing) > 1 else 'it'}: load(..., ffi_handlers={{target: "
            "capsule}}), or ffi_handlers='jaxlib' for jaxlib's LAPACK kernels"
        )
    return bridge
