"""``--emit-header``: the exact C prototypes of every extern of a rewrite.

From an original export the header is exact: parameter names come from the FFI attribute
names and unsigned attributes keep their C types. From an already rewritten module it is
rebuilt from the extern declarations and their ``rewriter.xla_ffi`` descriptions, which
keep the target, names and signedness: exact as well. A declaration without one gives
``argN`` names, and unsigned attributes read as signed C types of the same width (the same
ABI), f16/bf16 attributes, passed as i16 bits, as ``int16_t``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from ..plan.attribute_kinds import CParameter
from ..plan.attribute_operands import AttributeOperand
from ..plan.c_names import safe_c_name, unique_c_name
from ..plan.calling_conventions import DEFAULT_IREE_MODULE, Abi
from ..plan.ffi_facts import AttributeKind, leaf_paths, mlir_element
from ..plan.mlir_text import is_token, tensor_type
from ..plan.status import Status
from ..syntax.diagnostics import Diagnostic, RewriteError
from ..syntax.element_types import BY_DESCRIPTOR, BY_MLIR, ELEMENT_TYPES, parse_tensor
from ..syntax.source import Source
from ..syntax.typetext import closing_bracket, split_types
from .ffi_adapters import declarations_in, externs_in, scalar_c_type

if TYPE_CHECKING:
    from ..plan.planner import CallReport

# memref.h declares descriptors of every real element type, ranks 0 to 4.
_DESCRIBED = {row.descriptor for row in ELEMENT_TYPES if not row.is_complex}
# The header's own parameter names: an attribute named so is renamed (``result_``).
_HEADER_NAMES = frozenset({"result", "results"})


class NoCType(ValueError):
    """A type the calling contract has no C type for (``index``, ``i128``, ``!llvm.ptr``,
    an unranked tensor): it has no place in a header."""


class Rewrite(Protocol):
    """What a header needs of a rewrite (``rewriter.api.Result`` is one): its reports and
    the input text, whose own extern declarations are read too."""

    @property
    def calls(self) -> Sequence[CallReport]: ...

    @property
    def original(self) -> str: ...


@dataclass
class Parameter:
    name: str
    c_type: str


@dataclass
class Prototype:
    symbol: str
    target: str
    where: str  # "file:line:col" of the (first) call
    parameters: list[Parameter]
    result_types: list[str]  # C descriptor types of the results
    note: str = ""
    layout_notes: list[str] = field(default_factory=list)


def descriptor_type(mlir_type: str, element: str | None = None) -> str:
    """``tensor<10x10xf32>`` -> ``rw_memref_f32_2d``; ``element``, when given, is the
    element type with the signedness a signless operand type has lost (``ui8``).

    The name is made from the table of element types only, never from the input's text:
    a type the table has no row for raises ``NoCType``."""
    tensor = parse_tensor(mlir_type.strip())
    row = BY_MLIR.get(element or tensor.element) if tensor is not None else None
    if tensor is None or row is None:
        raise NoCType(
            f"{mlir_type.strip()} is no ranked tensor of an element type of the calling "
            "contract (abi/README.md)"
        )
    return f"rw_memref_{row.descriptor}_{len(tensor.dims)}d"


def _unique(name: str, used: set[str]) -> str:
    return unique_c_name(name, used)


def _parameter_names() -> set[str]:
    """The names taken in a prototype before its parameters are named."""
    return set(_HEADER_NAMES)


def _scalar_c_type(element: str) -> str:
    """The C type of a scalar of MLIR type ``element`` (abi/README.md)."""
    row = BY_MLIR.get(element.strip())
    if row is None or not row.c_scalar:
        raise NoCType(
            f"{element.strip()} is no scalar type of the calling contract (abi/README.md)"
        )
    return row.c_scalar


def attribute_c_type(attribute: AttributeOperand) -> str:
    """The C parameter type of one attribute operand (abi/README.md): its kind's
    ``c_parameter`` (``plan.attribute_kinds``)."""
    if attribute.kind.c_parameter == CParameter.DESCRIPTOR:
        return descriptor_type(attribute.type, attribute.own_element) + " *"
    return _scalar_c_type(attribute.source_type)


def prototypes_of(
    result: Rewrite,
    *,
    filename: str = "<string>",
    abi: str = "c",
    iree_module: str = DEFAULT_IREE_MODULE,
) -> list[Prototype]:
    """One prototype per extern: those the rewrite declared, from its reports, then those
    already declared in the input (``rewriter.api.prototypes`` makes the rewrite).

    With ``abi="iree"`` the prototypes are named after the imports (``_mlir_ciface_S`` for
    ``@ffi.S``): the C function a kernel library provides for that import.
    """
    prefix = Abi(abi, iree_module).prefix
    text = result.original  # bytes, bytecode or an Exported were converted to text
    found: dict[str, Prototype] = {}
    for call in result.calls:
        symbol = (call.symbol or "")[len(prefix) :]
        if call.status != Status.REWRITTEN or symbol in found:
            continue
        used = _parameter_names()
        try:
            parameters = [
                Parameter(_unique(f"arg{i}", used), descriptor_type(t) + " *")
                for i, t in enumerate(call.extern_operand_types)
            ]
            for attribute in call.attributes:
                c_type = attribute_c_type(attribute)
                parameters.append(Parameter(_unique(attribute.path, used), c_type))
            result_types = [descriptor_type(t) for t in call.extern_result_types]
        except NoCType as error:
            message = f"custom_call @{call.target}: no C prototype: {error}"
            shown = Source(text, call.filename).line_text(call.line)
            raise RewriteError(
                [Diagnostic(call.filename, call.line, call.column, message, shown)]
            ) from None
        found[symbol] = Prototype(
            symbol,
            call.target,
            f"{call.filename}:{call.line}:{call.column}",
            parameters,
            result_types,
            layout_notes=_layout_notes(call),
        )
    for prototype in _declared_externs(text, filename):
        found.setdefault(prototype.symbol, prototype)
    return list(found.values())


# One line of ``declarations_in`` (comment cut off): an extern the rewrite declared.
_DECLARATION = re.compile(
    r"func\.func private @([A-Za-z_][A-Za-z0-9_]*)\((.*) "
    r"attributes \{llvm\.emit_c_interface(?:, rewriter\.xla_ffi = \{.*\})?\}"
)


def _layout_notes(call) -> list[str]:
    """One line per operand or result that the kernel sees transposed (non-default layout)."""
    notes = []
    groups = (
        ("arg", call.operand_types, call.extern_operand_types, call.operand_perms),
        ("result", call.result_types, call.extern_result_types, call.result_perms),
    )
    for prefix, logical, physical, perms in groups:
        kept = [(t, p) for t, p in zip(logical, perms, strict=True) if not is_token(t)]
        for index, ((logical_type, perm), physical_type) in enumerate(
            zip(kept, physical, strict=True)
        ):
            if perm != tuple(range(len(perm))):
                notes.append(_layout_note(f"{prefix}{index}", logical_type, physical_type, perm))
    return notes


def _layout_note(name: str, logical_type: str, physical_type: str, perm: Sequence[int]) -> str:
    minor_to_major = ", ".join(map(str, reversed(perm)))
    order = ", ".join(map(str, perm))
    return (
        f"{name}: {logical_type} in layout {{{minor_to_major}}}: the descriptor is "
        f"{physical_type}, its dims are the logical dims ({order}) in that order"
    )


def _described_layout_notes(
    facts, parameter_types: Sequence[str], result_types: Sequence[str]
) -> list[str]:
    """``_layout_notes`` of a call, from the extern's description (a rewritten module)."""
    notes = []
    operands, results = facts.declared()
    groups = (("arg", operands, parameter_types), ("result", results, result_types))
    for prefix, tensors, physical in groups:
        for index, (tensor, physical_type) in enumerate(zip(tensors, physical, strict=False)):
            perm = tensor.major_to_minor
            if perm != tuple(range(len(perm))):
                dims = ("?" if d is None else d for d in tensor.dims)
                logical_type = tensor_type(dims, mlir_element(tensor.dtype))
                notes.append(_layout_note(f"{prefix}{index}", logical_type, physical_type, perm))
    return notes


