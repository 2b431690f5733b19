"""Entry points of a compiled module: which functions, under which C names, with which types.

Every public function ``@F`` with a body becomes the C entry ``_mlir_ciface_rw_entry_F``
(MLIR's C interface): renamed so that JAX's ``@main`` cannot collide with C's ``main`` or
with a kernel. The function itself becomes ``@rw_body_F``, marked ``llvm.emit_c_interface``,
and the entry, a C function (``entry_source``), calls it in XLA:CPU's floating-point mode.
``F`` is made a C identifier (other characters become ``_``), and where the name is taken
by a symbol of the module (an extern named ``rw_entry_main``) or by another entry, it gets
a suffix (``rw_entry_main_1``). Its arguments, the caller's arrays, are marked read-only
for bufferization. The signatures travel with the shared object as JSON in the symbol
``rw_model_metadata``, so ``load`` needs nothing else. A library with the C API exports
these names under its prefix (``under_prefix``).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, replace
from typing import Any

from ..plan.naming import NamePool, c_identifier
from . import contexts
from .shape_checks import add_shape_checks
from .tokens import drop_entry_tokens, is_token

ENTRY_PREFIX = "rw_entry_"
BODY_PREFIX = "rw_body_"  # the module's function behind an entry (``entry_source``)
METADATA_SYMBOL = "rw_model_metadata"


def under_prefix(prefix: str, symbol: str) -> str:
    """``symbol`` as a library with the C API exports it, under its prefix P:
    ``Prw_model_metadata``, ``Pmlir_ciface_rw_entry_main`` (a leading ``_`` dropped, so
    that no name holds ``__``); ``symbol`` itself for the empty prefix."""
    return prefix + symbol.lstrip("_") if prefix else symbol


@dataclass(frozen=True)
class TensorSpec:
    element: str  # MLIR element type: "f32", "ui8", "complex<f32>", ...
    shape: tuple[int, ...]  # -1 for a dynamic dimension


@dataclass(frozen=True)
class Entry:
    name: str  # the function's name in the module, e.g. "main"
    c_symbol: str  # e.g. "_mlir_ciface_rw_entry_main"
    # MLIR's C interface of the function behind it, "_mlir_ciface_rw_body_main": the entry
    # calls it in XLA:CPU's floating-point mode (``entry_source``).
    body_symbol: str
    inputs: tuple[TensorSpec, ...]
    results: tuple[TensorSpec, ...]
    # JAX's name of each input (``%arg0: tensor<...> loc("x")``), None where it has none.
    input_names: tuple[str | None, ...] = ()
    # JAX's name of each result (``{jax.result_info = "result"}``), None where it has none.
    result_names: tuple[str | None, ...] = ()
    # JAX's dimension variables that several argument dimensions share, and where:
    # ``(("b", ((0, 0), (1, 0))),)``; their sizes must agree (``dimension_variables``).
    shared_sizes: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = ()
    # MLIR's C interface of the function that checks jax's shape assertions before the
    # call (``shape_checks``), "" where there is none: it gives the number of the first
    # that fails (0: none) and ``check_values`` numbers for its message,
    # ``check_messages[number - 1]`` with ``{N}`` placeholders.
    check_symbol: str = ""
    check_messages: tuple[str, ...] = ()
    check_values: int = 0


def prepare(text: str) -> tuple[str, list[Entry]]:
    """Rename and mark the public functions of ``text``; return the new text and entries."""
    from iree.compiler import ir

    context = contexts.context()
    module = ir.Module.parse(text, context)
    entries: list[Entry] = []
    pool = NamePool(_taken_names(ir, module))
    functions: list[tuple[str, Any]] = []  # each entry's name and function
    with context, ir.Location.unknown():
        for operation in module.body.operations:
            op = operation.operation
            if op.name != "func.func" or not op.regions[0].blocks:
                continue
            visibility = (
                op.attributes["sym_visibility"] if "sym_visibility" in op.attributes else None
            )
            if visibility is not None and ir.StringAttr(visibility).value != "public":
                continue
            name = ir.StringAttr(op.attributes["sym_name"]).value
            if _takes_tokens(ir, op):  # the caller has none to pass (tokens.py)
                drop_entry_tokens(op)
            symbol = pool.claim(ENTRY_PREFIX + c_identifier(name))
            body = pool.claim(BODY_PREFIX + c_identifier(name))
            ir.SymbolTable.replace_all_symbol_uses(name, body, module.operation)
            ir.SymbolTable.set_symbol_name(op, body)
            op.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
            _read_only_arguments(ir, op)
            function_type = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
            entries.append(
                Entry(
                    name,
                    f"_mlir_ciface_{symbol}",
                    f"_mlir_ciface_{body}",
                    tuple(_spec(ir, t) for t in function_type.inputs),
                    tuple(_spec(ir, t) for t in function_type.results),
                    argument_names(ir, op),
                    result_names(ir, op, len(function_type.results)),
                )
            )
            functions.append((name, op))
        checks = add_shape_checks(ir, module, functions, pool)
        for index, entry in enumerate(entries):
            if entry.name in checks:
                check = checks[entry.name]
                entries[index] = replace(
                    entry,
                    check_symbol=f"_mlir_ciface_{check.symbol}",
                    check_messages=tuple(check.messages),
                    check_values=check.values,
                )
    return module.operation.get_asm(enable_debug_info=True), entries


def _takes_tokens(ir, function) -> bool:
    """Whether the function's signature has a token (jax.export's ``main`` of a program
    with ordered effects)."""
    signature = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
    return any(is_token(t) for t in [*signature.inputs, *signature.results])


def _read_only_arguments(ir, function) -> None:
    """Mark every argument of the entry ``function`` ``bufferization.writable = false``.

    The arguments are the caller's arrays, which the program only reads. Bufferization
    takes a function's arguments for writable by default, and an op that works in place
    (``iree_linalg_ext.sort`` sorts its operands where they are) then wrote into them; a
    read-only argument is copied first where an op would write into it.
    """
    count = len(function.regions[0].blocks[0].arguments)
    if "arg_attrs" in function.attributes:
        old = [ir.DictAttr(a) for a in ir.ArrayAttr(function.attributes["arg_attrs"])]
    else:
        old = [ir.DictAttr.get({}) for _ in range(count)]
    marked = []
    for attributes in old:
        entries = {attributes[i].name: attributes[i].attr for i in range(len(attributes))}
        entries["bufferization.writable"] = ir.BoolAttr.get(False)
        marked.append(ir.DictAttr.get(entries))
    function.attributes["arg_attrs"] = ir.ArrayAttr.get(marked)


def _taken_names(ir, module) -> set[str]:
    """The names an entry's symbol ``S`` must not take: every symbol of the module, and
    ``X`` for a symbol ``_mlir_ciface_X`` (whose C name ``_mlir_ciface_S`` would clash)."""
    taken = set()
    for operation in module.body.operations:
        if "sym_name" in operation.operation.attributes:
            name = ir.StringAttr(operation.operation.attributes["sym_name"]).value
            taken.add(name)
            taken.add(name.removeprefix("_mlir_ciface_"))
    return taken


def argument_names(ir, function) -> tuple[str | None, ...]:
    """JAX's names of the arguments of ``function`` (a ``func.func`` with a body): the
    name location of each block argument (``loc("x")``), None where there is none."""
    return tuple(
        argument.location.name_str if isinstance(argument.location, ir.NameLoc) else None
        for argument in function.regions[0].blocks[0].arguments
    )


def result_names(ir, function, count: int) -> tuple[str | None, ...]:
    """JAX's names of the results of ``function``: each ``jax.result_info`` string, None
    where there is none."""
    names: list[str | None] = [None] * count
    if "res_attrs" not in function.attributes:
        return tuple(names)
    for index, attributes in enumerate(ir.ArrayAttr(function.attributes["res_attrs"])):
        dictionary = ir.DictAttr(attributes)
        if index < count and "jax.result_info" in dictionary:
            names[index] = ir.StringAttr(dictionary["jax.result_info"]).value
    return tuple(names)


def _spec(ir, type_) -> TensorSpec:
    try:
        tensor = ir.RankedTensorType(type_)
    except ValueError:
        raise ValueError(f"entry points take and return ranked tensors, not {type_}") from None
    shape = tuple(-1 if tensor.is_dynamic_dim(i) else tensor.shape[i] for i in range(tensor.rank))
    return TensorSpec(str(tensor.element_type), shape)


def entry_source(entries: list[Entry]) -> str:
    """C source of the entries: each ``c_symbol`` calls the module's function behind it
    (``body_symbol``) with denormals flushed to zero, XLA:CPU's mode, and gives the caller
    back its own mode (``abi/rewriter_float_mode.h``); and the JSON description of
    ``entries`` as ``rw_model_metadata``.

    In a file of its own, so that no computation of the module can be moved across the
    change of mode. Every parameter of MLIR's C interface of an entry is a pointer (to the
    results, then to each argument's descriptor), so the entry passes them on as
    ``void *``."""
    lines = ['#include "rewriter_float_mode.h"', ""]
    for entry in entries:
        count = (1 if entry.results else 0) + len(entry.inputs)
        parameters = ", ".join(f"void *p{i}" for i in range(count)) or "void"
        arguments = ", ".join(f"p{i}" for i in range(count))
        lines += [
            f"void {entry.body_symbol}({parameters});",
            f"void {entry.c_symbol}({parameters})",
            "{",
            "    rw_float_mode caller = rw_flush_denormals();",
            f"    {entry.body_symbol}({arguments});",
            "    rw_restore_float_mode(caller);",
            "}",
            "",
        ]
    data = entries_json(entries)
    escaped = "".join(
        char if char.isalnum() or char in " :,[]{}_-<>." else f"\\{ord(char):03o}" for char in data
    )
    lines.append(f'const char {METADATA_SYMBOL}[] = "{escaped}";')
    return "\n".join(lines) + "\n"


def entries_json(entries: list[Entry]) -> str:
    """``entries`` as JSON, as ``entries_from_json`` reads them."""
    return json.dumps([asdict(entry) for entry in entries], sort_keys=True)


def entries_from_json(data: str) -> list[Entry]:
    return [
        Entry(
            item["name"],
            item["c_symbol"],
            item.get("body_symbol", ""),  # none in a library of an earlier version
            tuple(TensorSpec(s["element"], tuple(s["shape"])) for s in item["inputs"]),
            tuple(TensorSpec(s["element"], tuple(s["shape"])) for s in item["results"]),
            tuple(item.get("input_names", ())),
            tuple(item.get("result_names", ())),
            tuple(
                (name, tuple((int(a), int(d)) for a, d in places))
                for name, places in item.get("shared_sizes", ())
            ),
            item.get("check_symbol", ""),
            tuple(item.get("check_messages", ())),
            int(item.get("check_values", 0)),
        )
        for item in json.loads(data)
    ]


_SPECIFICATION = re.compile(r"polymorphic shapes specifications: (.*?)\. Obtained")
_ARGUMENT_SHAPE = re.compile(r"args\[([0-9]+)\]\.shape = \(([^)]*)\)")


def dimension_variables(
    text: str, entry: Entry
) -> tuple[tuple[str, tuple[tuple[int, int], ...]], ...]:
    """JAX's dimension variables (``b`` of ``jax.export.symbolic_shape("b, 8")``) that
    several dynamic dimensions of ``entry``'s arguments share, read from the specification
    that jax writes into the module's shape assertions (``args[0].shape = (b, 8),args[1]
    .shape = (b, 4)``); only for JAX's ``main``, and only bare names (``2*b`` is left to the
    module's own checks)."""
    found = _SPECIFICATION.search(text) if entry.name == "main" else None
    if found is None:
        return ()
    places: dict[str, list[tuple[int, int]]] = {}
    for argument, dims in _ARGUMENT_SHAPE.findall(found.group(1)):
        for dimension, name in enumerate(part.strip() for part in dims.split(",")):
            index = int(argument)
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or index >= len(entry.inputs):
                continue
            shape = entry.inputs[index].shape
            if dimension < len(shape) and shape[dimension] < 0:
                places.setdefault(name, []).append((index, dimension))
    return tuple((name, tuple(at)) for name, at in places.items() if len(at) > 1)
