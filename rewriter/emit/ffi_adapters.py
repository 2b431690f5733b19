"""``--emit-ffi-adapters``: C functions that call existing XLA FFI handlers for the externs.

For every extern ``@S`` that carries a ``rewriter.xla_ffi`` description (see ffi_facts),
the adapter defines ``_mlir_ciface_S`` with exactly the C-interface signature the compiled
module calls, and hands its arguments to ``rw_ffi_call`` of ``abi/xla_ffi_bridge.c`` with a
static description of the call (dtypes, logical dims, layouts, attribute names). The
bridge builds the XLA FFI call frame and calls the handler registered for the target.

Descriptors are passed as ``void *``: MLIR's C interface passes every memref by pointer,
so the adapters need no descriptor types; scalars keep their C types.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..plan.ffi_facts import (
    FACTS_ATTRIBUTE,
    AttributeFacts,
    AttributeKind,
    ExternFacts,
    FactsError,
    TensorFacts,
    leaf_paths,
    parse_facts,
)
from ..plan.status import Status
from ..syntax.diagnostics import Diagnostic, RewriteError
from ..syntax.element_types import BY_MLIR, BY_XLA, parse_tensor
from ..syntax.source import Source
from ..syntax.terminals import STRING
from ..syntax.typetext import closing_bracket, split_types

if TYPE_CHECKING:
    from ..plan.planner import CallReport

# An op starts its own line, and neither a comment nor a string spans lines: a line that
# begins with `func.func` is code, while `// CHECK: func.func private @f` is not read.
_DECLARATION = re.compile(r"func\.func[ \t]+private[ \t]+@([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(")
_INDENT = re.compile(r"[ \t]*")
_STRING_OR_COMMENT = re.compile(STRING + "|//")
_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def scalar_c_type(dtype: str) -> str:
    """The C parameter type of a scalar attribute, by its XLA dtype (abi/README.md)."""
    c_type = BY_XLA[dtype].c_scalar
    if not c_type:
        raise FactsError(f"the calling contract passes no {dtype} scalar")
    return c_type


@dataclass(frozen=True)
class Extern:
    symbol: str  # the extern's name; the adapter defines _mlir_ciface_<symbol>
    facts: ExternFacts


@dataclass(frozen=True)
class Declaration:
    symbol: str
    start: int  # the offset of its `func.func` in the text
    line: str  # from `func.func` to the end of its line, a trailing comment cut off


def declarations_in(text: str) -> Iterator[Declaration]:
    """The ``func.func private`` declarations of ``text`` that are code, not comments.

    ``str.find`` looks for ``func.func`` (a regular expression anchored at line starts
    would try every character of megabyte constants); a find counts when only blanks
    stand before it on its line."""
    position = text.find("func.func")
    while position >= 0:
        line_start = text.rfind("\n", 0, position) + 1
        match = _DECLARATION.match(text, position)
        if match and _INDENT.fullmatch(text, line_start, position):
            line_end = text.find("\n", match.end())
            line = text[position : line_end if line_end >= 0 else len(text)]
            yield Declaration(match.group(1), position, _code_of(line).rstrip())
        position = text.find("func.func", position + 1)


def _code_of(line: str) -> str:
    """``line`` without its trailing ``//`` comment (a ``//`` in a string is no comment)."""
    for token in _STRING_OR_COMMENT.finditer(line):
        if token.group() == "//":
            return line[: token.start()]
    return line


def externs_in(text: str, filename: str = "<string>") -> list[Extern]:
    """Every extern declaration of ``text`` (a rewritten module) with its description.

    A description that cannot be read raises RewriteError pointing at it (the fault in it,
    when the parser tells where)."""
    found: list[Extern] = []
    seen: set[str] = set()
    for declaration in declarations_in(text):
        line = declaration.line
        at = _outside_strings(line, FACTS_ATTRIBUTE + " = ")
        if at < 0 or declaration.symbol in seen:
            continue
        start = at + len(FACTS_ATTRIBUTE) + 3
        try:
            facts = parse_facts(line[start : _dictionary_end(line, start)])
            for _, leaf in leaf_paths(facts.attributes):
                if leaf.kind == AttributeKind.SCALAR:
                    scalar_c_type(leaf.dtype)  # the adapter and header need its C type
            disagreement = _disagreement(facts, line[: _outside_strings(line, " attributes {")])
            if disagreement:
                raise FactsError(f"the description disagrees with the declaration: {disagreement}")
        except FactsError as error:
            offset = declaration.start + (at if error.offset is None else start + error.offset)
            message = f"@{declaration.symbol}: {error}"
            raise RewriteError([Diagnostic.at(Source(text, filename), offset, message)]) from None
        seen.add(declaration.symbol)
        found.append(Extern(declaration.symbol, facts))
    return found


