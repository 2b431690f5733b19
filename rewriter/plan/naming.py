"""Contract rule 5 (extern symbol names) and fresh, readable SSA names for constants."""

from __future__ import annotations

import re
from collections.abc import Iterable

_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NOT_C = re.compile(r"[^A-Za-z0-9_]")
_NOT_SSA = re.compile(r"[^A-Za-z0-9_$\-]")


class NamePool:
    """Names handed out as ``base``, ``base_1``, ``base_2``, ...: the first not taken yet.

    Taken names only ever grow, so every candidate a search has passed stays taken, and
    the next search for the same base starts where the last one stopped: handing out n
    names costs O(n) in all (plus the names already in the file), not O(n^2).

    The names handed out are not kept (a file's hundreds of thousands of constants would
    hold more memory than its text): they are exactly the candidates the searches passed,
    which each base's next suffix tells (``_passed``). Only the names taken from outside
    (``taken``, read and never copied, and ``add``) are kept, and their stems (below).

    Most searches pass nothing: a base's next candidate ``base_k`` is free unless a taken
    name or another base is ``base_k`` for some k. Every such name cuts at its last ``_``
    to ``base``, so the *stems* of the names taken from outside, added or searched for
    (each cut at its last ``_``) hold every base whose candidates may be taken; a base
    that is no stem has its next candidate handed out unchecked, as the search would.
    """

    def __init__(self, taken: set[str] | frozenset[str] | Iterable[str] = ()):
        self._outside = taken if isinstance(taken, (set, frozenset)) else set(taken)
        self._added: set[str] = set()
        self._next_suffix: dict[str, int] = {}
        self._stems: set[str] | None = None  # made at the first claim, from ``taken``

    def claim(self, base: str) -> str:
        """The first of ``base``, ``base_1``, ... not taken yet; now taken."""
        return self.claim_all([base])[0]

    def claim_all(self, bases: list[str], prefix: str = "") -> list[str]:
        """``prefix + claim(base)`` for each base in turn: the names of one statement."""
        outside, added, next_suffix, names = self._outside, self._added, self._next_suffix, []
        stems = self._stems
        if stems is None:
            stems = self._stems = {_stem(name) for name in (*outside, *added)}
        for base in bases:
            counter = next_suffix.get(base, 0)
            if counter and base not in stems:  # no taken name or base is base_k
                next_suffix[base] = counter + 1
                names.append(f"{prefix}{base}_{counter}")
                continue
            if counter == 0:
                stems.add(_stem(base))  # a base now, which the searches check for
                name = base
                if name in outside or name in added or self._passed(name):
                    counter, name = 1, f"{base}_1"
            else:
                name = f"{base}_{counter}"
            # base_k (k > 0) is passed only as counter 0 of the base of that name (_passed)
            while name in outside or name in added or name in next_suffix:
                counter += 1
                name = f"{base}_{counter}"
            next_suffix[base] = counter + 1
            names.append(prefix + name)
        return names

    def add(self, name: str) -> None:
        """Mark ``name`` taken without handing it out."""
        self._added.add(name)
        if self._stems is not None:
            self._stems.add(_stem(name))

    def _passed(self, name: str) -> bool:
        """Whether a search has passed ``name``.

        A search for base b passes b (counter 0), b_1, b_2, ... up to its next suffix, so
        ``name`` was passed as counter 0 of base ``name``, or, when its last ``_`` is
        followed by a number written as the searches write them (no leading zero), as
        counter k of the base before it; no other base writes it. (For ``base_k`` that
        base is the caller's own, whose search has not reached k: only the first holds.)
        """
        if name in self._next_suffix:
            return True
        base, underscore, suffix = name.rpartition("_")
        return (
            bool(underscore)
            and suffix.isascii()
            and suffix.isdigit()
            and suffix[0] != "0"
            and int(suffix) < self._next_suffix.get(base, 0)
        )


def _stem(name: str) -> str:
    """``name`` cut at its last ``_``: the base whose candidates it may be."""
    return name.rpartition("_")[0]


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
        self.reserved = {  # each target once: ``targets`` has one a call
            t
            for t in dict.fromkeys(targets)
            if _C_IDENTIFIER.fullmatch(t) and prefix + t not in existing
        }
        self.pool = NamePool(existing)
        for target in self.reserved:
            self.pool.add(prefix + target)
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
        name = self.pool.claim(self.prefix + base)
        self.assigned[key] = name
        return name, None if name == self.prefix + target else self._why(target, name)

    def fresh(self, base: str) -> str:
        """A new symbol name (for helper functions), clashing with nothing."""
        return self.pool.claim(base)

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
    """SSA names unique in the whole file, derived from the attribute name. None starts
    with a digit, so ``existing`` need only hold the file's names that do not
    (``Scan.values``)."""

    def __init__(self, existing: set[str]):
        self.pool = NamePool(existing)

    def fresh(self, hint: str) -> str:
        return "%" + self.pool.claim(ssa_base(hint))

    def fresh_from(self, bases: list[str]) -> list[str]:
        """``fresh`` for hints whose ``ssa_base`` is ``bases``: one call per statement, whose
        bases its shape worked out once."""
        return self.pool.claim_all(bases, "%")


def ssa_base(hint: str) -> str:
    """The name an SSA value named after ``hint`` (an attribute's path) is given, but for
    a suffix that makes it unique."""
    base = _NOT_SSA.sub("_", hint.replace(".", "_")) or "attr"
    return "_" + base if base[0].isdigit() else base