def _call_site(text: str, symbol: str) -> int | None:
    """Where the first call of the extern ``symbol`` starts in a rewritten module: the call
    of its layout wrapper (``@S_layout``, which stands where the custom call stood) if it
    has one, else the call of ``@S`` itself."""
    wrapper = re.search(
        rf"^[ \t]*func\.func private @({re.escape(symbol)}_layout(?:_[0-9]+)?)\(%",
        text,
        re.MULTILINE,
    )
    callee = wrapper.group(1) if wrapper else symbol
    call = re.search(
        rf"^[ \t]*((?:%[^=\n]*=[ \t]*)?func\.call @{re.escape(callee)}\()", text, re.MULTILINE
    )
    return call.start(1) if call else None


def _declared_externs(text: str, filename: str) -> list[Prototype]:
    """Prototypes rebuilt from extern declarations already in ``text`` (a rewritten module).

    With its ``rewriter.xla_ffi`` description an extern's prototype is exact again (the
    target, attribute names, signedness); without one, names are ``argN`` and integers
    signed (the same ABI). A description that cannot be read raises RewriteError.
    """
    descriptions = {extern.symbol: extern.facts for extern in externs_in(text, filename)}
    found = []
    for declaration in declarations_in(text):
        match = _DECLARATION.fullmatch(declaration.line)
        if match is None:
            continue
        symbol, rest = match.groups()
        try:
            prototype = _declared_extern(text, filename, declaration, symbol, rest, descriptions)
        except NoCType as error:
            message = f"extern @{symbol}: no C prototype: {error}"
            raise RewriteError(
                [Diagnostic.at(Source(text, filename), declaration.start, message)]
            ) from None
        found.append(prototype)
    return found


