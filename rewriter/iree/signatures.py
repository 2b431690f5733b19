"""What the runtime needs to know about each import of a module rewritten with ``--abi iree``.

The rewrite declares each extern as ``func.func private @ffi.S(...) attributes
{rewriter.attribute_types = [...], rewriter.order = array<i64: ...>}``
(rewriter/plan/calling_conventions.py).
Those attributes are read here from the module text, with IREE's own MLIR parser. IREE
drops attributes of imports when it compiles, so ``build.compile_module`` stores the same
signatures as JSON in a module attribute of the ``.vmfb``, where ``read_vmfb`` finds them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import TypeVar

from ..plan.calling_conventions import SIDE_EFFECT_ATTRIBUTE
from ..syntax.element_types import BY_MLIR

T = TypeVar("T")

METADATA_KEY = "rewriter.iree_imports"  # the .vmfb module attribute holding the JSON
SCHEMA = 1


class SignatureError(Exception):
    """A module or .vmfb whose imports cannot be served (message says why)."""


@dataclass(frozen=True)
class ImportSignature:
    """One extern ``@MODULE.NAME`` of the rewrite, as the runtime sees it."""

    module: str  # the VM module that must provide it ("ffi")
    name: str  # the function inside that module
    parameters: tuple[str, ...]  # MLIR types, in import order
    results: tuple[str, ...]  # MLIR types
    order: tuple[int, ...]  # for each parameter, its index in the contract order
    attribute_types: tuple[str, ...]  # each FFI attribute's own type, in contract order
    # The rewriter.xla_ffi dictionary (rewriter/plan/ffi_facts.py) as text, "" when the extern
    # has none: what serving the import with an XLA FFI handler needs.
    ffi_facts: str = ""
    # Compiled into a dispatch that calls its handler from the executable (dispatches.py):
    # no VM import, served only by an XLA FFI handler through the executable plugin.
    dispatch: bool = False
    # Kept for its effect (``has_side_effect = true`` with results): IREE must run it even
    # when nobody reads its results, so it stays a VM import (dispatches.why_not).
    side_effect: bool = False

    @property
    def operand_count(self) -> int:
        """How many of the contract's parameters are operands (the rest are attributes)."""
        return len(self.parameters) - len(self.attribute_types)

    @property
    def cconv(self) -> str:
        """IREE's calling convention string for the import, e.g. ``0rf_r``.

        Tensors travel as buffer view references (``r``); scalars as i32 (``i``, which the
        VM also uses for i1, i8 and i16, sign-extended), i64 (``I``), f32 (``f``) or f64
        (``F``). ``_v`` marks no results.
        """
        arguments = "".join(_cconv_char(t) for t in self.parameters) or "v"
        results = "".join(_cconv_char(t) for t in self.results) or "v"
        return f"0{arguments}_{results}"

    def in_contract_order(self, values: Sequence[T]) -> list[T]:
        """``values``, one per import parameter, in contract order (operands, attributes)."""
        ordered: list = [None] * len(values)
        for position, index in enumerate(self.order):
            ordered[index] = values[position]
        return ordered

    def contract_types(self) -> list[str]:
        """The parameter types in contract order."""
        return self.in_contract_order(self.parameters)


def _cconv_char(type_: str) -> str:
    if type_.startswith("tensor<"):
        return "r"
    row = BY_MLIR.get(type_)
    if row is None or not row.iree_cconv:
        raise SignatureError(f"an IREE import cannot take or return {type_}")
    return row.iree_cconv


def _check(signature: ImportSignature) -> ImportSignature:
    if sorted(signature.order) != list(range(len(signature.parameters))):
        raise SignatureError(
            f"import {signature.module}.{signature.name}: rewriter.order "
            f"{list(signature.order)} is not a permutation of its "
            f"{len(signature.parameters)} parameters"
        )
    if len(signature.attribute_types) > len(signature.parameters):
        raise SignatureError(
            f"import {signature.module}.{signature.name}: more attribute types than parameters"
        )
    for type_ in (*signature.parameters, *signature.results):
        _cconv_char(type_)  # raises SignatureError for a type IREE cannot pass
    return signature


def from_module_text(text: str) -> list[ImportSignature]:
    """The signatures of every extern the rewrite declared in ``text`` (MLIR)."""
    from iree.compiler import ir

    with ir.Context() as context:
        context.allow_unregistered_dialects = True
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as error:
            raise SignatureError(f"IREE cannot parse the module: {error}") from None
        return signatures_of(module)


def signatures_of(module) -> list[ImportSignature]:
    """The signatures of the externs of a parsed module (``iree.compiler.ir.Module``)."""
    from iree.compiler import ir

    return [_from_function(op, ir) for op in _functions(module.operation)]


def _functions(operation) -> Iterator:
    for region in operation.regions:
        for block in region.blocks:
            for op in block.operations:
                if op.operation.name == "func.func":
                    if "rewriter.order" in op.attributes:
                        yield op
                elif op.operation.name == "builtin.module":
                    yield from _functions(op.operation)


def _from_function(op, ir) -> ImportSignature:
    symbol = ir.StringAttr(op.attributes["sym_name"]).value
    module, dot, name = symbol.partition(".")
    if not dot:
        raise SignatureError(f"extern @{symbol} has no module prefix (rewrite with --abi iree)")
    function_type = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
    order = ir.DenseI64ArrayAttr(op.attributes["rewriter.order"])
    attribute_types = ir.ArrayAttr(op.attributes["rewriter.attribute_types"])
    return _check(
        ImportSignature(
            module,
            name,
            tuple(str(t) for t in function_type.inputs),
            tuple(str(t) for t in function_type.results),
            tuple(order[i] for i in range(len(order))),
            tuple(ir.StringAttr(a).value for a in attribute_types),
            str(op.attributes["rewriter.xla_ffi"]) if "rewriter.xla_ffi" in op.attributes else "",
            side_effect=SIDE_EFFECT_ATTRIBUTE in op.attributes,
        )
    )


def to_json(signatures: Sequence[ImportSignature]) -> str:
    """One line of JSON (it becomes a string attribute of the compiled module)."""
    return json.dumps(
        {"schema": SCHEMA, "imports": [asdict(s) for s in signatures]}, separators=(",", ":")
    )


def from_json(text: str) -> list[ImportSignature]:
    try:
        document = json.loads(text)
        if document.get("schema") != SCHEMA:
            raise SignatureError(
                f"import metadata has schema {document.get('schema')!r}; this version reads "
                f"schema {SCHEMA}"
            )
        return [
            _check(
                ImportSignature(
                    str(entry["module"]),
                    str(entry["name"]),
                    tuple(map(str, entry["parameters"])),
                    tuple(map(str, entry["results"])),
                    tuple(map(int, entry["order"])),
                    tuple(map(str, entry["attribute_types"])),
                    str(entry.get("ffi_facts", "")),
                    bool(entry.get("dispatch", False)),
                    bool(entry.get("side_effect", False)),
                )
            )
            for entry in document["imports"]
        ]
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise SignatureError(f"unreadable import metadata: {error}") from None
