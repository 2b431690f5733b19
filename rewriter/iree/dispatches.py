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
the result bindings. No Python runs during a call. A run of such calls in one block
(``_fuse_runs``) becomes one dispatch making them in turn, each reading the bindings the
ones before it wrote.

Only what a dispatch can take is routed (``why_not``): tensors of static shapes with at
least one element, numbers of 8 to 64 bits, scalars of 32 or 64 bits, and at least one
result (a call without results is kept for its effect alone, which a dispatch would lose:
IREE drops a dispatch whose results nobody reads). For the same reason an import marked
``rewriter.has_side_effect`` (a call with results and ``has_side_effect = true``, which
XLA runs whether or not its results are read) stays a VM import, which IREE keeps. Like
XLA, IREE may merge two calls of the same handler on the same operands into one.
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
    if signature.side_effect:
        return "has_side_effect: a dispatch whose results nobody reads would be dropped"
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


def binding_base(binding: str, size: int | str, element: str) -> list[str]:
    """The lines of dispatch code that give the base pointer ``%bB`` (a ``memref<E>``) and
    the element offset ``%oB`` of the binding ``%B`` of ``size`` elements of ``element``
    (``%c0`` the index 0): what an executable import is handed. The binding is viewed as
    1-d (the import knows the shape): IREE 3.13 gives the base pointer of a 0-d subspan
    with its offset already added, and reports the offset as well; 1-d views are what its
    own code uses (flattened subspans)."""
    memref = f"memref<{size}x{element}>"
    sized = ""
    if isinstance(size, str):  # a value: its size at run time
        memref, sized = f"memref<?x{element}>", f"{{{size}}}"
    return [
        f"%m{binding} = stream.binding.subspan %{binding}[%c0] : !stream.binding -> "
        f"{memref}{sized}",
        f"%b{binding}, %o{binding}, %n{binding}, %s{binding} = "
        f"iree_codegen.extract_strided_metadata %m{binding} : {memref} -> "
        f"memref<{element}>, index, index, index",
    ]


def executable_lines(
    name: str,
    imports: Mapping[str, str],
    arguments: str,
    body: list[str],
    tasks: int = 1,
    count: tuple[list[str], str] | None = None,
) -> list[str]:
    """The hand-written executable ``@name`` (``stream.executable``): ``tasks`` workgroups,
    each running ``body`` in the function ``@name(arguments)`` (its bindings and values),
    which may call the executable imports of ``imports`` (symbol -> their argument types,
    passed as bare pointers: the params struct the import function reads). ``count``: the
    workgroups from the dispatch's one workload value ``%w`` instead, the lines that
    compute them and the value's name."""
    if count is not None:
        workload, (lines, first) = "%w: index", count
    else:
        workload, lines = "", ["%c1 = arith.constant 1 : index"]
        if tasks != 1:
            lines.append(f"%ct = arith.constant {tasks} : index")
        first = "%c1" if tasks == 1 else "%ct"
    one = "%one" if count is not None else "%c1"
    return [
        f"stream.executable private @{name} {{",
        f"  stream.executable.export public @{name} workgroups({workload}) -> "
        "(index, index, index) {",
        *(f"    {line}" for line in lines),
        f"    stream.return {first}, {one}, {one} : index, index, index",
        "  }",
        "  builtin.module {",
        *(
            f"    func.func private @{symbol}({types}) attributes {{llvm.bareptr = true}}"
            for symbol, types in imports.items()
        ),
        f"    func.func @{name}({arguments}) {{",
        *(f"      {line}" for line in body),
        "      return",
        "    }",
        "  }",
        "}",
    ]


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
        _fuse_runs(ir, module, by_symbol)
    return [replace(s, dispatch=True) if s.name in chosen else s for s in signatures]