def _declared_extern(text, filename, declaration, symbol, rest, descriptions) -> Prototype:
    """The prototype of one declaration (``_declared_externs``); ``NoCType`` when one of its
    types has no C type."""
    close = closing_bracket(rest)
    if close < 0 or close >= len(rest):
        raise NoCType("its parameter list does not close")
    parameter_types = [
        re.sub(r"\s*\{.*\}$", "", parameter) for parameter in split_types(rest[:close])
    ]
    results_text = rest[close + 1 :].strip().removeprefix("->").strip()
    if results_text.startswith("(") and results_text.endswith(")"):
        results_text = results_text[1:-1]
    results = split_types(results_text) if results_text else []
    facts = descriptions.get(symbol)  # agrees with the declaration (externs_in checks)
    if facts is None:
        where = f"{filename}:{_line_col(text, declaration.start)[0]}:1"
        return _rebuilt_without_facts(symbol, where, parameter_types, results)
    call = _call_site(text, symbol)
    line_start = text.rfind("\n", 0, declaration.start) + 1
    line, column = _line_col(text, line_start if call is None else call)
    where = f"{filename}:{line}:{column}"
    used = _parameter_names()
    parameters = []
    operands, described_results = facts.declared()  # tokens are no parameters
    for index, (type_text, tensor) in enumerate(zip(parameter_types, operands, strict=False)):
        element = mlir_element(tensor.dtype)
        c_type = descriptor_type(type_text, element) + " *"
        parameters.append(Parameter(_unique(f"arg{index}", used), c_type))
    leaves = leaf_paths(facts.attributes)
    for type_text, (path, leaf) in zip(parameter_types[len(operands) :], leaves, strict=True):
        if leaf.kind == AttributeKind.SCALAR:
            c_type = scalar_c_type(leaf.dtype)
        else:
            element = "i8" if leaf.kind == AttributeKind.STRING else mlir_element(leaf.dtype)
            c_type = descriptor_type(type_text, element) + " *"
        parameters.append(Parameter(_unique(path, used), c_type))
    result_types = [
        descriptor_type(t, mlir_element(r.dtype))
        for t, r in zip(results, described_results, strict=True)
    ]
    notes = _described_layout_notes(facts, parameter_types, results)
    return Prototype(symbol, facts.target, where, parameters, result_types, layout_notes=notes)


