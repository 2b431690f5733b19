"""One call of a loaded module's public function, made through the VM's own API.

``iree.runtime``'s ``FunctionInvoker`` (what a ``SystemContext`` hands out) re-reads the
function's ABI on every call: its ``ArgumentPacker`` converts each argument generically,
each result becomes a ``DeviceArray`` transferred to the host, and every step allocates
Python objects. That is 10 to 20 us a call, more than the whole of ``jax.jit``'s call of a
program that does nothing. A ``Call`` works everything out once, at load time (the
parameters, the element type of each argument, whether it is copied, the dtype of each
result), into a closure whose calls read no attribute of an object of ours; on each call it
only checks the arguments (``rewriter.compile.arguments``, as before: an array of the
declared dtype and static shape, the common case, is checked inline), wraps each in a
buffer view on its own memory (``import_host_allocation``, no copy) or, when it is small
(under ``COPIED_BYTES``, where a copy costs less than an import), cannot be read in place
(C-contiguous, writable and ``aligned`` as the module's executables assume: 16 bytes,
numpy's, for what ``compile_module`` makes, ``build.ALIGNMENT_FLAG``) or IREE may write
into it (``written_arguments.py``), on a copy that IREE allocates and fills in one call
(``allocate_buffer_copy``, half the cost of an aligned numpy copy and an import); then
runs ``VmContext.invoke`` (directly when the module imports nothing from Python and
dispatches no FFI handler: no implementation's exception can then be pending,
``CallErrors`` has nothing to do) and hands each result over (``results.py``: a large one
in the memory IREE wrote, a small one copied).

A function ``Call`` cannot make (an argument that is no tensor, a result that is no
array, an element type without a HAL one) is called through ``FunctionInvoker`` as before
(``plan`` returns None).
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..compile.arguments import Parameter, check_count, convert
from ..compile.load_errors import LoadError
from .call_errors import CallErrors
from .declarations import result_types
from .results import HANDED_OVER_BYTES, lent_ranges, result_array
from .values import BUFFER_ALIGNMENT

# Below this size an argument is copied rather than read in place: IREE's allocation and
# copy in one native call take 0.5 us (40 bytes) to 0.8 us (16 KB), the alignment check,
# import and buffer view of an array in place 1.0 us; 64 KB take 2.8 us to copy.
COPIED_BYTES = 16 << 10


class Call:
    """One public function of a loaded module: ``function`` is the module's function (checked
    arguments in, numpy arrays out), ``close`` lets go of IREE's objects, after which the
    function raises. The function is a closure over what load worked out (``_function``):
    a call reads no attribute of an object of ours."""

    def __init__(
        self,
        name: str,
        context: Any,
        function: Any,
        device: Any,
        parameters: Sequence[Parameter],
        element_types: Sequence[Any],
        results: Sequence[tuple[np.dtype, tuple[int, ...] | None]],
        written: frozenset[int] | None,
        errors: CallErrors | None,
        dispatch_error: Callable[[], str | None] | None,
        alignment: int = BUFFER_ALIGNMENT,
    ):
        """``errors`` is None for a module whose invocation raises only IREE's own
        errors (no import served in Python, no FFI dispatch); ``alignment`` is what its
        executables assume of their bindings (``build.BINDING_ALIGNMENT_KEY``)."""
        self.name = name
        # each parameter, its dtype and shape (read once here), its IREE element type and
        # whether it gets a copy (``_copied``)
        self.parameters = tuple(
            (
                parameter,
                parameter.dtype,
                parameter.shape,
                element_type,
                _copied(parameter, written is None or index in written),
            )
            for index, (parameter, element_type) in enumerate(
                zip(parameters, element_types, strict=True)
            )
        )
        self.results = tuple(
            (dtype, shape, None if shape is None else math.prod(shape)) for dtype, shape in results
        )
        self.function, self.close = _function(
            name,
            context.invoke,
            function,
            device,
            self.parameters,
            self.results,
            errors.run if errors is not None else None,
            dispatch_error,
            alignment,
        )


def memory_functions(device: Any) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The two ways a call gives IREE an array: a copy that IREE allocates and fills in one
    native call (``allocate_buffer_copy``, returning a buffer view) and a buffer on the
    array's own memory (``import_host_allocation``)."""
    allocator = device.allocator
    return allocator.allocate_buffer_copy, allocator.import_host_allocation


