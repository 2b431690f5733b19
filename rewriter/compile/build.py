"""Compile a rewritten module into a shared object, stage by stage."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from .bridge import BRIDGE_EXPORTS, bridge_sources, externs_of
from .entries import Entry, metadata_source, prepare
from .toolchain import STAGES, ToolchainError, check_tools, link_shared_object, run_stage


def compile_module(
    source: str | Path,
    output: str | Path,
    *,
    link: list[str] | None = None,
    keep_temps: str | Path | None = None,
    ffi_bridge: bool = False,
) -> list[Entry]:
    """Compile the rewritten module ``source`` (text or path) to the shared object ``output``.

    ``link`` names kernel libraries (paths or -l names) the object is linked against.
    With ``keep_temps`` every stage's input and output stay in that folder; otherwise a
    temporary folder is removed afterwards. With ``ffi_bridge`` every extern that carries a
    ``rewriter.xla_ffi`` description is served by an adapter calling an XLA FFI handler,
    registered at load time (``load(..., ffi_handlers=...)``). Raises ToolchainError naming
    a failed stage.
    """
    check_tools()
    text = Path(source).read_text(encoding="utf-8") if isinstance(source, Path) else source
    work = Path(keep_temps) if keep_temps else Path(tempfile.mkdtemp(prefix="rewriter-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        prepared, entries = prepare(text)
        current = work / "0-entries.mlir"
        current.write_text(prepared, encoding="utf-8")
        for index, stage in enumerate(STAGES, start=1):
            following = work / f"{index}-{stage.name}{stage.output_suffix}"
            try:
                run_stage(stage, current, following)
            except ToolchainError as error:
                kept = f"\n(its input is kept in {current})" if keep_temps else ""
                raise ToolchainError(f"{error}{kept}") from None
            current = following
        metadata = work / "metadata.c"
        metadata.write_text(metadata_source(entries), encoding="utf-8")
        inputs: list[Path] = [current, metadata]
        flags: list[str] = []
        exports: tuple[str, ...] = ()
        if ffi_bridge:
            origin = str(source) if isinstance(source, Path) else ""
            sources, flags = bridge_sources(externs_of(text), work, origin)
            inputs += sources
            exports = BRIDGE_EXPORTS
        link_shared_object(inputs, Path(output), list(link or []), flags=flags, exports=exports)
        return entries
    finally:
        if not keep_temps:
            shutil.rmtree(work, ignore_errors=True)