def declared_types(head: str) -> tuple[list[str], list[str]] | None:
    """The parameter and result types of ``func.func private @S(...) -> ...`` (the line up to
    its ``attributes``), parameter attributes dropped; None when they cannot be split.
    Strings are blanked first: a bracket in one is no bracket."""
    head = re.sub(STRING, lambda string: '"' + "_" * (len(string.group()) - 2) + '"', head)
    try:
        rest = head[head.index("(") + 1 :]
        close = closing_bracket(rest)
    except ValueError:
        return None
    parameters = [re.sub(r"\s*\{.*\}$", "", p) for p in split_types(rest[:close])]
    results_text = rest[close + 1 :].strip().removeprefix("->").strip()
    return parameters, split_types(results_text) if results_text else []


def _disagreement(facts: ExternFacts, head: str) -> str | None:
    """Where a description and its declaration disagree, or None.

    The adapter writes what the description says into the descriptors the compiled module
    hands it, sized by the declaration: a description of other sizes, ranks or element
    types (a hand edit) would write past them. Operands and results must be the tensors the
    description names, in the declaration's (physical) dimension order; attributes the
    types they travel as: a scalar of the same size, an array of the same shape, a string
    as bytes."""
    types = declared_types(head)
    if types is None:
        return "its types cannot be read"
    parameters, results = types
    leaves = leaf_paths(facts.attributes)
    # Tokens are described (the handler gets them) but not declared (the extern does not).
    described, described_results = facts.declared()
    if len(parameters) != len(described) + len(leaves) or len(results) != len(described_results):
        return (
            f"{len(described)} operands, {len(leaves)} attributes and "
            f"{len(described_results)} results described, {len(parameters)} parameters and "
            f"{len(results)} results declared"
        )
    operands = zip(described, parameters[: len(described)], strict=True)
    pairs = [("operand", i, t, p) for i, (t, p) in enumerate(operands)]
    pairs += [
        ("result", i, t, r) for i, (t, r) in enumerate(zip(described_results, results, strict=True))
    ]
    for role, index, tensor, type_text in pairs:
        declared = parse_tensor(type_text)
        physical = tuple(tensor.dims[axis] for axis in tensor.major_to_minor)
        if declared is None or declared.dims != physical or not _same_kind(declared, tensor.dtype):
            return f"{role} {index} is {tensor.text()} in the description, {type_text} declared"
    for (path, leaf), type_text in zip(leaves, parameters[len(described) :], strict=True):
        if not _travels_as(leaf, type_text):
            return (
                f"attribute {path} is {leaf.value_text()} in the description, {type_text} declared"
            )
    return None


def _same_kind(declared, dtype: str) -> bool:
    """Whether a declared tensor's elements are XLA's ``dtype`` (signedness aside: a
    rewritten module's types may be signless)."""
    row = BY_MLIR.get(declared.element)
    return row is not None and row.xla.replace("u", "s") == dtype.replace("u", "s")


def _travels_as(leaf: AttributeFacts, type_text: str) -> bool:
    """Whether an attribute travels as the declared parameter type (abi/README.md)."""
    declared = parse_tensor(type_text)
    if leaf.kind == AttributeKind.SCALAR:
        row = BY_MLIR.get(type_text)
        return declared is None and row is not None and row.size == BY_XLA[leaf.dtype].size
    if declared is None:
        return False
    if leaf.kind == AttributeKind.STRING:
        return len(declared.dims) == 1 and declared.element in ("i8", "ui8", "si8")
    return declared.dims == leaf.dims and _same_kind(declared, leaf.dtype)


