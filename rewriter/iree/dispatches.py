"""FFI calls compiled into dispatches that call their XLA FFI handler from the executable.

An import of the VM is served on the calling thread, after IREE has waited for the work
before it, through whatever serves it (Python, for ``PyModuleInterface``): about 130 us
a call, of which the C handler takes one. Instead, ``route_ffi_to_dispatches`` gives the
declaration ``@ffi.S`` of a chosen import a body: one ``flow.dispatch`` of a hand-written
executable (``stream.executable @rw_ffi_S``, one workgroup) whose code passes the base
pointers and offsets of its bindings, and its scalars, to the executable import
``rw_ffi_dispatch_S``. IREE inlines the body at every call, schedules the dispatch like its
own, and resolves ``rw_ffi_dispatch_S`` when it loads the executable through the
executable plugin of ``plugin.py``, which hands over the adapter that ``FfiBridge`` compiled
for the import (``dispatch_source``): memref descriptors on the bindings, the bridge's
XLA FFI call (the same checks of shapes and dtypes as the compiled path), writing into
the result bindings. No Python runs during a call.

Only what a dispatch can take is routed (``why_not``): tensors of static shapes with at
least one element, numbers of 8 to 64 bits, scalars of 32 or 64 bits, and at least one
result (a call without results is kept for its effect alone, which a dispatch would lose:
IREE drops a dispatch whose results nobody reads). Like XLA, IREE may merge two calls of
the same handler on the same operands into one.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..syntax.element_types import BY_MLIR, parse_tensor
from .implementations import chosen_key, target_of
from .signatures import ImportSignature

_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
IMPORT_PREFIX = "rw_ffi_dispatch_"  # the executable import of @ffi.S: rw_ffi_dispatch_S
EXECUTABLE_PREFIX = "rw_ffi_"
# Scalars a dispatch takes as push constants, and their C types in the adapter's params.
SCALAR_C_TYPES = {"f32": "float", "f64": "double", "i32": "int32_t", "i64": "int64_t"}
# Narrower integers are widened to i32 before the dispatch: IREE 3.13 hands an i16 operand
# of a dispatch over cut to 8 bits (-300 arrives as -44); i1 and i8 go the same way.
WIDENED = {"i1": "arith.extui", "i8": "arith.extsi", "i16": "arith.extsi"}


def dispatch_type(type_: str) -> str:
    """The type in which the dispatch receives a scalar parameter of type ``type_``."""
    return "i32" if type_ in WIDENED else type_


def why_not(signature: ImportSignature) -> str | None:
    """Why the import cannot be a dispatch, or None when it can."""
    if not signature.ffi_facts:
        return "no rewriter.xla_ffi description: no XLA FFI handler can serve it"
    if not _C_IDENTIFIER.fullmatch(signature.name):
        return f"{signature.name} is not a C identifier"
    if not signature.results:
        return "no results: a dispatch nobody reads would be dropped with its effect"
    for type_ in (*signature.parameters, *signature.results):
        if not type_.startswith("tensor<"):
            if dispatch_type(type_) not in SCALAR_C_TYPES:
                return f"a dispatch takes no {type_} scalar"
            continue
        tensor = parse_tensor(type_)
        if tensor is None or any(d is None for d in tensor.dims):
            return f"{type_} has a dynamic shape"
        if any(d == 0 for d in tensor.dims):
            return f"{type_} has no elements"
        row = BY_MLIR.get(tensor.element)
        if row is None or row.is_complex or tensor.element == "i1" or row.size > 8:
            return f"a dispatch binding of {tensor.element} is not supported here"
    return None


def import_symbol(signature: ImportSignature) -> str:
    """The executable import that serves the dispatch of ``signature``."""
    return IMPORT_PREFIX + signature.name


Selection = bool | Collection[str] | Mapping[str, bool]


def selected(signatures: Sequence[ImportSignature], selection: Selection) -> set[str]:
    """The names of the imports that ``selection`` chooses: all (``True``), none
    (``False``), those an import name or target of the collection serves, or those whose
    key in the mapping (import names and targets, as ``load``'s ``imports``) says True."""
    if isinstance(selection, bool):
        return {s.name for s in signatures} if selection else set()
    chosen = selection if isinstance(selection, Mapping) else dict.fromkeys(selection, True)
    all_targets = {t for s in signatures if (t := target_of(s)) is not None}
    return {
        s.name
        for s in signatures
        if (key := chosen_key(s, chosen, all_targets)) is not None and chosen[key]
    }


def selection_key(selection: Selection) -> object:
    """``selection`` as JSON for the compile cache's key (None when it chooses nothing)."""
    if isinstance(selection, bool):
        return selection or None
    if isinstance(selection, Mapping):
        return sorted((str(k), bool(v)) for k, v in selection.items()) or None
    return sorted(map(str, selection)) or None


def route_ffi_to_dispatches(
    module: Any, signatures: Sequence[ImportSignature], selection: Selection
) -> list[ImportSignature]:
    """Give the declarations of the imports that ``selection`` chooses (``selected``) and
    that can be dispatches (``why_not``) a body that dispatches them; return every
    signature, those routed marked ``dispatch=True``."""
    from iree.compiler import ir

    chosen = {
        s.name
        for s in signatures
        if s.name in selected(signatures, selection) and why_not(s) is None
    }
    if not chosen:
        return list(signatures)
    by_symbol = {f"{s.module}.{s.name}": s for s in signatures if s.name in chosen}
    declarations = []
    for operation in module.body.operations:
        op = operation.operation
        if op.name == "func.func" and not op.regions[0].blocks:
            symbol = ir.StringAttr(op.attributes["sym_name"]).value
            if symbol in by_symbol:
                declarations.append((op, by_symbol[symbol]))
    with module.context, ir.Location.unknown():
        for op, signature in declarations:
            parsed = ir.Module.parse(_definitions(signature))
            for new in list(parsed.body.operations):
                new.operation.move_before(op)
            op.erase()
    return [replace(s, dispatch=True) if s.name in chosen else s for s in signatures]


def _definitions(signature: ImportSignature) -> str:
    """The executable and the body of ``@ffi.S``, as MLIR text."""
    name = signature.name
    executable = EXECUTABLE_PREFIX + name
    parameters, results = signature.parameters, signature.results
    arguments = ", ".join(f"%a{i}: {t}" for i, t in enumerate(parameters))
    widen = [
        f"  %w{i} = {WIDENED[t]} %a{i} : {t} to i32"
        for i, t in enumerate(parameters)
        if t in WIDENED
    ]
    operands = ", ".join(f"%w{i}" if t in WIDENED else f"%a{i}" for i, t in enumerate(parameters))
    passed = [dispatch_type(t) for t in parameters]
    result_list = ", ".join(results)
    values = ["%r"] if len(results) == 1 else [f"%r#{i}" for i in range(len(results))]
    count = "" if len(results) == 1 else f":{len(results)}"
    # The workgroup function: bindings (tensors) and values (scalars), then the results.
    inner_arguments = [
        f"%p{i}: {'!stream.binding' if t.startswith('tensor<') else t}"
        for i, t in enumerate(passed)
    ] + [f"%q{j}: !stream.binding" for j in range(len(results))]
    body: list[str] = ["%c0 = arith.constant 0 : index"]
    call_values: list[str] = []
    call_types: list[str] = []

    def unpack(binding: str, type_: str) -> None:
        tensor = parse_tensor(type_)
        assert tensor is not None
        # Every binding is viewed as 1-d, the adapter knows the shape: IREE 3.13 gives the
        # base pointer of a 0-d subspan with its offset already added, and reports the
        # offset as well; 1-d views are what its own code uses (flattened subspans).
        count = 1
        for size in tensor.dims:
            count *= size or 1
        memref = f"memref<{count}x{tensor.element}>"
        base = f"memref<{tensor.element}>"
        body.append(
            f"%m{binding} = stream.binding.subspan %{binding}[%c0] : !stream.binding -> {memref}"
        )
        body.append(
            f"%b{binding}, %o{binding}, %n{binding}, %s{binding} = "
            f"iree_codegen.extract_strided_metadata %m{binding} : {memref} -> "
            f"{base}, index, index, index"
        )
        call_values.extend([f"%b{binding}", f"%o{binding}"])
        call_types.extend([base, "index"])

    for i, type_ in enumerate(passed):
        if type_.startswith("tensor<"):
            unpack(f"p{i}", type_)
        else:
            call_values.append(f"%p{i}")
            call_types.append(type_)
    for j, type_ in enumerate(results):
        unpack(f"q{j}", type_)
    symbol = import_symbol(signature)
    types = ", ".join(call_types)
    lines = [
        f"stream.executable private @{executable} {{",
        f"  stream.executable.export public @{executable} workgroups() -> (index, index, index) {{",
        "    %c1 = arith.constant 1 : index",
        "    stream.return %c1, %c1, %c1 : index, index, index",
        "  }",
        "  builtin.module {",
        f"    func.func private @{symbol}({types}) attributes {{llvm.bareptr = true}}",
        f"    func.func @{executable}({', '.join(inner_arguments)}) {{",
        *(f"      {line}" for line in body),
        f"      func.call @{symbol}({', '.join(call_values)}) : ({types}) -> ()",
        "      return",
        "    }",
        "  }",
        "}",
        f"func.func private @{signature.module}.{name}({arguments}) -> ({result_list}) {{",
        *widen,
        f"  %r{count} = flow.dispatch @{executable}::@{executable}({operands}) : "
        f"({', '.join(passed)}) -> ({result_list})",
        f"  return {', '.join(values)} : {result_list}",
        "}",
    ]
    return "\n".join(lines)
