"""Call a compiled module from Python: numpy arrays in, numpy arrays out.

Descriptors follow MLIR's C interface (abi/README.md): for each memref a struct
``{allocated, aligned, offset, sizes[N], strides[N]}`` passed by pointer; results come back
through a pointer passed first (a struct of descriptors when there are several). Result
buffers belong to the caller: they are copied into numpy arrays and freed.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..syntax.element_types import BY_MLIR
from .arguments import check_count, check_shared_sizes, convert, parameters
from .bridge import BRIDGE_CDEF, Bridge, register_handlers
from .elf_symbols import exported_names, needed_libraries
from .entries import METADATA_SYMBOL, Entry, entries_from_json, under_prefix
from .extras import needs
from .handlers import HandlerError
from .heap import keep_freed_memory
from .load_errors import LoadError
from .openblas_core import name_openblas_core
from .shape_checks import failed_check


def dtype_of(element: str) -> np.dtype:
    """The numpy dtype of an MLIR element type (rewriter/syntax/element_types.py)."""
    row = BY_MLIR.get(element)
    if row is None:
        raise TypeError(f"no numpy type for MLIR element type {element}")
    return row.dtype


class CompiledModule:
    """The entry points of a compiled module, as attributes and by name."""

    def __init__(self, functions: dict[str, Callable[..., object]], keep_alive: list[object]):
        self.functions = functions
        self._keep_alive = keep_alive  # the loaded libraries must outlive the callables

    def __getattr__(self, name: str) -> Callable[..., object]:
        try:  # through __dict__: no recursion before `functions` is set
            return self.__dict__["functions"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, name: str) -> Callable[..., object]:
        return self.functions[name]

    def __call__(self, *arrays):
        return self.functions["main"](*arrays)


def load(
    path: str | Path,
    *,
    kernels: Sequence[str | Path] = (),
    ffi_handlers: Mapping[str, object] | str | None = None,
) -> CompiledModule:
    """Load the shared object at ``path``; ``kernels`` are loaded first, globally, so that
    the ``_mlir_ciface_*`` symbols the module calls resolve to them.

    A module compiled with ``--ffi-bridge`` calls XLA FFI handlers: ``ffi_handlers`` maps
    each target to its handler, as a PyCapsule (what ``jax.ffi.register_ffi_target``
    takes), a ``{"execute": capsule}`` bundle, a ctypes function or an address; targets
    the module does not call are ignored. ``"jaxlib"`` stands for jaxlib's CPU LAPACK
    handlers (``jaxlib_handlers()``). A target without a handler, or a handler that cannot
    be one (``handlers.handler_address``), is a LoadError here; a handler's error is raised
    as HandlerError by the call. The functions check and convert their arguments
    (``arguments.convert``).

    ``path`` and ``kernels`` name files: ``"libmodel.so"`` is ``./libmodel.so``, never a
    library found on the dynamic loader's search path.
    """
    with needs("compile"):
        import cffi

    path = file_path(path)
    needed = [name for file in (path, *map(file_path, kernels)) for name in needed_libraries(file)]
    name_openblas_core(needed)  # before OpenBLAS loads: openblas_core.py
    keep_freed_memory()  # a call's buffers stay mapped for the next: heap.py
    ffi = cffi.FFI()
    libraries = [_load_kernel(ffi, file_path(k)) for k in kernels]
    opened = _path_to_open(path)
    try:
        prefix, probed = _probe_entries(opened, ffi_handlers, shown=path)
        ffi.cdef(_prefixed(f"extern const char {METADATA_SYMBOL}[];", prefix))
        ffi.cdef("void free(void *);")
        ffi.cdef("size_t malloc_usable_size(void *);")
        ffi.cdef(_prefixed(BRIDGE_CDEF, prefix))
        ffi.cdef(_prefixed(_declarations(probed), prefix))
        # The library is already bound by the probe; this handle shares it.
        opened_library = ffi.dlopen(opened, ffi.RTLD_NOW)
    finally:
        if opened != path:
            os.unlink(opened)  # the mapping stays; the name is no longer needed
    library = PrefixedNames(opened_library, prefix) if prefix else opened_library
    libc = ffi.dlopen(None)
    keep_alive: list[object] = [ffi, opened_library, libc, *libraries]
    bridge = register_handlers(ffi, library, path, ffi_handlers, keep_alive)
    entries = entries_from_json(ffi.string(getattr(library, METADATA_SYMBOL)).decode())
    functions = {e.name: _callable(ffi, library, libc, e, bridge) for e in entries}
    return CompiledModule(functions, keep_alive)


class PrefixedNames:
    """A loaded library with the C API, whose symbols are read by their names without
    the prefix (``library.rw_model_metadata`` is its ``Prw_model_metadata``)."""

    def __init__(self, library, prefix: str):
        self._library = library
        self._prefix = prefix

    def __getattr__(self, name: str):
        return getattr(self._library, under_prefix(self._prefix, name))


_DECLARED_NAME = re.compile(
    r"\b(?:_mlir_ciface_rw_(?:entry|check)_\w+|rw_ffi_\w+|rw_model_metadata)\b"
)


def _prefixed(declarations: str, prefix: str) -> str:
    """cffi ``declarations`` of what ``load`` reads, each name under ``prefix``."""
    if not prefix:
        return declarations
    return _DECLARED_NAME.sub(lambda found: under_prefix(prefix, found.group()), declarations)


def library_prefix(path: str) -> str | None:
    """The prefix of a library with the C API (its exported ``Prw_model_metadata``), ""
    for a library without one (``rw_model_metadata``), None for neither."""
    names = exported_names(path)
    if METADATA_SYMBOL in names:
        return ""
    found = [n[: -len(METADATA_SYMBOL)] for n in names if n.endswith(METADATA_SYMBOL)]
    return found[0] if len(found) == 1 and found[0] else None


_opened: set[str] = set()
_opened_lock = threading.Lock()


def _path_to_open(path: str) -> str:
    """``path``, the first time this process loads it; afterwards a private copy.

    The dynamic loader hands out the library it already has under a name: a module
    compiled again to the same path (a notebook's second run) would load as the old one
    and compute the old numbers, and two loads of one file would share one bridge, the
    second's handlers serving the first. A copy under a new name is a library of its own.
    """
    with _opened_lock:
        first = path not in _opened
        _opened.add(path)
    if first or not os.path.isfile(path):
        return path  # a missing file is reported by its own name
    descriptor, copy = tempfile.mkstemp(prefix="rewriter-load-", suffix=".so")
    os.close(descriptor)
    shutil.copyfile(path, copy)
    return copy


def _load_kernel(ffi, path: str):
    """A kernel library, loaded globally so that the module's symbols resolve to it."""
    try:
        return ffi.dlopen(path, ffi.RTLD_NOW | ffi.RTLD_GLOBAL)
    except OSError as error:
        reason = dlerror(error) if os.path.exists(path) else "no such file"
        raise LoadError(f"cannot load the kernel library {path}: {reason}") from None


def file_path(path: str | Path) -> str:
    """``path`` as ``dlopen`` reads a path: dlopen searches the library path for a name
    without a slash (``libmodel.so``), so the file is named by its absolute path."""
    return os.path.abspath(os.fspath(path))


def _probe_entries(opened: str, ffi_handlers: object, shown: str) -> tuple[str, list[Entry]]:
    """The library's prefix (``library_prefix``) and entries, read with a throwaway FFI
    (the declarations depend on them). ``opened`` is the file to open, ``shown`` the name
    messages give it (``_path_to_open``).

    The library is bound now (RTLD_NOW): a kernel symbol that no loaded library defines
    is an error here, not a crash of the process at the first call.
    """
    import cffi

    path = shown
    prefix = library_prefix(opened)
    metadata_symbol = under_prefix(prefix or "", METADATA_SYMBOL)
    ffi = cffi.FFI()
    ffi.cdef(f"extern const char {metadata_symbol}[];")
    try:
        library = ffi.dlopen(opened, ffi.RTLD_NOW)
    except OSError as error:
        missing = re.search(r"undefined symbol: ([A-Za-z0-9_$.]*[A-Za-z0-9_$])", str(error))
        if missing:
            undefined = _undefined_symbol(path, missing.group(1), bool(ffi_handlers), prefix or "")
            raise LoadError(undefined) from None
        raise LoadError(_not_loadable(path, error)) from None
    try:
        metadata = getattr(library, metadata_symbol)
    except (AttributeError, KeyError):
        raise LoadError(
            f"{path} is a shared object but no module compiled by rewriter.compile (it has "
            f"no {METADATA_SYMBOL}): make one with python -m rewriter.compile "
            "MODEL.rewritten.mlir -o LIBRARY.so (rewriter.compile.compile_module)"
        ) from None
    return prefix or "", entries_from_json(ffi.string(metadata).decode())


def _not_loadable(path: str, error: OSError) -> str:
    """Why ``path`` does not load, and what the file may be instead."""
    if not os.path.exists(path):
        return f"cannot load {path}: no such file"
    message = f"cannot load {path}: {dlerror(error)}"
    if path.endswith(".vmfb"):
        return f"{message} (a .vmfb is an IREE module: load it with rewriter.iree.load)"
    if "invalid ELF header" in str(error) or "file too short" in str(error):
        return f"{message} (not a shared object: compile one with python -m rewriter.compile)"
    return message


def dlerror(error: OSError) -> str:
    """The dynamic loader's own words in cffi's error (without cffi's note on
    ``find_library``, which ``load`` never uses)."""
    text = str(error).split(".  Additionally, ctypes.util.find_library()", 1)[0]
    return re.sub(r"^cannot load library '[^']*': ", "", text)


def _undefined_symbol(path: str, symbol: str, handlers_given: bool, prefix: str) -> str:
    """A kernel symbol no loaded library defines: what to give, or how to compile instead.

    An extern is served by a kernel library (``kernels=``), or, compiled with
    ``--ffi-bridge``, by the XLA FFI handler of its target when it has a ``rewriter.xla_ffi``
    description; the module's dynamic symbols (read without binding) say whether it has
    the bridge.
    """
    first = f"{path} calls {symbol}, which none of the kernel libraries given to load() defines"
    if not symbol.startswith("_mlir_ciface_"):
        return first
    if _has_bridge(path, prefix):
        return (
            f"{first}; its extern has no rewriter.xla_ffi description (a legacy custom "
            f"call?), so no XLA FFI handler can serve it: load(..., kernels=[a library that "
            f"defines {symbol}])"
        )
    if handlers_given:
        return (
            f"{path} was compiled without --ffi-bridge, so no XLA FFI handler can serve its "
            f"externs ({symbol} is undefined): compile with --ffi-bridge "
            "(compile_module(..., ffi_bridge=True)), or pass kernels=[a library that "
            f"defines {symbol}]"
        )
    return (
        f"{first}: pass kernels=[a library that defines it], or, when its target has an XLA "
        "FFI handler, compile with --ffi-bridge and load(..., ffi_handlers={target: handler})"
    )


def _has_bridge(path: str, prefix: str) -> bool:
    """Whether the shared object defines the bridge's host API (``--ffi-bridge``), read
    with lazy binding, which leaves undefined functions unbound."""
    import _ctypes
    import ctypes

    try:
        library = ctypes.CDLL(path, mode=os.RTLD_LAZY | os.RTLD_LOCAL)
    except OSError:
        return False
    try:
        return hasattr(library, under_prefix(prefix, "rw_ffi_required_target"))
    finally:
        _ctypes.dlclose(library._handle)


def _descriptor_type(rank: int) -> str:
    return f"rw_descriptor_{rank}d"


def _declarations(entries: list[Entry]) -> str:
    ranks = {len(s.shape) for e in entries for s in (*e.inputs, *e.results)}
    lines = []
    for rank in sorted(ranks):
        arrays = f" int64_t sizes[{rank}]; int64_t strides[{rank}];" if rank else ""
        lines.append(
            f"typedef struct {{ void *allocated; void *aligned; int64_t offset;{arrays} }}"
            f" {_descriptor_type(rank)};"
        )
    for entry in entries:
        parameters = []
        if len(entry.results) > 1:
            fields = " ".join(
                f"{_descriptor_type(len(r.shape))} r{i};" for i, r in enumerate(entry.results)
            )
            lines.append(f"typedef struct {{ {fields} }} {_results_type(entry)};")
            parameters.append(f"{_results_type(entry)} *")
        elif entry.results:
            parameters.append(f"{_descriptor_type(len(entry.results[0].shape))} *")
        parameters += [f"{_descriptor_type(len(s.shape))} *" for s in entry.inputs]
        lines.append(f"void {entry.c_symbol}({', '.join(parameters) or 'void'});")
        if entry.check_symbol:
            checked = ["int64_t *", *parameters[1 if entry.results else 0 :]]
            lines.append(f"void {entry.check_symbol}({', '.join(checked)});")
    return "\n".join(lines)


def _results_type(entry: Entry) -> str:
    """The cdef name of an entry's struct of results: after its C symbol, an identifier,
    not its function name, which may be any MLIR name (``@"x y"``)."""
    return f"rw_results_{entry.c_symbol}"


def _callable(ffi, library, libc, entry: Entry, bridge: Bridge | None) -> Callable[..., object]:
    """The Python function of one entry. What does not change from call to call (cffi's
    types, the results' dtypes, the argument checks) is worked out here, once: a call pays
    for its arguments' checks, one descriptor each, the call and taking the results."""
    function = getattr(library, entry.c_symbol)

    def check_handlers() -> None:
        """Raise the first handler error of the call that just returned (this thread's)."""
        message = bridge.take_error() if bridge else None
        if message is not None:
            raise HandlerError(f"{entry.name}: {message}")

    expected = parameters(
        entry.name, [(s.element, s.shape) for s in entry.inputs], entry.input_names
    )
    count = len(expected)
    # Each parameter with its dtype and shape (the common argument, an array of that dtype
    # and shape, is taken without ``convert``'s call), its descriptor's type, and the sizes
    # and strides of a C-contiguous array of a static shape (the descriptor's, made once).
    inputs = [
        (
            p,
            p.dtype,
            p.shape,
            ffi.typeof(f"{_descriptor_type(len(p.shape))} *"),
            None if -1 in p.shape or 0 in p.shape else (list(p.shape), list(_row_major(p.shape))),
        )
        for p in expected
    ]
    results = [_ResultSpec(dtype_of(s.element), len(s.shape)) for s in entry.results]
    # jax's shape assertions, checked before the call (shape_checks.py)
    check = getattr(library, entry.check_symbol) if entry.check_symbol else None
    check_type = ffi.typeof(f"int64_t[{1 + entry.check_values}]")
    types = _CffiCalls.of(ffi)
    fields = [f"r{i}" for i in range(len(results))]
    if len(results) > 1:
        results_type = ffi.typeof(f"{_results_type(entry)} *")
    elif results:
        results_type = ffi.typeof(f"{_descriptor_type(results[0].rank)} *")

    def call(*arrays):
        if len(arrays) != count:
            check_count(entry.name, arrays, count)
        keep: list[object] = []
        arguments = []
        shapes = []
        for array, (parameter, dtype, shape, descriptor_type, layout) in zip(
            arrays, inputs, strict=True
        ):
            if type(array) is np.ndarray and array.dtype == dtype and array.shape == shape:
                prepared = array  # what convert returns for it
            else:
                prepared = convert(array, parameter)
                layout = None
            if not prepared.flags.c_contiguous:
                # np.require keeps a 0-d argument 0-d (np.ascontiguousarray makes it (1,)).
                prepared = np.require(prepared, requirements="C")
            arguments.append(_input_descriptor(types, descriptor_type, prepared, keep, layout))
            shapes.append(prepared.shape)
        if entry.shared_sizes:
            check_shared_sizes(entry.name, entry.shared_sizes, shapes)
        if check is not None:
            checked = ffi.new(check_type)
            check(checked, *arguments)
            if checked[0]:
                message = failed_check(entry.check_messages, list(checked))
                raise ValueError(f"{entry.name}: {message}")
        if bridge:
            bridge.take_error()  # a fresh start for this call's handlers
        if not results:
            function(*arguments)
            check_handlers()
            return None
        returned = types.new(results_type, None)
        function(returned, *arguments)
        if len(results) > 1:
            descriptors = [getattr(returned, name) for name in fields]
        else:
            descriptors = [returned[0]]
        outputs = _take_results(ffi, libc, descriptors, results, types)  # frees the buffers
        if bridge:
            check_handlers()
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    call.__name__ = entry.name
    call.__doc__ = f"{entry.name}{[s.shape for s in entry.inputs]} via {entry.c_symbol}"
    return call


def _input_descriptor(
    types: _CffiCalls,
    descriptor_type,
    array: np.ndarray,
    keep: list[object],
    layout: tuple[list[int], list[int]] | None = None,
):
    """The memref descriptor of a C-contiguous ``array`` (its strides in elements, as MLIR
    counts them); ``layout``: its sizes and strides, when the caller knows them (a static
    shape with elements)."""
    descriptor = types.new(descriptor_type, None)
    # A zero-size array still needs a valid pointer.
    data = types.from_buffer(
        types.char_array, array if array.size else np.zeros(1, array.dtype), False
    )
    keep.append(array)
    keep.append(data)
    descriptor.allocated = descriptor.aligned = data
    if layout is not None:
        if layout[0]:
            descriptor.sizes, descriptor.strides = layout
        return descriptor
    if array.ndim:
        descriptor.sizes = array.shape
        if array.size:
            itemsize = array.itemsize
            descriptor.strides = [stride // itemsize for stride in array.strides]
        else:
            descriptor.strides = [1] * array.ndim
    return descriptor


# From this size on a result's buffer is handed to numpy rather than copied: the copy of
# 32 KB takes as long as the cffi wrapper that frees the buffer with the array (2 us).
OWNED_RESULT_BYTES = 32 << 10


@dataclass(frozen=True)
class _ResultSpec:
    dtype: np.dtype
    rank: int


@dataclass(frozen=True)
class _CffiCalls:
    """cffi's types a call uses, looked up once per entry, and cffi's C functions that
    ``ffi.new``, ``ffi.cast`` and ``ffi.from_buffer`` wrap, each in a Python frame of its
    own: called directly, a call of ``x + 1`` on 10 floats makes five frames fewer."""

    char_pointer: Any
    char_array: Any
    address: Any
    new: Callable[[Any, Any], Any]
    cast: Callable[[Any, Any], Any]
    from_buffer: Callable[[Any, Any, bool], Any]

    @classmethod
    def of(cls, ffi: Any) -> _CffiCalls:
        import _cffi_backend as backend  # what FFI calls; cffi's generated modules import it

        char_pointer, char_array = ffi.typeof("char *"), ffi.typeof("char[]")
        address = ffi.typeof("uintptr_t")
        return cls(
            char_pointer, char_array, address, backend.newp, backend.cast, backend.from_buffer
        )


def _take_results(
    ffi, libc, descriptors, specs: Sequence[_ResultSpec], types: _CffiCalls
) -> list[np.ndarray]:
    """The results as numpy arrays, each buffer the compiled code returned freed once.

    A row-major result of ``OWNED_RESULT_BYTES`` or more, most of a buffer of its own,
    becomes the numpy array's memory, freed with ``libc.free`` when the array goes: copying it
    cost up to a quarter of a large elementwise op's call (16 MB: 1.2 ms of
    ``benchmarks/op_complexity.py``'s ``token_while`` at 4M elements, 2.7 of
    ``scatter_add``'s). A smaller result, a result that shares its
    buffer with another (two results of one value) or is strided is copied, and the
    buffer freed (each once) once every result is copied: a buffer freed after the first
    of two results that share it was read freed for the second, its first 16 bytes
    malloc's list pointers."""
    char_pointer, address, cast = types.char_pointer, types.address, types.cast
    if len(descriptors) == 1:
        small = _small_result(ffi, libc, descriptors[0], specs[0], char_pointer, cast)
        if small is not None:
            return [small]
    outputs = []
    freed: dict[int, object] = {}
    allocations = [int(cast(address, d.allocated)) for d in descriptors]
    for descriptor, spec, allocated in zip(descriptors, specs, allocations, strict=True):
        dtype, rank = spec.dtype, spec.rank
        itemsize = dtype.itemsize
        shape = tuple(descriptor.sizes) if rank else ()
        count = math.prod(shape)
        strides = tuple(descriptor.strides) if rank and count else ()
        # (a vector's row-major strides are (1,): no tuple made to compare them with)
        row_major = rank == 0 or count == 0 or strides == ((1,) if rank == 1 else _row_major(shape))
        owned = (
            count * itemsize >= OWNED_RESULT_BYTES
            and allocated != 0
            and allocations.count(allocated) == 1
            and row_major
        )
        if owned:
            aligned = int(cast(address, descriptor.aligned))
            start = aligned - allocated + descriptor.offset * itemsize
            owned = _most_of(libc, descriptor.allocated, start + count * itemsize)
        if owned:
            # The array owns the buffer: its base is a cffi buffer of the gc'd pointer.
            owner = ffi.gc(cast(char_pointer, descriptor.allocated), libc.free)
            memory = ffi.buffer(owner, start + count * itemsize)
            flat = np.frombuffer(memory, dtype=dtype, count=count, offset=start)
            outputs.append(flat.reshape(shape))
            continue
        if count:
            start = cast(char_pointer, descriptor.aligned) + descriptor.offset * itemsize
            if row_major:
                flat = np.frombuffer(ffi.buffer(start, count * itemsize), dtype=dtype)
                outputs.append(flat.reshape(shape).copy())
            else:
                byte_strides = tuple(stride * itemsize for stride in strides)
                extent = itemsize + sum(
                    (n - 1) * abs(st) for n, st in zip(shape, byte_strides, strict=True)
                )
                flat = np.frombuffer(ffi.buffer(start, extent), dtype=dtype)
                view = np.lib.stride_tricks.as_strided(flat, shape, byte_strides)
                outputs.append(np.array(view, copy=True))
        else:
            outputs.append(np.zeros(shape, dtype))
        if allocated:
            freed.setdefault(allocated, descriptor.allocated)
    for pointer in freed.values():
        libc.free(pointer)
    return outputs


def _small_result(
    ffi, libc, descriptor, spec: _ResultSpec, char_pointer, cast
) -> np.ndarray | None:
    """The one result of a call, copied and its buffer freed, when it is row-major, has
    elements and is under ``OWNED_RESULT_BYTES`` (what ``_take_results`` does with it, in
    fewer steps: most calls of small programs end here); None for any other."""
    rank, itemsize = spec.rank, spec.dtype.itemsize
    shape = tuple(descriptor.sizes) if rank else ()
    count = math.prod(shape)
    if not count or count * itemsize >= OWNED_RESULT_BYTES:
        return None
    if rank and tuple(descriptor.strides) != ((1,) if rank == 1 else _row_major(shape)):
        return None
    start = cast(char_pointer, descriptor.aligned) + descriptor.offset * itemsize
    flat = np.frombuffer(ffi.buffer(start, count * itemsize), dtype=spec.dtype)
    copied = flat.reshape(shape).copy()
    if descriptor.allocated != ffi.NULL:
        libc.free(descriptor.allocated)
    return copied


def _most_of(libc, pointer, used: int) -> bool:
    """Whether ``used`` bytes are at least half the block malloc gave at ``pointer``: a
    result that is a small part of a larger buffer (the first k of a sort) is copied, not
    kept with all of it. Without ``malloc_usable_size`` (not glibc), every result is."""
    try:
        usable = libc.malloc_usable_size(pointer)
    except (AttributeError, NotImplementedError, OSError):
        return False
    return bool(usable <= 2 * used)


def _row_major(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The strides, in elements, of a row-major array of ``shape``."""
    strides = []
    step = 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))
