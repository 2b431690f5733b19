"""The C API of a compiled model: a header per model (``--header``) and the code behind it.

Every exported name starts with the prefix P (``--prefix``; by default the module's name,
``jit_rms_norm_``). For each public function F of the module (an ``Entry``):

- ``int P<F>(const P<t>_<r>d *arg, ..., P<t>_<r>d *result, ...)``: the arguments and the
  caller's result buffers, each a typed view ``{data, dims[rank]}`` of a row-major
  contiguous buffer; 0 or a status (``P_STATUS_*``), the message then in ``P<last_error>()``.
  Everything is checked before the compiled code runs: null pointers, every static
  dimension against the declared type, dynamic ones not negative and equal where JAX
  exported them as one dimension variable (``Entry.shared_sizes``), jax's shape
  assertions (``Entry.check_symbol``, ``shape_checks.py``); a result's dynamic
  dimensions are checked once they are known, before anything is written.
- ``int P<F>_alloc(...)``: the same with results allocated, each freed with ``P<free>``.
- ``P<F>_num_arguments()``, ``P<F>_num_results()``, ``P<F>_argument(i)``, ``P<F>_result(i)``:
  what the function takes and gives (JAX's name, MLIR dtype, rank, dims; -1 for a dynamic
  dimension).
- ``P<F>_workspace_size()`` and ``P<set_workspace>(buffer, size)``: every allocation of a
  call cut from the caller's memory (``abi/rewriter_workspace.c``), so that a loop of
  calls allocates nothing.

With ``--ffi-bridge`` also ``P<register_handler>(target, handler)`` and
``P<required_target>(i)``. The code is C11 (``c_api_source``), compiled into the library;
the header is C99 and C++ (``c_api_header``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..plan.c_names import c_name_part, name_problem
from ..syntax.element_types import BY_MLIR
from .bridge import BRIDGE_EXPORTS
from .entries import METADATA_SYMBOL, Entry, TensorSpec, under_prefix
from .prefixes import default_prefix as default_prefix  # still importable from here
from .prefixes import prefix_problem
from .toolchain import ToolchainError


class ApiError(ToolchainError):
    """A prefix or a name that cannot be written into C."""


@dataclass(frozen=True)
class Api:
    prefix: str
    entries: tuple[Entry, ...]
    bridge: bool
    link_note: str  # what a program that links the library needs besides it
    origin: str  # where the module came from, for the header's first comment
    # For each function, JAX's dimension variables that several argument dimensions share:
    # (name, ((argument, dimension), ...)); their sizes must agree (``Entry.shared_sizes``).
    agreements: tuple[tuple[str, tuple[tuple[str, tuple[tuple[int, int], ...]], ...]], ...] = ()

    def agreements_of(self, entry: Entry) -> tuple[tuple[str, tuple[tuple[int, int], ...]], ...]:
        return next((groups for name, groups in self.agreements if name == entry.name), ())

    @property
    def macro(self) -> str:
        return self.prefix.upper()

    def function(self, entry: Entry) -> str:
        return self.prefix + c_name_part(entry.name)

    def view_type(self, spec: TensorSpec) -> str:
        return f"{self.prefix}{_element(spec.element).descriptor}_{len(spec.shape)}d"

    def exports(self) -> list[str]:
        """Every symbol the library exports for this API."""
        names = [self.prefix + "last_error", self.prefix + "free"]
        names += [self.prefix + "set_workspace", self.prefix + "workspace_misses"]
        if self.bridge:
            names += [self.prefix + "register_handler", self.prefix + "required_target"]
        for entry in self.entries:
            function = self.function(entry)
            names += [function, function + "_alloc"]
            names += [function + s for s in ("_num_arguments", "_num_results")]
            names += [function + "_argument", function + "_result", function + "_workspace_size"]
        return names

    def loader_symbols(self) -> dict[str, str]:
        """What ``rewriter.compile.load`` reads in a shared object, each name with the
        prefix in front of it (``under_prefix``), so that a shared object with the C API
        exports nothing but names under its prefix."""
        names = [METADATA_SYMBOL, *(entry.c_symbol for entry in self.entries)]
        names += [entry.check_symbol for entry in self.entries if entry.check_symbol]
        if self.bridge:
            names += BRIDGE_EXPORTS
        return {name: under_prefix(self.prefix, name) for name in names}


def make_api(
    entries: list[Entry], prefix: str, *, bridge: bool, link_note: str, origin: str
) -> Api:
    """The API of ``entries`` with ``prefix``; an ApiError when a name it would write is
    taken twice or cannot be a C name."""
    problem = prefix_problem(prefix)
    if problem:
        raise ApiError(problem)
    api = Api(prefix, tuple(entries), bridge, link_note, origin)
    unsupported = {
        spec.element
        for entry in entries
        for spec in (*entry.inputs, *entry.results)
        if spec.element not in BY_MLIR
    }
    if unsupported:
        raise ApiError(f"the C API has no type for {', '.join(sorted(unsupported))}")
    names = [*api.exports(), *api.loader_symbols().values()]
    names += [api.macro + "STATUS_OK", api.macro + "H", api.prefix + "tensor_info"]
    names += {api.view_type(spec) for e in entries for spec in (*e.inputs, *e.results)}
    seen: set[str] = set()
    for name in names:
        problem = name_problem(name)
        if problem:
            raise ApiError(f"the C API would declare {name}, which {problem}")
        if name in seen:
            raise ApiError(
                f"the C API would declare {name} twice: two public functions' names give "
                "the same C name; rename one, or compile without --header and --prefix"
            )
        seen.add(name)
    return api


def _element(element: str):
    return BY_MLIR[element]


def _c_element(api: Api, element: str) -> str:
    row = _element(element)
    if row.is_complex:
        return f"{api.prefix}{row.descriptor}"
    return row.c_element


def _comment_text(text: str) -> str:
    """``text`` quoted for a C comment: no comment end or start, no trigraph, printable."""
    quoted = "".join(
        char if char.isprintable() and ord(char) < 128 else f"\\u{ord(char):04x}" for char in text
    )
    return '"' + quoted.replace("*/", "* /").replace("/*", "/ *").replace("??", "? ?") + '"'


def _c_string(text: str) -> str:
    """``text`` as a C string literal (UTF-8, every byte outside a safe set escaped)."""
    safe = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.:,[]()<>")
    return '"' + "".join(chr(b) if chr(b) in safe else f"\\{b:03o}" for b in text.encode()) + '"'


def _shape_text(spec: TensorSpec) -> str:
    dims = ",".join("?" if d < 0 else str(d) for d in spec.shape)
    return f"{spec.element}[{dims}]"


def _parameters(api: Api, entry: Entry) -> list[str]:
    inputs = [
        f"const {api.view_type(spec)} *{_parameter_name(entry, 'argument', i)}"
        for i, spec in enumerate(entry.inputs)
    ]
    results = [
        f"{api.view_type(spec)} *{_parameter_name(entry, 'result', i)}"
        for i, spec in enumerate(entry.results)
    ]
    return inputs + results or ["void"]


def _parameter_name(entry: Entry, kind: str, index: int) -> str:
    """``arg0``, ``result0``: parameter names need no JAX name (those go in comments)."""
    return f"{'arg' if kind == 'argument' else 'result'}{index}"


def c_api_header(api: Api) -> str:
    """The header: C99 and C++17, self-contained (standard headers only)."""
    p, m = api.prefix, api.macro
    guard = f"{m}H"
    lines = [
        f"/* {p}: the C API of a model compiled by python -m rewriter.compile from",
        f" * {_comment_text(api.origin)}.",
        " *",
        " * Each function takes its arguments and the caller's result buffers as typed",
        " * views {data, dims}: row-major contiguous buffers of dims' sizes.  It returns",
        f" * {m}STATUS_OK, or another status with {p}last_error() saying why; it",
        " * checks every pointer and dimension against the declared types, and the",
        " * export's shape constraints, first and never reads or writes past the dims",
        " * it is given.  The _alloc variant",
        f" * allocates the results instead; free each result's data with {p}free().",
        f" * Link: {api.link_note}.",
        " * Calls from several threads are safe; the last error is kept per thread.",
        " */",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
        "#include <stdbool.h>",
        "#include <stdint.h>",
        "",
        "#ifdef __cplusplus",
        'extern "C" {',
        "#endif",
        "",
        f"#define {m}STATUS_OK 0",
        f"#define {m}STATUS_INVALID_ARGUMENT 1 /* a null pointer, a wrong size */",
        f"#define {m}STATUS_HANDLER_ERROR 2 /* an XLA FFI handler failed */",
        f"#define {m}STATUS_OUT_OF_MEMORY 3",
        "",
        "/* What a function takes or gives: JAX's name (or NULL), the MLIR element type",
        ' * ("f32", "i32", "ui8", "i1", ...), the rank and the dims (-1: dynamic). */',
        f"typedef struct {p}tensor_info {{",
        "    const char *name;",
        "    const char *dtype;",
        "    int rank;",
        "    const int64_t *dims;",
        f"}} {p}tensor_info;",
        "",
    ]
    complex_types = sorted(
        {
            spec.element
            for e in api.entries
            for spec in (*e.inputs, *e.results)
            if _element(spec.element).is_complex
        }
    )
    for element in complex_types:
        part = "float" if element == "complex<f32>" else "double"
        name = _c_element(api, element)
        lines += [f"typedef struct {name} {{ {part} real, imag; }} {name};", ""]
    views = {}
    for entry in api.entries:
        for spec in (*entry.inputs, *entry.results):
            views[api.view_type(spec)] = spec
    for name in sorted(views):
        spec = views[name]
        rank = len(spec.shape)
        dims = f" int64_t dims[{rank}];" if rank else ""
        lines.append(
            f"typedef struct {name} {{ {_c_element(api, spec.element)} *data;{dims} }} {name};"
        )
    lines += [
        "",
        "/* The message of this thread's last failed call, or NULL after a call that",
        " * succeeded. */",
        f"const char *{p}last_error(void);",
        "",
        "/* Frees a result's data that an _alloc function gave (NULL: nothing). */",
        f"void {p}free(void *data);",
        "",
        "/* Gives this thread's calls a workspace: from then on, every buffer a call needs",
        " * (temporaries, results before they are copied into the caller's, the FFI",
        " * bridge's) is cut from it, and a call allocates nothing (NULL: malloc again).",
        " * Its size: the _workspace_size() of the functions after a call at set-up.",
        " * The memory must stay valid, and serve no other thread, until it is replaced. */",
        f"int {p}set_workspace(void *buffer, int64_t size);",
        "",
        "/* How many buffers this thread's calls took from malloc because the workspace",
        " * was too small (0 when it always sufficed). */",
        f"int64_t {p}workspace_misses(void);",
        "",
    ]
    if api.bridge:
        lines += [
            "/* XLA FFI handlers (XLA_FFI_DEFINE_HANDLER_SYMBOL) serve the module's",
            f" * targets: register one per target {p}required_target(i) names (NULL past",
            " * the last) before the first call; a call whose target has none fails. */",
            "struct XLA_FFI_Error;",
            "struct XLA_FFI_CallFrame;",
            f"int {p}register_handler(const char *target,",
            "    struct XLA_FFI_Error *(*handler)(struct XLA_FFI_CallFrame *));",
            f"const char *{p}required_target(int64_t index);",
            "",
        ]
    for entry in api.entries:
        function = api.function(entry)
        shown = _comment_text(entry.name)[1:-1]
        lines.append(f"/* {function}: the module's public function @{shown}")
        for i, spec in enumerate(entry.inputs):
            jax = entry.input_names[i] if i < len(entry.input_names) else None
            jax_name = f" (JAX: {_comment_text(jax)})" if jax else ""
            lines.append(f" *   arg{i}: {_shape_text(spec)}{jax_name}")
        for i, spec in enumerate(entry.results):
            jax = entry.result_names[i] if i < len(entry.result_names) else None
            jax_name = f" (JAX: {_comment_text(jax)})" if jax else ""
            lines.append(f" *   result{i}: {_shape_text(spec)}{jax_name}")
        for variable, places in api.agreements_of(entry):
            where = ", ".join(f"arg{a} dimension {d}" for a, d in places)
            lines.append(f" *   {where}: JAX's {_comment_text(variable)}, checked to agree")
        lines.append(" */")
        parameters = ", ".join(_parameters(api, entry))
        lines += [
            f"int {function}({parameters});",
            f"int {function}_alloc({parameters});",
            f"int {function}_num_arguments(void);",
            f"int {function}_num_results(void);",
            f"const {p}tensor_info *{function}_argument(int index); /* NULL: no such */",
            f"const {p}tensor_info *{function}_result(int index);",
            f"/* The largest workspace a call of {function} has needed so far, on any",
            " * thread (0 before the first call). */",
            f"int64_t {function}_workspace_size(void);",
            "",
        ]
    lines += ["#ifdef __cplusplus", "}", "#endif", "", f"#endif /* {guard} */", ""]
    return "\n".join(lines)


def c_api_source(api: Api, header_name: str) -> str:
    """The C11 code behind the header ``header_name`` (included by that name), with the
    helpers of ``abi/rewriter_c_api_support.h`` (``-I`` ``rewriter.abi.bridge_dir()``)."""
    p, m = api.prefix, api.macro
    out = [
        "/* Generated by python -m rewriter.compile: the C API of the model (c_api.py). */",
        f'#include "{header_name}"',
        '#include "rewriter_c_api_support.h"',
        "",
    ]
    ranks = sorted({len(spec.shape) for e in api.entries for spec in (*e.inputs, *e.results)} - {0})
    for rank in ranks:
        out.append(f"RW_DESCRIPTOR({rank});")
    out += [
        "",
        f"const char *{p}last_error(void) {{ return rw_last_error(); }}",
        f"void {p}free(void *data) {{ free(data); }}",
        "",
        f"int {p}set_workspace(void *buffer, int64_t size)",
        "{",
        "    rw_clear();",
        "    if (buffer && size <= 0)",
        f'        return rw_fail({m}STATUS_INVALID_ARGUMENT, "{p}set_workspace: size %lld",',
        "                       (long long)size);",
        "    rw_ws_set(buffer, buffer ? (size_t)size : 0);",
        f"    return {m}STATUS_OK;",
        "}",
        "",
        f"int64_t {p}workspace_misses(void) {{ return rw_ws_misses(); }}",
        "",
    ]
    if api.bridge:
        out += [
            "const char *rw_ffi_last_error(void);",
            "void rw_ffi_clear_error(void);",
            "int rw_ffi_register_handler(const char *target, void *handler);",
            "const char *rw_ffi_required_target(int64_t index);",
            "",
            f"int {p}register_handler(const char *target,",
            "    struct XLA_FFI_Error *(*handler)(struct XLA_FFI_CallFrame *))",
            "{",
            "    rw_clear();",
            f"    if (!target || !handler) return rw_fail({m}STATUS_INVALID_ARGUMENT,",
            f'        "{p}register_handler: the target or the handler is NULL");',
            "    if (rw_ffi_register_handler(target, (void *)handler) != 0) {",
            f'        int status = rw_fail({m}STATUS_INVALID_ARGUMENT, "%s",',
            "                             rw_ffi_last_error());",
            "        rw_ffi_clear_error();",
            "        return status;",
            "    }",
            f"    return {m}STATUS_OK;",
            "}",
            "",
            f"const char *{p}required_target(int64_t index)",
            "{",
            "    return rw_ffi_required_target(index);",
            "}",
            "",
        ]
    for number, entry in enumerate(api.entries):
        out += _entry_source(api, entry, number)
    return "\n".join(out)


def _quoted_name(entry: Entry, kind: str, index: int) -> str:
    names = entry.input_names if kind == "argument" else entry.result_names
    name = names[index] if index < len(names) else None
    return _c_string(f" ('{name}')") if name is not None else '""'


def _entry_source(api: Api, entry: Entry, number: int) -> list[str]:
    p, m = api.prefix, api.macro
    function = api.function(entry)
    label = _c_string(entry.name)
    out = []
    specs = [("argument", i, s) for i, s in enumerate(entry.inputs)]
    specs += [("result", i, s) for i, s in enumerate(entry.results)]
    for kind, index, spec in specs:
        rank = len(spec.shape)
        dims = ", ".join(str(d) for d in spec.shape) if rank else "0"
        names = entry.input_names if kind == "argument" else entry.result_names
        name = names[index] if index < len(names) else None
        out += [
            f"static const int64_t rw_{number}_{kind}{index}_dims[] = {{{dims}}};",
            f"static const {p}tensor_info rw_{number}_{kind}{index}_info = {{",
            f"    {_c_string(name) if name is not None else 'NULL'}, "
            f"{_c_string(spec.element)}, {rank}, rw_{number}_{kind}{index}_dims}};",
        ]
    for kind, items in (("argument", entry.inputs), ("result", entry.results)):
        plural = "arguments" if kind == "argument" else "results"
        infos = ", ".join(f"&rw_{number}_{kind}{i}_info" for i in range(len(items)))
        out += [
            f"int {function}_num_{plural}(void) {{ return {len(items)}; }}",
            f"const {p}tensor_info *{function}_{kind}(int index)",
            "{",
        ]
        if items:
            out += [
                f"    static const {p}tensor_info *const all[] = {{{infos}}};",
                f"    return index >= 0 && index < {len(items)} ? all[index] : NULL;",
            ]
        else:
            out += ["    (void)index;", "    return NULL;"]
        out += ["}", ""]
    out += [
        f"static _Atomic int64_t rw_{number}_workspace;",
        f"int64_t {function}_workspace_size(void)",
        f"{{ return atomic_load(&rw_{number}_workspace); }}",
        "",
    ]
    results = len(entry.results)
    raw_parameters = ["void *"] * ((1 if results else 0) + len(entry.inputs))
    parameters = [x for x in _parameters(api, entry) if x != "void"]
    out += [
        "/* The compiled entry, by its symbol: MLIR's names may hold . or $. */",
        f"void rw_{number}_entry({', '.join(raw_parameters) or 'void'}) "
        f"__asm__({_c_string(entry.c_symbol)});",
        "",
    ]
    if entry.check_symbol:
        messages = ", ".join(_c_string(message) for message in entry.check_messages)
        checked = ["int64_t *", *raw_parameters[1 if results else 0 :]]
        out += [
            "/* jax's shape assertions, checked before the entry runs (shape_checks.py) */",
            f"void rw_{number}_check({', '.join(checked)}) "
            f"__asm__({_c_string(entry.check_symbol)});",
            f"static const char *const rw_{number}_check_messages[] = {{{messages}}};",
            "",
        ]
    out += [
        f"static int rw_{number}_run({', '.join([*parameters, 'int allocate'])})",
        "{",
        "    int status = 0;",
    ]
    if results:
        fields = " ".join(f"rw_desc_{len(s.shape)} r{i};" for i, s in enumerate(entry.results))
        out += [
            f"    struct {{ {fields} }} out;",
            f"    void *allocations[{results}]; /* what the compiled code allocated */",
            f"    int given[{results}] = {{0}}; /* handed to the caller as it is */",
            "    int i, j;",
        ]
    for i, spec in enumerate(entry.inputs):
        out.append(f"    rw_desc_{len(spec.shape)} in{i};")
    out.append("    rw_clear();")
    # every pointer and every known dimension, before anything runs
    for kind, index, spec in specs:
        variable = _parameter_name(entry, kind, index)
        rank = len(spec.shape)
        quoted = _quoted_name(entry, kind, index)
        condition = "" if kind == "argument" else "!allocate && "
        out += [
            f"    if (!{variable})",
            f'        return rw_fail({m}STATUS_INVALID_ARGUMENT, "%s: {kind} {index}%s is NULL", '
            f"{label}, {quoted});",
        ]
        if rank:
            out += [
                f'    if ({condition}rw_check_dims({label}, "{kind}", {index}, {quoted}, '
                f'{rank}, {variable}->dims, rw_{number}_{kind}{index}_dims, "declared") != 0)',
                f"        return {m}STATUS_INVALID_ARGUMENT;",
            ]
        count = f"rw_count({rank}, {variable}->dims)" if rank else "1"
        out += [
            f"    if ({condition}!{variable}->data && {count} != 0)",
            f"        return rw_fail({m}STATUS_INVALID_ARGUMENT, "
            f'"%s: {kind} {index}%s has no data", {label}, {quoted});',
        ]
    for variable, places in api.agreements_of(entry):
        (first, first_dim), *others = places
        for other, other_dim in others:
            out += [
                f"    if (arg{other}->dims[{other_dim}] != arg{first}->dims[{first_dim}])",
                f'        return rw_fail({m}STATUS_INVALID_ARGUMENT, "%s: argument {other}%s '
                f"dimension {other_dim} is %lld, argument {first}%s dimension {first_dim} is "
                f"%lld: both are JAX's dimension variable %s\", {label}, "
                f"{_quoted_name(entry, 'argument', other)}, "
                f"(long long)arg{other}->dims[{other_dim}], "
                f"{_quoted_name(entry, 'argument', first)}, "
                f"(long long)arg{first}->dims[{first_dim}], {_c_string(repr(variable))});",
            ]
    for i, spec in enumerate(entry.inputs):
        rank = len(spec.shape)
        if rank:
            out.append(
                f"    rw_describe(&in{i}.allocated, &in{i}.aligned, &in{i}.offset, {rank}, "
                f"in{i}.sizes, in{i}.strides, arg{i}->data, arg{i}->dims);"
            )
        else:
            out.append(
                f"    in{i}.allocated = in{i}.aligned = arg{i}->data ? (void *)arg{i}->data "
                f": (void *)rw_empty;"
            )
            out.append(f"    in{i}.offset = 0;")
    if entry.check_symbol:
        given = 1 + entry.check_values  # the assertion's number, then its message's
        described = "".join(f", &in{i}" for i in range(len(entry.inputs)))
        out += [
            "    {",
            f"        int64_t checked[{given}];",
            f"        rw_{number}_check(checked{described});",
            "        if (checked[0] > 0)",
            f"            return rw_fail_shape_check({label}, "
            f"rw_{number}_check_messages[checked[0] - 1], checked + 1, {given - 1});",
            "    }",
        ]
    if api.bridge:
        out.append("    rw_ffi_clear_error();")
    out.append("    rw_ws_begin();")
    call_arguments = (["&out"] if results else []) + [f"&in{i}" for i in range(len(entry.inputs))]
    out.append(f"    rw_{number}_entry({', '.join(call_arguments)});")
    for i in range(results):
        out.append(f"    allocations[{i}] = out.r{i}.allocated;")
    if api.bridge:
        out += [
            "    if (rw_ffi_last_error()) {",
            f'        status = rw_fail({m}STATUS_HANDLER_ERROR, "%s: %s", {label}, '
            "rw_ffi_last_error());",
            "        rw_ffi_clear_error();",
            "    }",
        ]
    for i, spec in enumerate(entry.results):
        rank = len(spec.shape)
        variable = f"result{i}"
        element = _element(spec.element).size
        quoted = _quoted_name(entry, "result", i)
        sizes = f"out.r{i}.sizes" if rank else "NULL"
        strides = f"out.r{i}.strides" if rank else "NULL"
        out += [
            "    if (status == 0) {",
            f"        const char *from = (const char *)out.r{i}.aligned + out.r{i}.offset * "
            f"{element};",
            f"        int64_t count = rw_count({rank}, {sizes});",
            "        if (allocate) {",
            "            int shared = 0;",
            f"            for (j = 0; j < {results}; ++j)",
            f"                shared |= j != {i} && allocations[j] == allocations[{i}];",
            f"            if (!shared && !rw_ws_owns(out.r{i}.allocated) && "
            f"out.r{i}.allocated == out.r{i}.aligned && "
            f"out.r{i}.offset == 0 && rw_contiguous({rank}, {sizes}, {strides})) {{",
            f"                {variable}->data = out.r{i}.aligned;",
            f"                given[{i}] = 1;",
            "            } else {",
            f"                void *copy = malloc(count > 0 ? (size_t)count * {element} : 1);",
            "                if (!copy) {",
            f"                    status = rw_fail({m}STATUS_OUT_OF_MEMORY, "
            f'"%s: no memory for result {i}", {label});',
            "                } else {",
            f"                    rw_gather((char *)copy, from, {rank}, {sizes}, {strides}, "
            f"{element});",
            f"                    {variable}->data = copy;",
            "                }",
            "            }",
        ]
        if rank:
            out.append(
                f"            for (j = 0; j < {rank}; ++j) {variable}->dims[j] = out.r{i}.sizes[j];"
            )
        out.append("        } else {")
        if rank:
            out += [
                f'            if (rw_check_dims({label}, "result", {i}, {quoted}, {rank}, '
                f'{variable}->dims, out.r{i}.sizes, "computed") != 0)',
                f"                status = {m}STATUS_INVALID_ARGUMENT;",
                "            else",
                f"                rw_gather((char *){variable}->data, from, {rank}, {sizes}, "
                f"{strides}, {element});",
            ]
        else:
            out.append(f"            memcpy((void *){variable}->data, from, {element});")
        out += ["        }", "    }"]
    if results:
        out += [
            f"    for (i = 0; i < {results}; ++i) {{",
            "        int earlier = 0;",
            "        for (j = 0; j < i; ++j) earlier |= allocations[j] == allocations[i];",
            "        if (!given[i] && !earlier) rw_ws_free(allocations[i]);",
            "    }",
            "    if (status != 0 && allocate) { /* a failed _alloc call gives nothing */",
        ]
        for i in range(results):
            out.append(f"        free(result{i}->data);")
            out.append(f"        result{i}->data = NULL;")
        out.append("    }")
    out += [
        f"    rw_largest(&rw_{number}_workspace, (int64_t)rw_ws_end());",
        "    return status;",
        "}",
        "",
    ]
    passed = [_parameter_name(entry, "argument", i) for i in range(len(entry.inputs))]
    passed += [_parameter_name(entry, "result", i) for i in range(len(entry.results))]
    signature = ", ".join(_parameters(api, entry))
    out += [
        f"int {function}({signature}) {{ return rw_{number}_run({', '.join([*passed, '0'])}); }}",
        "",
        f"int {function}_alloc({signature})",
        "{",
    ]
    for i in range(len(entry.results)):
        out.append(f"    if (result{i}) result{i}->data = NULL;")
    out += [f"    return rw_{number}_run({', '.join([*passed, '1'])});", "}", ""]
    return out