def _fuse_runs(ir: Any, module: Any, dispatched: Mapping[str, ImportSignature]) -> None:
    """Make each run of two or more dispatched calls in a block (nothing but constants
    between them) one dispatch that makes the calls in turn: on ``local-task`` every
    dispatch is handed to a worker thread, about 1.7 us on a busy machine, which a chain
    of FFI calls then pays once."""
    runs: list[list[Any]] = []

    def visit(block: Any) -> None:
        current: list[Any] = []
        for operation in block.operations:
            op = operation.operation
            if op.name == "func.call":
                callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
                if callee in dispatched:
                    current.append((op, dispatched[callee]))
                    continue
            elif op.name == "arith.constant":
                continue  # a constant between two calls leaves them one run
            if len(current) > 1:
                runs.append(current)
            current = []
            for region in op.regions:
                for inner in region.blocks:
                    visit(inner)
        if len(current) > 1:
            runs.append(current)

    for operation in list(module.body.operations):
        for region in operation.operation.regions:
            for block in region.blocks:
                visit(block)
    runs = [part for run in runs for part in _within_limits(run) if len(part) > 1]
    first = module.body.operations[0]
    for number, run in enumerate(runs):
        externals: list[Any] = []  # the values the run takes from outside
        calls = []
        for index, (op, signature) in enumerate(run):
            refs: list[Ref] = []
            for value in op.operands:
                ref: Ref | None = next(
                    (
                        ("r", c, j)
                        for c, (earlier, _) in enumerate(run[:index])
                        for j, result in enumerate(earlier.results)
                        if result == value
                    ),
                    None,
                )
                if ref is None:
                    position = next((k for k, v in enumerate(externals) if v == value), None)
                    if position is None:
                        position = len(externals)
                        externals.append(value)
                    ref = ("x", position)
                refs.append(ref)
            calls.append((signature, refs))
        name = f"rw_ffi_run{number}"
        text = _run_definitions(name, f"{name}_call", [str(v.type) for v in externals], calls)
        parsed = ir.Module.parse(text)  # alive while its operations move out
        for new in list(parsed.body.operations):
            new.operation.move_before(first)
        last = run[-1][0]
        old_results = [result for op, _ in run for result in op.results]
        with ir.InsertionPoint(last), last.location:
            call = ir.Operation.create(
                "func.call",
                results=[result.type for result in old_results],
                operands=externals,
                attributes={"callee": ir.FlatSymbolRefAttr.get(f"{name}_call")},
            )
        for old, new in zip(old_results, call.results, strict=True):
            old.replace_all_uses_with(new)
        for op, _ in reversed(run):
            op.erase()


# A parameter of a call in a run: ("x", k) the run's k-th external value, ("r", c, j) the
# j-th result of the run's c-th call.
Ref = tuple


def _definitions(signature: ImportSignature) -> str:
    """The executable and the body of ``@ffi.S``, as MLIR text."""
    refs = [("x", i) for i in range(len(signature.parameters))]
    return _run_definitions(
        EXECUTABLE_PREFIX + signature.name,
        f"{signature.module}.{signature.name}",
        list(signature.parameters),
        [(signature, refs)],
    )


# IREE's compiler takes at most 64 bindings and 64 push constants a dispatch ("dispatch
# requiring 65 bindings exceeds limit of 64"), and its runtime's HAL module 32 bindings
# ("binding count 41 > 32" when the module is loaded); a run stays within both.
MAX_BINDINGS = 32
MAX_CONSTANTS = 60


def _within_limits(run: list[Any]) -> list[list[Any]]:
    """``run`` cut into runs whose dispatch needs no more bindings and push constants than
    IREE allows. A dispatch binds each tensor it takes from outside once and each result
    of its calls (``_run_definitions``); a tensor that an earlier call of the same part
    made is already bound, so a chain of calls costs one binding a call. An 8-byte scalar
    counts as two constants, and every scalar parameter as its own (an upper bound)."""
    parts: list[list[Any]] = [[]]
    outside: list[Any] = []  # the tensors the current part takes from outside
    made: list[Any] = []  # the results of the current part's calls
    constants = 0
    for item in run:
        op, signature = item
        tensors = _distinct(
            [
                value
                for value, type_ in zip(op.operands, signature.parameters, strict=True)
                if type_.startswith("tensor<")
            ]
        )
        more_outside = [v for v in tensors if not _among(v, made) and not _among(v, outside)]
        more_constants = sum(
            2 if dispatch_type(t) in ("i64", "f64") else 1
            for t in signature.parameters
            if not t.startswith("tensor<")
        )
        results = list(op.results)
        bindings = len(outside) + len(made) + len(more_outside) + len(results)
        if parts[-1] and (bindings > MAX_BINDINGS or constants + more_constants > MAX_CONSTANTS):
            parts.append([])
            outside, made, constants = [], [], 0
            more_outside = tensors  # a new part takes all of them from outside
        parts[-1].append(item)
        outside += more_outside
        made += results
        constants += more_constants
    return parts


