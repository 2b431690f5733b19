"""``--ffi-bridge``: the XLA FFI host compiled into a module, and its API once loaded.

The adapters (``rewriter.emit.ffi_adapters``) define ``_mlir_ciface_S`` for each extern that
carries a ``rewriter.xla_ffi`` description; ``abi/xla_ffi_bridge.c`` turns their arguments
into XLA FFI call frames. Both need the XLA FFI C API header that ``jax.ffi.include_dir()``
names, found without importing jax (``xla_ffi_include_dir``).
Once the module is loaded, ``Bridge`` drives that host: handlers are registered with it
(``register_handlers``) and it keeps the error of the last failing handler.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ..abi import bridge_dir
from .extras import missing
from .handlers import (
    handler_address,
    jaxlib_handlers,
    missing_handlers_hint,
    named_mapping,
    unused_keys_note,
)
from .load_errors import LoadError
from .toolchain import ToolchainError

if TYPE_CHECKING:
    from ..emit.ffi_adapters import Extern

# The XLA FFI C API header, under jaxlib's include folder.
C_API_HEADER = "xla/ffi/api/c_api.h"

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
    """The folder of the XLA FFI C API header (``xla/ffi/api/c_api.h``) that jaxlib ships:
    what ``jax.ffi.include_dir()`` returns, found without importing jax or jaxlib (an
    import of jax is most of a small module's compile time)."""
    spec = importlib.util.find_spec("jaxlib")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        include = Path(folder) / "include"
        if (include / C_API_HEADER).is_file():
            return str(include)
    if spec is None:
        raise ToolchainError(
            f"--ffi-bridge needs the XLA FFI C API header from jax: {missing('jax', 'jax')}"
        )
    raise ToolchainError(
        f"--ffi-bridge needs the XLA FFI C API header, and jaxlib ({', '.join(folders)}) "
        f"has no include/{C_API_HEADER}: reinstall it (pip install --force-reinstall jaxlib)"
    )


def bridge_sources(
    externs: list[Extern], work: Path, origin: str = ""
) -> tuple[list[Path], list[str]]:
    """Write the adapters of ``externs`` into ``work``; the C sources and compiler flags."""
    from ..emit.ffi_adapters import adapters_source

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

    def register(self, target: str, address: int) -> None:
        """Register the handler at ``address`` (``handler_address``) for ``target``; a
        ValueError says why the bridge refused it (its metadata probe)."""
        pointer = self.ffi.cast("void *", address)
        if self.library.rw_ffi_register_handler(target.encode(), pointer) != 0:
            raise ValueError(
                f"cannot register the XLA FFI handler for '{target}': {self.take_error()}"
            )

    def required_targets(self) -> list[str]:
        """The targets the adapters call, in order, each once."""
        found: dict[str, None] = {}
        index = 0
        while (target := self.library.rw_ffi_required_target(index)) != self.ffi.NULL:
            found[self.ffi.string(target).decode("utf-8", "replace")] = None
            index += 1
        return list(found)


def register_handlers(
    ffi, library, path: str | Path, handlers: Mapping[str, object] | str | None, keep_alive
) -> Bridge | None:
    """Register ``handlers`` with the module's bridge; None if the module has none.

    Only the targets the module calls are registered: a mapping may hold more (jaxlib's,
    or a library's whole table), and those keys are ignored, values included. Raises
    TypeError or ValueError for ``handlers`` that are no mapping of target names, and
    LoadError for a module without a bridge given handlers, a handler that cannot be one
    (``handler_address``: every handler is checked before the first is registered), a
    handler that fails XLA's metadata probe, and the targets the module calls that have
    no handler.
    """
    given = _given_handlers(handlers)
    try:
        library.rw_ffi_required_target  # noqa: B018 (present only with --ffi-bridge)
    except AttributeError:
        if given:
            raise LoadError(
                f"{path} was compiled without --ffi-bridge, so it calls no XLA FFI handlers: "
                "compile it with python -m rewriter.compile ... --ffi-bridge "
                "(compile_module(..., ffi_bridge=True)) to serve its externs by their "
                "handlers, or load it without ffi_handlers"
            ) from None
        return None
    bridge = Bridge(ffi, library)
    required = bridge.required_targets()
    addresses = {}
    for target in required:
        if target in given:
            try:
                addresses[target] = handler_address(given[target])
            except (TypeError, ValueError) as error:
                raise LoadError(f"{path}: ffi_handlers[{target!r}]: {error}") from None
    keep_alive.extend(given[t] for t in addresses)  # a capsule's library must stay loaded
    for target, address in addresses.items():
        try:
            bridge.register(target, address)
        except ValueError as error:
            raise LoadError(str(error)) from None
    missing = [t for t in required if t not in addresses]
    if missing:
        jaxlib_given = handlers == "jaxlib"
        hint = missing_handlers_hint(missing, jaxlib_given, "ffi_handlers='jaxlib'")
        them = "them" if len(missing) > 1 else "it"
        fix = "{**jaxlib_handlers(), target: capsule}" if jaxlib_given else "{target: capsule}"
        unused = "" if jaxlib_given else unused_keys_note(set(given) - set(required))
        raise LoadError(
            f"{path} calls the XLA FFI target{'s' if len(missing) > 1 else ''} "
            f"{', '.join(missing)} but no handler was given for {them}{hint}{unused}: "
            f"load(..., ffi_handlers={fix})"
        )
    return bridge


def _given_handlers(handlers: Mapping[str, object] | str | None) -> Mapping[str, object]:
    """``ffi_handlers`` as a mapping of targets to handlers (``"jaxlib"``: jaxlib's)."""
    if handlers is None:
        return {}
    if isinstance(handlers, str):
        if handlers != "jaxlib":
            raise ValueError(
                f"ffi_handlers is a mapping of targets to handlers or 'jaxlib', not {handlers!r}"
            )
        return jaxlib_handlers()
    return named_mapping(handlers, "ffi_handlers", "targets")
