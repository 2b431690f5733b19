"""Contract rule 5 (extern symbol names) and fresh, readable SSA names for constants."""

from __future__ import annotations

import re

_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NOT_C = re.compile(r"[^A-Za-z0-9_]")
_NOT_SSA = re.compile(r"[^A-Za-z0-9_$\-]")


def first_free(base: str, taken: set[str]) -> str:
    """``base``, or ``base_1``, ``base_2``, ... whichever is not taken yet; now taken."""
    name, counter = base, 0
    while name in taken:
        counter += 1
        name = f"{base}_{counter}"
    taken.add(name)
    return name


def c_identifier(target: str) -> str:
    """``target`` made into a C identifier: other characters become ``_``."""
    name = _NOT_C.sub("_", target) or "_"
    return "_" + name if name[0].isdigit() else name


class SymbolNamer:
    """Chooses one extern name per (target, signature), deterministically, in call order.

    Every target that is a valid C identifier and names no existing symbol keeps its name
    for its first signature, whatever order the calls come in: those names are reserved
    before any sanitised or suffixed name is handed out. With a ``prefix`` every name
    handed out starts with it, and only the prefixed name must be free.
    """

    def __init__(
        self, existing: set[str], targets: list[str] | tuple[str, ...] = (), prefix: str = ""
    ):
        self.existing = existing
        # Names are handed out as ``prefix + S`` (``ffi.S`` for IREE imports): only the
        # whole symbol can clash with an existing one.
        self.prefix = prefix
        self.reserved = {
            t for t in targets if _C_IDENTIFIER.fullmatch(t) and prefix + t not in existing
        }
        self.taken = set(existing) | {prefix + t for t in self.reserved}
        self.assigned: dict[tuple[str, str], str] = {}

    def name(self, target: str, signature: str) -> tuple[str, str | None]:
        """The symbol for this call, and, the first time, why it differs from the target
        (None when it does not, or was explained already)."""
        key = (target, signature)
        if key in self.assigned:  # explained when it was first handed out
            return self.assigned[key], None
        if target in self.reserved:
            self.reserved.discard(target)  # its first signature takes it
            self.assigned[key] = self.prefix + target
            return self.prefix + target, None
        base = target if _C_IDENTIFIER.fullmatch(target) else c_identifier(target)
        name = first_free(self.prefix + base, self.taken)
        self.assigned[key] = name
        return name, None if name == self.prefix + target else self._why(target, name)

    def fresh(self, base: str) -> str:
        """A new symbol name (for helper functions), clashing with nothing."""
        return first_free(base, self.taken)

    def _why(self, target: str, name: str) -> str:
        if not _C_IDENTIFIER.fullmatch(target):
            sanitised = self.prefix + c_identifier(target)
            if name != sanitised:
                return f"'{target}' is not a valid C identifier, and @{sanitised} is taken"
            return f"'{target}' is not a valid C identifier"
        if self.prefix + target in self.existing:
            return f"a symbol named '{self.prefix + target}' already exists in the module"
        return f"'{target}' is called with several signatures; each gets its own extern"


class ValueNamer:
    """SSA names unique in the whole file, derived from the attribute name."""

    def __init__(self, existing: set[str]):
        self.taken = set(existing)

    def fresh(self, hint: str) -> str:
        base = _NOT_SSA.sub("_", hint.replace(".", "_")) or "attr"
        if base[0].isdigit():
            base = "_" + base
        return "%" + first_free(base, self.taken)