def _function(
    name: str,
    invoke: Callable[..., None] | None,
    vm_function: Any,
    device: Any,
    parameters: tuple[tuple[Parameter, np.dtype, tuple[int, ...], Any, bool | None], ...],
    results: tuple[tuple[np.dtype, tuple[int, ...] | None, int | None], ...],
    run: Callable[..., object] | None,
    dispatch_error: Callable[[], str | None] | None,
    alignment: int,
) -> tuple[Callable[..., object], Callable[[], None]]:
    """The function calling ``vm_function`` (module docstring) and what releases it."""
    import iree.runtime as rt

    allocate_copy: Any  # None once closed, as are the others that hold IREE's objects
    import_memory: Any
    allocate_copy, import_memory = memory_functions(device)
    copy_memory = rt.MemoryType.DEVICE_LOCAL
    lent_memory = rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE
    usage = rt.BufferUsage.DEFAULT
    new_list, view_type = rt.VmVariantList, rt.HalBufferView
    ndarray, frombuffer = np.ndarray, np.frombuffer
    count = len(parameters)
    copied = _copied_results(results)

    def call(*arrays: object) -> object:
        if invoke is None:
            raise LoadError(f"{name}: the module was closed; load it again")
        if len(arrays) != count:
            check_count(name, arrays, count)
        inputs = new_list(count)
        push = inputs.push_ref
        held: list[np.ndarray] = []  # the memory the device reads, until the call is over
        for value, (parameter, dtype, shape, element_type, copy) in zip(
            arrays, parameters, strict=True
        ):
            # numpy's own dtypes are singletons: an array of any other dtype is converted
            if type(value) is ndarray and value.dtype is dtype and value.shape == shape:
                array = value  # what convert returns for it, without its calls
            else:
                array = convert(value, parameter)
            if copy or (copy is None and array.nbytes < COPIED_BYTES):
                try:  # IREE's own aligned allocation, filled in one native call
                    push(allocate_copy(copy_memory, usage, device, array, element_type))
                except ValueError:  # refused: not C-contiguous
                    push(contiguous_copy(array, element_type))
                continue
            flags = array.flags
            if flags.c_contiguous and flags.writeable and aligned(array, alignment):
                held.append(array)
                buffer = import_memory(array, lent_memory, usage)
                push(view_type(buffer, array.shape, element_type))
            else:
                push(contiguous_copy(array, element_type))
        outputs = new_list(len(results))
        if run is None:
            invoke(vm_function, inputs, outputs)
        else:
            run(dispatch_error, invoke, vm_function, inputs, outputs)
        if copied is not None:  # static results, none empty, all copied (results.py)
            get = outputs.get_as_object
            if len(copied) == 1:
                dtype, size, result_shape = copied[0]
                flat = frombuffer(get(0, view_type).map(), dtype, size)
                return (flat if result_shape is None else flat.reshape(result_shape)).copy()
            return tuple(
                (flat if result_shape is None else flat.reshape(result_shape)).copy()
                for flat, result_shape in [
                    (frombuffer(get(index, view_type).map(), dtype, size), result_shape)
                    for index, (dtype, size, result_shape) in enumerate(copied)
                ]
            )
        taken = lent_ranges(held)
        returned = tuple(
            result_array(outputs.get_as_object(i, view_type), dtype, shape, taken)
            for i, (dtype, shape, _) in enumerate(results)
        )
        if len(returned) == 1:
            return returned[0]
        return returned if returned else None

    def contiguous_copy(array: np.ndarray, element_type: Any) -> Any:
        """IREE copies only C-contiguous memory (any other it refuses with a ValueError,
        which a contiguous array does not get here): any other is made contiguous."""
        if not array.flags.c_contiguous:
            array = np.ascontiguousarray(array)
        return allocate_copy(copy_memory, usage, device, array, element_type)

    def close() -> None:
        nonlocal invoke, vm_function, device, allocate_copy, import_memory, run, dispatch_error
        invoke = vm_function = device = allocate_copy = import_memory = None
        run = dispatch_error = None

    return call, close