def _outside_strings(line: str, needle: str) -> int:
    """The offset of the first ``needle`` in ``line`` that is not inside a string, or -1."""
    position = line.find(needle)
    for string in re.finditer(STRING, line):
        if position < 0 or position < string.start():
            break
        if position < string.end():
            position = line.find(needle, string.end())
    return position


def externs_of_rewrite(
    calls: Sequence[CallReport], original: str, filename: str = "<string>"
) -> list[Extern]:
    """The externs a rewrite declares, from its reports, then those ``original`` declares.

    The same list ``externs_in`` reads back from the rewritten text: the rewrite puts its
    declarations first, in the order of the first call of each, with that call's facts; an
    extern whose first call has none carries no description.
    """
    found: dict[str, Extern | None] = {}
    for call in calls:
        if call.status == Status.REWRITTEN and call.symbol and call.symbol not in found:
            facts = call.ffi_facts
            found[call.symbol] = Extern(call.symbol, facts) if facts is not None else None
    for extern in externs_in(original, filename):
        found.setdefault(extern.symbol, extern)
    return [extern for extern in found.values() if extern is not None]


def _dictionary_end(line: str, start: int) -> int:
    """The offset after the ``{...}`` starting at ``start``, strings skipped."""
    depth = 0
    position = start
    while position < len(line):
        char = line[position]
        if char == '"':
            position += 1
            while position < len(line) and line[position] != '"':
                position += 2 if line[position] == "\\" else 1
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return position + 1
        position += 1
    raise FactsError(f"unterminated {FACTS_ATTRIBUTE} attribute")


def adapters_source(externs: Sequence[Extern], origin: str = "") -> str:
    """The C source of the adapters, plus the list of targets they call."""
    source = f" from {_comment(origin)}" if origin else ""
    header = [
        f"/* XLA FFI adapters generated by rewriter{source}.",
        " * Compile with abi/xla_ffi_bridge.c and the include folders of rewriter.abi and",
        " * jax.ffi.include_dir(); python -m rewriter.compile --ffi-bridge does it all. */",
        "#include <stdbool.h>",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "",
        '#include "xla_ffi_bridge.h"',
        "",
        "",
    ]
    body = [_adapter(extern, index) for index, extern in enumerate(externs)]
    targets = sorted({extern.facts.target for extern in externs})
    table = [
        "const char *const rw_ffi_required_targets[] = {",
        *(f"    {_c_string(target)}," for target in targets),
        "    NULL,",
        "};",
        "",
    ]
    return "\n".join(header) + "\n".join(body) + "\n".join(table)


def _adapter(extern: Extern, index: int) -> str:
    symbol, facts = extern.symbol, extern.facts
    if not _C_IDENTIFIER.fullmatch(symbol):
        raise FactsError(f"extern @{symbol} is not a C identifier")
    # The adapter's static tables are named by its place, not its symbol: ``rw_{symbol}_spec``
    # of an extern named ``ffi_call`` is the bridge's type ``rw_ffi_call_spec``.
    prefix = f"rw_adapter{index}"
    lines = [f"/* @{symbol}: XLA FFI target {_comment(facts.target)} */"]
    shape_of_result = dict(enumerate(facts.shape_operands))
    operand_specs = [
        _tensor(lines, f"{prefix}_operand{i}", t, -1) for i, t in enumerate(facts.operands)
    ]
    result_specs = [
        _tensor(lines, f"{prefix}_result{i}", t, shape_of_result.get(i, -1))
        for i, t in enumerate(facts.results)
    ]
    operands = _array(lines, "rw_ffi_tensor", f"{prefix}_operands", operand_specs)
    results = _array(lines, "rw_ffi_tensor", f"{prefix}_results", result_specs)
    shape_flags = ["1" if i in facts.shape_operands else "0" for i in range(len(facts.operands))]
    is_shape = _array(lines, "int64_t", f"{prefix}_is_shape_operand", shape_flags)
    entries: list[str] = []
    for attribute in facts.attributes:
        _attribute_entries(attribute, entries)
    attributes = _array(lines, "rw_ffi_attr", f"{prefix}_attributes", entries)
    lines += [
        f"static const rw_ffi_call_spec {prefix}_spec = {{",
        f"    {_c_string(facts.target)}, {_c_string(symbol)},",
        f"    {len(facts.operands)}, {operands}, {is_shape},",
        f"    {len(facts.results)}, {results},",
        f"    {len(facts.attributes)}, {len(entries)}, {attributes},",
        "};",
    ]
    # A token is no parameter: the bridge hands the handler a TOKEN buffer in its place.
    has_results = any(not t.is_token for t in facts.results)
    parameters = ["void *results"] if has_results else []
    parameters += [f"void *operand{i}" for i, t in enumerate(facts.operands) if not t.is_token]
    values = []
    for index, (path, leaf) in enumerate(leaf_paths(facts.attributes)):
        c_type = scalar_c_type(leaf.dtype) if leaf.kind == AttributeKind.SCALAR else "void *"
        parameters.append(
            f"{c_type}{'' if c_type.endswith('*') else ' '}attribute{index} /* {_comment(path)} */"
        )
        scalar = leaf.kind == AttributeKind.SCALAR
        values.append(f"&attribute{index}" if scalar else f"attribute{index}")
    operand_values = ", ".join(
        "NULL" if t.is_token else f"operand{i}" for i, t in enumerate(facts.operands)
    )
    lines.append(f"void _mlir_ciface_{symbol}({', '.join(parameters) or 'void'}) {{")
    if facts.operands:
        lines.append(f"  void *const operands[] = {{{operand_values}}};")
    if values:
        lines.append(f"  void *const attributes[] = {{{', '.join(values)}}};")
    lines.append(
        f"  rw_ffi_call(&{prefix}_spec, {'results' if has_results else 'NULL'}, "
        f"{'operands' if facts.operands else 'NULL'}, {'attributes' if values else 'NULL'});"
    )
    lines += ["}", "", ""]
    return "\n".join(lines)