def _line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of ``offset`` (columns count characters, as diagnostics do)."""
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _rebuilt_without_facts(
    symbol: str, where: str, parameter_types: list[str], results: list[str]
) -> Prototype:
    used = _parameter_names()
    parameters = []
    for index, type_text in enumerate(parameter_types):
        if type_text.strip().startswith("tensor<"):
            c_type = descriptor_type(type_text) + " *"
        else:
            c_type = _scalar_c_type(type_text)
        parameters.append(Parameter(_unique(f"arg{index}", used), c_type))
    return Prototype(
        symbol,
        symbol,
        where,
        parameters,
        [descriptor_type(t) for t in results],
        note="rebuilt from the declaration: the original target, attribute names and "
        "signedness are not in a rewritten module (give the original export for those)",
    )


_UNPRINTABLE = re.compile(r"[^\x20-\x7e]")


def _comment_safe(text: str) -> str:
    """Text from the input (target names, file names, types) made safe inside ``/* */``:
    it can neither end the comment, open a nested one, nor start a new line."""
    text = _UNPRINTABLE.sub("?", text).replace("??", "?\\?")
    return text.replace("*/", "*\\/").replace("/*", "/\\*")


def include_guard(protos: list[Prototype], module_name: str | None = None) -> str:
    """A guard unique to one header: ``REWRITER_<MODULE>_<HASH>_H``, the hash taken over
    the prototypes (symbols, C types, results), so two headers in one C file each count.
    The same externs give the same guard, from an export or from its rewrite."""
    signatures = "\n".join(
        f"{p.symbol}({', '.join(q.c_type for q in p.parameters)}) -> {', '.join(p.result_types)}"
        for p in protos
    )
    digest = hashlib.sha256(signatures.encode("utf-8")).hexdigest()[:12].upper()
    name = safe_c_name(module_name).upper() if module_name else "EXTERNS"
    return f"REWRITER_{name}_{digest}_H"


_MODULE_NAME = re.compile(r"^[ \t]*(?:builtin\.)?module @([\w$.\-]+)", re.MULTILINE)


def module_name(text: str) -> str | None:
    """The name of the first ``module @name`` of ``text``, if it has one."""
    match = _MODULE_NAME.search(text)
    return match.group(1) if match else None


def render_header(protos: list[Prototype], guard: str | None = None) -> str:
    """The header text: includes, result structs, prototypes, each with its origin.

    ``guard`` defaults to ``include_guard(protos)``."""
    guard = guard or include_guard(protos)
    lines = [
        "/* Generated by `python -m rewriter --emit-header`: the C entry points that the",
        " * rewritten module calls (calling contract: abi/README.md). Do not edit. */",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
        "#include <stdbool.h>",
        "#include <stdint.h>",
        "",
        '#include "rewriter/memref.h"',
        "",
    ]
    extra = sorted(
        {
            t.rstrip(" *")
            for p in protos
            for t in [*(q.c_type for q in p.parameters), *p.result_types]
            if t.startswith("rw_memref_") and not _declared_in_memref_h(t.rstrip(" *"))
        }
    )
    for name in extra:
        lines += _extra_descriptor(name)
    lines += ["#ifdef __cplusplus", 'extern "C" {', "#endif", ""]
    for proto in protos:
        target, where = _comment_safe(proto.target), _comment_safe(proto.where)
        if proto.note:
            lines.append(f"/* extern @{proto.symbol} declared at {where}; {proto.note} */")
        elif proto.layout_notes:
            lines.append(f"/* custom_call @{target} at {where}")
            lines += [f" * {_comment_safe(note)}" for note in proto.layout_notes]
            lines.append(" */")
        else:
            lines.append(f"/* custom_call @{target} at {where} */")
        arguments = []
        if len(proto.result_types) > 1:
            struct = f"{proto.symbol}_results"
            fields = " ".join(f"{t} result{i};" for i, t in enumerate(proto.result_types))
            lines.append(f"typedef struct {struct} {{ {fields} }} {struct};")
            arguments.append(f"{struct} *results")
        elif proto.result_types:
            arguments.append(f"{proto.result_types[0]} *result")
        arguments += [
            f"{p.c_type}{'' if p.c_type.endswith('*') else ' '}{p.name}" for p in proto.parameters
        ]
        lines.append(f"void _mlir_ciface_{proto.symbol}({', '.join(arguments) or 'void'});")
        lines.append("")
    lines += ["#ifdef __cplusplus", '} /* extern "C" */', "#endif", "", f"#endif /* {guard} */", ""]
    return "\n".join(lines)


def _declared_in_memref_h(name: str) -> bool:
    match = re.fullmatch(r"rw_memref_(\w+?)_([0-9]+)d", name)
    return match is not None and match.group(1) in _DESCRIBED and int(match.group(2)) <= 4


def _extra_descriptor(name: str) -> list[str]:
    match = re.fullmatch(r"rw_memref_(\w+?)_([0-9]+)d", name)
    assert match is not None  # names come from descriptor_type
    element, rank = match.group(1), int(match.group(2))
    c_element = BY_DESCRIPTOR[element].c_element  # descriptor_type names table rows only
    lines = []
    if element in ("c64", "c128"):
        base = "float" if element == "c64" else "double"
        lines.append(f"#ifndef RW_{c_element.upper()}_DEFINED")
        lines.append(f"#define RW_{c_element.upper()}_DEFINED")
        lines.append(f"typedef struct {{ {base} re, im; }} {c_element};")
        lines.append("#endif")
    macro = "RW_MEMREF_DECLARE_0D" if rank == 0 else "RW_MEMREF_DECLARE"
    arguments = f"{name}, {c_element}" + ("" if rank == 0 else f", {rank}")
    lines += [f"{macro}({arguments})", ""]
    return lines


def header_of(
    result: Rewrite,
    *,
    filename: str = "<string>",
    abi: str = "c",
    iree_module: str = DEFAULT_IREE_MODULE,
) -> str:
    """The C header for every extern of a rewrite already made (``rewriter.emit_header``
    makes the rewrite of a text first)."""
    protos = prototypes_of(result, filename=filename, abi=abi, iree_module=iree_module)
    return render_header(protos, include_guard(protos, module_name(result.original)))
