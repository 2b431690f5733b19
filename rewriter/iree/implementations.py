"""Which implementation serves each import: one ``{target: handler}`` mapping for both runners.

``rewriter.compile.load(ffi_handlers=...)`` takes a handler per XLA FFI target. The
rewrite makes one import per signature of a target (``jnp.linalg.cholesky`` on a 3x3 and a
4x4 matrix calls ``lapack_spotrf_ffi`` twice: imports ``lapack_spotrf_ffi`` and
``lapack_spotrf_ffi_1``), so ``rewriter.iree.load(imports=...)`` looks an import up by its
target, read from its ``rewriter.xla_ffi`` description, as well as by its own name:

- by its name, when that name is not the target of another import (a key means a target
  wherever it is one);
- otherwise by its target.

A name is more specific than a target, so ``{"T": h, "T_1": g}`` still serves ``T_1`` by
``g``. Keys that serve no import are ignored, as ``ffi_handlers`` ignores the targets a
module does not call: a mapping may hold a library's whole table (``jaxlib_handlers()``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from ..compile.handlers import missing_handlers_hint, named_mapping, unused_keys_note
from ..compile.load_errors import LoadError
from ..plan.ffi_facts import FactsError, parse_facts
from .signatures import ImportSignature


def target_of(signature: ImportSignature) -> str | None:
    """The XLA FFI target an import calls; None for one without a (readable) description."""
    if not signature.ffi_facts:
        return None
    try:
        return parse_facts(signature.ffi_facts).target
    except FactsError:
        return None


def chosen_key(
    signature: ImportSignature, keys: Collection[str], all_targets: Collection[str]
) -> str | None:
    """The key of ``keys`` that serves ``signature`` (module docstring), None if none does;
    ``all_targets`` holds the targets of every import of the module."""
    name, target = signature.name, target_of(signature)
    if name in keys and (name == target or name not in all_targets):
        return name
    if target is not None and target in keys:
        return target
    return None


def implementations(
    path: Path, signatures: Sequence[ImportSignature], imports: Mapping[str, object]
) -> dict[str, object]:
    """The implementation of each import, by import name (module docstring); LoadError
    naming every import that has none."""
    named_mapping(imports, "imports", "targets or import names")
    targets = {s.name: target_of(s) for s in signatures}
    all_targets = {t for t in targets.values() if t is not None}
    chosen: dict[str, object] = {}
    used: set[str] = set()
    missing = []
    for signature in signatures:
        key = chosen_key(signature, imports, all_targets)
        if key is None:
            missing.append(signature)
            continue
        chosen[signature.name] = imports[key]
        used.add(key)
    if missing:
        listed = ", ".join(
            f"{s.module}.{s.name}" + (f" (target {targets[s.name]})" if targets[s.name] else "")
            for s in missing
        )
        missing_targets = list(dict.fromkeys(t for s in missing if (t := targets[s.name])))
        hint = missing_handlers_hint(
            missing_targets, False, "imports=rewriter.compile.jaxlib_handlers()"
        )
        unused = unused_keys_note(set(imports) - used)
        raise LoadError(
            f"{path}: no implementation for {listed}{hint}{unused}: "
            "load(..., imports={target or import name: implementation})"
        )
    return chosen