def _tensor(lines: list[str], name: str, tensor: TensorFacts, shape_operand: int) -> str:
    if tensor.is_token:
        return "{XLA_FFI_DataType_TOKEN, 0, 0, NULL, NULL, -1}"
    row = BY_XLA[tensor.dtype]
    dtype, size = row.ffi_name, row.size
    dims = _array(
        lines, "int64_t", f"{name}_dims", ["-1" if d is None else str(d) for d in tensor.dims]
    )
    order = _array(
        lines, "int64_t", f"{name}_major_to_minor", list(map(str, tensor.major_to_minor))
    )
    return f"{{{dtype}, {size}, {len(tensor.dims)}, {dims}, {order}, {shape_operand}}}"


def _attribute_entries(attribute: AttributeFacts, entries: list[str]) -> None:
    name = _c_string(attribute.name)
    if attribute.kind == AttributeKind.DICT:
        entries.append(
            f"{{{name}, RW_FFI_DICT, XLA_FFI_DataType_INVALID, 0, {len(attribute.entries)}}}"
        )
        for entry in attribute.entries:
            _attribute_entries(entry, entries)
    elif attribute.kind == AttributeKind.STRING:
        entries.append(f"{{{name}, RW_FFI_STRING, XLA_FFI_DataType_U8, 1, 0}}")
    elif attribute.kind == AttributeKind.ARRAY:
        dtype = BY_XLA[attribute.dtype].ffi_name
        entries.append(f"{{{name}, RW_FFI_ARRAY, {dtype}, {len(attribute.dims)}, 0}}")
    else:
        dtype = BY_XLA[attribute.dtype].ffi_name
        entries.append(f"{{{name}, RW_FFI_SCALAR, {dtype}, 0, 0}}")


def _array(lines: list[str], c_type: str, name: str, items: Sequence[str]) -> str:
    """Defines a static array (C has no empty ones: NULL stands for none)."""
    if not items:
        return "NULL"
    lines.append(f"static const {c_type} {name}[] = {{{', '.join(items)}}};")
    return name


def _c_string(value: str) -> str:
    """A C string literal: only letters, digits and ``_`` verbatim, everything else octal
    escapes, so no name can end the literal, form a trigraph or a comment."""
    return (
        '"'
        + "".join(
            chr(b) if (b < 0x80 and chr(b).isalnum()) or b == 0x5F else f"\\{b:03o}"
            for b in value.encode("utf-8")
        )
        + '"'
    )


def _comment(value: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.:@/ -]", "_", value)  # no `*`: cannot end the comment
