"""The two ways an extern can be called: MLIR's C interface, or an IREE runtime import.

``--abi c`` (the default) declares ``func.func private @S(...) attributes
{llvm.emit_c_interface}``: compiled code calls ``_mlir_ciface_S`` in a C library, with the
parameters in contract order (operands, then FFI attributes in dictionary order).

``--abi iree`` declares ``func.func private @ffi.S(...)``. IREE cannot call a C symbol from
host code: it turns such a bodiless function into an import of the VM module named before
the dot, which the runtime must provide (IREE rejects an import without a module prefix).
Everything else is the C contract, except the parameter order (``import_order``), and two
attributes on the declaration record that order, so the runtime side
(``rewriter.iree``) can hand an implementation its arguments in contract order again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..syntax.text_enum import TextEnum
from .ffi_facts import FACTS_ATTRIBUTE
from .mlir_text import function_attributes, i64_array, string_list

# The unit attribute of an IREE import whose calls are kept for their effect.
SIDE_EFFECT_ATTRIBUTE = "rewriter.has_side_effect"

DEFAULT_IREE_MODULE = "ffi"
_MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_EIGHT_BYTE_SCALARS = ("i64", "f64")


def import_order(types: Sequence[str]) -> tuple[int, ...]:
    """Contract indices of an IREE import's parameters: tensors, then 8-byte scalars, then
    the rest (4-byte scalars and the narrower integers IREE widens to 4 bytes).

    Why: the VM packs an import's arguments aligning each 8-byte value (i64, f64, a buffer
    view reference) to 8 bytes, but ``iree.runtime.PyModuleInterface`` (3.13 wheel) unpacks
    them one after the other without that padding. An 8-byte value after an odd number of
    4-byte ones is read 4 bytes early, so a Python module receives garbage. With every
    8-byte value first, no padding is ever needed. The sort is stable: within a group the
    contract order holds.
    """

    def group(index: int) -> int:
        type_ = types[index]
        if type_.startswith("tensor<"):
            return 0
        return 1 if type_ in _EIGHT_BYTE_SCALARS else 2

    return tuple(sorted(range(len(types)), key=group))


class AbiKind(TextEnum):
    """``--abi``: the two calling conventions."""

    C = "c"  # MLIR's C interface, _mlir_ciface_S
    IREE = "iree"  # an import of an IREE runtime module, @module.S


@dataclass(frozen=True)
class Abi:
    """How externs are named, ordered and declared."""

    kind: str = AbiKind.C  # a word of AbiKind; kept as the AbiKind member
    iree_module: str = DEFAULT_IREE_MODULE  # with "iree": the VM module serving the imports

    def __post_init__(self) -> None:
        if self.kind not in ("c", "iree"):
            raise ValueError(f"abi must be 'c' or 'iree', not {self.kind!r}")
        if not _MODULE_NAME.fullmatch(self.iree_module):
            raise ValueError(
                f"IREE module name {self.iree_module!r} is not an identifier "
                "([A-Za-z_][A-Za-z0-9_]*)"
            )
        object.__setattr__(self, "kind", AbiKind(self.kind))

    @property
    def prefix(self) -> str:
        """What every extern symbol starts with: the import module and a dot, for IREE."""
        return f"{self.iree_module}." if self.kind == AbiKind.IREE else ""

    def order(self, types: Sequence[str]) -> tuple[int, ...]:
        """For each extern parameter, its index among the contract's parameters."""
        if self.kind == AbiKind.IREE:
            return import_order(types)
        return tuple(range(len(types)))

    def describe(self, symbol: str) -> str:
        """What the outside world must provide for the extern ``@symbol`` (for warnings)."""
        if self.kind == AbiKind.IREE:
            return f"function {symbol[len(self.prefix) :]} of IREE module {self.iree_module}"
        return f"C symbol _mlir_ciface_{symbol}"

    def declaration_attributes(
        self,
        order: Sequence[int],
        attribute_types: Sequence[str],
        ffi_facts: str | None = None,
        side_effect: bool = False,
    ) -> str:
        """The ``attributes {...}`` of an extern declaration, in MLIR's (sorted) order.

        For IREE, ``rewriter.attribute_types`` lists each FFI attribute's own type in
        contract order (``ui8``, ``bf16``, ``string``, ...: what the signless operand types
        no longer say), and ``rewriter.order`` gives, for each parameter of the import, its
        index in the contract. ``ffi_facts`` is the value of the ``rewriter.xla_ffi``
        entry (rewriter/plan/ffi_facts.py), for both ABIs. ``side_effect`` marks an IREE
        import with ``rewriter.has_side_effect`` when a call of it has results and
        ``has_side_effect = true``: rewriter.iree keeps it a VM import, which IREE runs
        even when nobody reads its results (a dispatch would be dropped). A C extern needs
        no mark: a call of an external function is never dropped.
        """
        facts: list[tuple[str, str | None]] = []
        if ffi_facts:
            facts.append((FACTS_ATTRIBUTE, ffi_facts))
        if self.kind == AbiKind.C:
            return function_attributes([("llvm.emit_c_interface", None), *facts])
        return function_attributes(
            [
                ("rewriter.attribute_types", string_list(attribute_types)),
                *([(SIDE_EFFECT_ATTRIBUTE, None)] if side_effect else []),
                ("rewriter.order", i64_array(order)),
                *facts,
            ]
        )


C_ABI = Abi()