def _copied(parameter: Parameter, written: bool) -> bool | None:
    """Whether an argument for ``parameter`` gets a copy: True when IREE may write into it
    (``written``: written_arguments.py) or when its static shape is of fewer than
    ``COPIED_BYTES``; False when it is larger (read in place when it can be); None for a
    dynamic shape, whose argument is copied by its size."""
    if written:
        return True
    if any(d < 0 for d in parameter.shape):
        return None
    return math.prod(parameter.shape) * parameter.dtype.itemsize < COPIED_BYTES


def _copied_results(
    results: Sequence[tuple[np.dtype, tuple[int, ...] | None, int | None]],
) -> tuple[tuple[np.dtype, int, tuple[int, ...] | None], ...] | None:
    """For a function whose results are all static, none empty and each small enough to be
    copied (``results.py``): each one's dtype, element count and shape (None for one
    dimension, which needs no reshape); None otherwise (``result_array`` then decides each).
    A copied result overlaps nothing it would have to be checked against, so the call copies
    them without the ranges that handing over needs: 0.9 us a result instead of 2.3."""
    copied = []
    for dtype, shape, count in results:
        if not count or shape is None or count * dtype.itemsize >= HANDED_OVER_BYTES:
            return None
        copied.append((dtype, count, None if len(shape) == 1 else shape))
    return tuple(copied) if copied else None


def aligned(array: np.ndarray, alignment: int = BUFFER_ALIGNMENT) -> bool:
    """Whether the memory of ``array`` (contiguous and writable) starts at a multiple of
    ``alignment`` bytes (``values.BUFFER_ALIGNMENT`` unless the module assumes less). The
    address comes from ctypes' ``from_buffer``, a third of ``array.ctypes.data``'s cost,
    except for dtypes the buffer protocol cannot name (ml_dtypes' bfloat16)."""
    if array.nbytes == 0:
        return True  # nothing is read
    exported: Any = array  # numpy's buffer, which typeshed does not call a Buffer
    try:
        address = ctypes.addressof(ctypes.c_char.from_buffer(exported))
    except ValueError:
        address = array.ctypes.data
    return address % alignment == 0


def plan(
    name: str,
    context: Any,
    program: Any,
    device: Any,
    parameters: Sequence[Parameter | None] | None,
    written: frozenset[int] | None,
    errors: CallErrors | None,
    dispatch_error: Callable[[], str | None] | None,
    alignment: int = BUFFER_ALIGNMENT,
) -> Call | None:
    """The ``Call`` of the public function ``name``, or None when one of its arguments or
    results is not a tensor that ``Call`` handles (``FunctionInvoker`` then calls it)."""
    from iree.runtime.array_interop import map_dtype_to_element_type

    function = program.lookup_function(name)
    results = result_types(program, name)
    if function is None or results is None or parameters is None:
        return None
    tensors = [p for p in parameters if p is not None]
    if len(tensors) != len(parameters):
        return None
    element_types = [map_dtype_to_element_type(p.dtype) for p in tensors]
    if any(t is None for t in element_types):
        return None
    return Call(
        name,
        context,
        function,
        device,
        tensors,
        element_types,
        results,
        written,
        errors,
        dispatch_error,
        alignment,
    )