def _among(value: Any, values: list[Any]) -> bool:
    """Whether ``value`` (an MLIR value: compared with ==, not hashed) is one of ``values``."""
    return any(value == other for other in values)


def _distinct(values: list[Any]) -> list[Any]:
    kept: list[Any] = []
    for value in values:
        if not _among(value, kept):
            kept.append(value)
    return kept


def _run_definitions(
    executable: str,
    function: str,
    externals: list[str],
    calls: list[tuple[ImportSignature, list[Ref]]],
) -> str:
    """One executable that makes ``calls`` in order, each import of the dispatch code, and
    a private function ``@function`` that dispatches it: it takes the values the calls take
    from outside (``externals``, their types) and returns every result of every call."""
    results = [t for signature, _ in calls for t in signature.results]
    arguments = ", ".join(f"%a{i}: {t}" for i, t in enumerate(externals))
    widen = [
        f"  %w{i} = {WIDENED[t]} %a{i} : {t} to i32"
        for i, t in enumerate(externals)
        if t in WIDENED
    ]
    operands = ", ".join(f"%w{i}" if t in WIDENED else f"%a{i}" for i, t in enumerate(externals))
    passed = [dispatch_type(t) for t in externals]
    result_list = ", ".join(results)
    values = ["%r"] if len(results) == 1 else [f"%r#{i}" for i in range(len(results))]
    count = "" if len(results) == 1 else f":{len(results)}"
    # The workgroup function: bindings (tensors) and values (scalars), then the results.
    inner_arguments = [
        f"%p{i}: {'!stream.binding' if t.startswith('tensor<') else t}"
        for i, t in enumerate(passed)
    ] + [f"%q{j}: !stream.binding" for j in range(len(results))]
    body: list[str] = ["%c0 = arith.constant 0 : index"]
    unpacked: dict[str, tuple[str, str]] = {}  # binding -> (base value, its type)

    def unpack(binding: str, type_: str) -> None:
        tensor = parse_tensor(type_)
        assert tensor is not None
        size = 1
        for dim in tensor.dims:
            size *= dim or 1
        body.extend(binding_base(binding, size, tensor.element))
        unpacked[binding] = (f"%b{binding}", f"memref<{tensor.element}>")

    for i, type_ in enumerate(passed):
        if type_.startswith("tensor<"):
            unpack(f"p{i}", type_)
    for j, type_ in enumerate(results):
        unpack(f"q{j}", type_)
    first_result = []  # per call, the index of its first result among all results
    for index in range(len(calls)):
        first_result.append(sum(len(s.results) for s, _ in calls[:index]))
    declarations: dict[str, str] = {}  # import symbol -> its argument types
    for index, (signature, refs) in enumerate(calls):
        call_values: list[str] = []
        call_types: list[str] = []
        bindings: list[str | None] = []
        for ref, type_ in zip(refs, signature.parameters, strict=True):
            if ref[0] == "r":
                binding = f"q{first_result[ref[1]] + ref[2]}"
            elif type_.startswith("tensor<"):
                binding = f"p{ref[1]}"
            else:
                bindings.append(None)
                call_values.append(f"%p{ref[1]}")
                call_types.append(dispatch_type(type_))
                continue
            bindings.append(binding)
            base, base_type = unpacked[binding]
            call_values.extend([base, f"%o{binding}"])
            call_types.extend([base_type, "index"])
        for j in range(len(signature.results)):
            binding = f"q{first_result[index] + j}"
            base, base_type = unpacked[binding]
            call_values.extend([base, f"%o{binding}"])
            call_types.extend([base_type, "index"])
        symbol = import_symbol(signature)
        types = ", ".join(call_types)
        declarations[symbol] = types
        body.append(f"func.call @{symbol}({', '.join(call_values)}) : ({types}) -> ()")
    lines = [
        *executable_lines(executable, declarations, ", ".join(inner_arguments), body),
        f"func.func private @{function}({arguments}) -> ({result_list}) {{",
        *widen,
        f"  %r{count} = flow.dispatch @{executable}::@{executable}({operands}) : "
        f"({', '.join(passed)}) -> ({result_list})",
        f"  return {', '.join(values)} : {result_list}",
        "}",
    ]
    return "\n".join(lines)
