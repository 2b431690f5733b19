"""C functions that serve the executable imports of FFI calls compiled into dispatches.

``dispatches.py`` makes the code of each such dispatch call ``rw_ffi_dispatch_S(params,
context, reserved)``, IREE's calling convention for executable imports: ``params`` points
to a struct of the call's arguments in order, as the code packs them (natural C
alignment): the base pointer and element offset of each tensor binding, each scalar, then
the base and offset of each result binding. The function written here turns them into
the memref descriptors of the C contract (the shapes are static: the tensor types), the
results' on their bindings too, and calls the import's adapter ``_mlir_ciface_S`` of the FFI
bridge in contract order, the bridge told (``rw_ffi_results_given``) to hand the handler
those buffers, after checking them against the results' shapes, instead of allocating.

A failing handler cannot raise from a worker thread: its message is kept as the library's
first error (``rw_dispatch_take_error``) and the import returns nonzero, which fails the
dispatch and so the call; ``load`` then raises ``HandlerError`` with that message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..emit.ffi_adapters import Extern, scalar_c_type
from ..plan.ffi_facts import leaf_paths
from .dispatches import SCALAR_C_TYPES, dispatch_type, import_symbol
from .signatures import ImportSignature
from .values import dtype_of, tensor_type

TAKE_ERROR = "rw_dispatch_take_error"
CDEF = f"int {TAKE_ERROR}(char *out, int64_t capacity);"

_PRELUDE = r"""/* Executable imports of FFI calls compiled into dispatches (rewriter.iree). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *rw_ffi_last_error(void);
void rw_ffi_clear_error(void);
void rw_ffi_results_given(int given);

static pthread_mutex_t rw_dispatch_lock = PTHREAD_MUTEX_INITIALIZER;
static char rw_dispatch_error[4096];
static int rw_dispatch_failed;

/* The first failure wins: later ones are its consequences. */
static int rw_dispatch_fail(const char *message) {
  pthread_mutex_lock(&rw_dispatch_lock);
  if (!rw_dispatch_failed) {
    rw_dispatch_failed = 1;
    snprintf(rw_dispatch_error, sizeof rw_dispatch_error, "%s", message);
  }
  pthread_mutex_unlock(&rw_dispatch_lock);
  return 1;
}

/* The first failure since the last call, copied into `out`: 1 if there was one. */
int rw_dispatch_take_error(char *out, int64_t capacity) {
  pthread_mutex_lock(&rw_dispatch_lock);
  int failed = rw_dispatch_failed;
  if (failed && capacity > 0) snprintf(out, (size_t)capacity, "%s", rw_dispatch_error);
  rw_dispatch_failed = 0;
  pthread_mutex_unlock(&rw_dispatch_lock);
  return failed;
}

"""


def dispatch_source(signatures: Sequence[ImportSignature], externs: Mapping[str, Extern]) -> str:
    """The C source of the executable imports of ``signatures`` (their adapters are those of
    ``externs``, by import name, compiled alongside)."""
    return _PRELUDE + "\n".join(_function(s, externs[s.name]) for s in signatures)


def exported_symbols(signatures: Sequence[ImportSignature]) -> tuple[str, ...]:
    return (TAKE_ERROR, *(import_symbol(s) for s in signatures))


def _descriptor_type(rank: int) -> str:
    arrays = f" int64_t sizes_and_strides[{2 * rank}];" if rank else ""
    return f"struct {{ void *allocated; void *aligned; int64_t offset;{arrays} }}"


def _function(signature: ImportSignature, extern: Extern) -> str:
    symbol = import_symbol(signature)
    name = signature.name
    fields: list[str] = []
    for index, type_ in enumerate(signature.parameters):
        if type_.startswith("tensor<"):
            fields += [f"char *p{index};", f"int64_t o{index};"]
        else:
            fields.append(f"{SCALAR_C_TYPES[dispatch_type(type_)]} p{index};")
    for index in range(len(signature.results)):
        fields += [f"char *r{index};", f"int64_t k{index};"]
    lines = [
        f"/* ffi.{name}: XLA FFI target {extern.facts.target} */",
        f"typedef struct {{ {' '.join(fields)} }} {symbol}_params;",
    ]
    # The adapter's prototype, as the FFI bridge compiled it (descriptors by pointer).
    contract = signature.contract_types()
    position = {index: place for place, index in enumerate(signature.order)}  # contract->import
    leaves = [leaf for _, leaf in leaf_paths(extern.facts.attributes)]
    prototype = ["void *"] if signature.results else []
    arguments = ["&results"] if signature.results else []
    body: list[str] = []
    for index, type_ in enumerate(contract):
        place = position[index]
        if type_.startswith("tensor<"):
            dims, element = tensor_type(type_)
            size = dtype_of(element).itemsize
            strides = _row_major(dims)
            values = ", ".join(map(str, [*dims, *strides]))
            body.append(
                f"  {_descriptor_type(len(dims))} d{index} = {{p->p{place} + p->o{place} * {size}, "
                f"p->p{place} + p->o{place} * {size}, 0{', {' + values + '}' if dims else ''}}};"
            )
            prototype.append("void *")
            arguments.append(f"&d{index}")
        else:
            leaf = leaves[index - signature.operand_count]
            c_type = scalar_c_type(leaf.dtype)
            prototype.append(c_type)
            arguments.append(f"({c_type})p->p{place}")
    results = [tensor_type(t) for t in signature.results]
    members = " ".join(f"{_descriptor_type(len(d))} r{j};" for j, (d, _) in enumerate(results))
    initial = []
    for j, (dims, element) in enumerate(results):
        size = dtype_of(element).itemsize
        pointer = f"p->r{j} + p->k{j} * {size}"
        values = ", ".join(map(str, [*dims, *_row_major(dims)]))
        initial.append(f"{{{pointer}, {pointer}, 0{', {' + values + '}' if dims else ''}}}")
    lines += [
        f"void _mlir_ciface_{name}({', '.join(prototype) or 'void'});",
        f"int {symbol}(void *params, void *context, void *reserved) {{",
        "  (void)context;",
        "  (void)reserved;",
        f"  const {symbol}_params *p = params;",
        *body,
        f"  struct {{ {members} }} results = {{{', '.join(initial)}}};",
        "  rw_ffi_clear_error();",
        "  rw_ffi_results_given(1); /* the handler writes into the result bindings */",
        f"  _mlir_ciface_{name}({', '.join(arguments)});",
        "  rw_ffi_results_given(0);",
        "  const char *error = rw_ffi_last_error();",
        "  int failed = error ? rw_dispatch_fail(error) : 0;",
        "  rw_ffi_clear_error();",
    ]
    lines += ["  return failed;", "}", ""]
    return "\n".join(lines)


def _row_major(dims: Sequence[int | None]) -> list[int]:
    strides, stride = [], 1
    for size in reversed(dims):
        strides.append(stride)
        stride *= size or 1
    return strides[::-1]
