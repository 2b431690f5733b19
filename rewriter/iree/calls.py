"""One call of a loaded module's public function, made through the VM's own API.

``iree.runtime``'s ``FunctionInvoker`` (what a ``SystemContext`` hands out) re-reads the
function's ABI on every call: its ``ArgumentPacker`` converts each argument generically,
each result becomes a ``DeviceArray`` transferred to the host, and every step allocates
Python objects. That is 10 to 20 us a call, more than the whole of ``jax.jit``'s call of a
program that does nothing. A ``Call`` works everything out once, at load time (the
parameters, the element type of each argument, the dtype of each result), and on each
call only checks the arguments (``rewriter.compile.arguments``, as before: an array of the
declared dtype and static shape, the common case, is checked inline), wraps each in a
buffer view on its own memory (``import_host_allocation``, no copy) or, when it cannot be
read in place (C-contiguous, writable and ``aligned`` as the module's executables assume:
16 bytes, numpy's, for what ``compile_module`` makes, ``build.ALIGNMENT_FLAG``) or IREE
may write into it (``written_arguments.py``), on a copy that IREE allocates and fills in one call
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


class Call:
    """Calls one public function: checked arguments in, numpy arrays (copies) out. It is
    the module's function itself (no wrapper to call through) until ``close``."""

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
        import iree.runtime as rt

        self.name = name
        self._invoke = context.invoke
        self._function = function
        self._device = device
        self._import = device.allocator.import_host_allocation
        self._allocate_copy = device.allocator.allocate_buffer_copy
        self._copy_memory = rt.MemoryType.DEVICE_LOCAL
        # each parameter, its IREE element type and whether it gets a copy: IREE may write
        # into it (written_arguments.py; ``written`` None: into any)
        self._parameters = tuple(
            (parameter, element_type, written is None or index in written)
            for index, (parameter, element_type) in enumerate(
                zip(parameters, element_types, strict=True)
            )
        )
        self._results = tuple(
            (dtype, shape, None if shape is None else math.prod(shape)) for dtype, shape in results
        )
        self._alignment = alignment
        self._run = errors.run if errors is not None else None
        self._dispatch_error = dispatch_error
        self._memory = rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE
        self._usage = rt.BufferUsage.DEFAULT
        self._list = rt.VmVariantList
        self._view = rt.HalBufferView
        self._closed = False

    def close(self) -> None:
        """Let go of the context, the function and the device (``IreeModule.close``): a
        call then raises."""
        self._closed = True
        self._invoke = self._function = self._device = None
        self._import = self._allocate_copy = self._run = self._dispatch_error = None

    def __call__(self, *arrays: object) -> object:
        """The results of the function on ``arrays`` (one array, a tuple, or None)."""
        if self._closed:
            raise LoadError(f"{self.name}: the module was closed; load it again")
        parameters = self._parameters
        if len(arrays) != len(parameters):
            check_count(self.name, arrays, len(parameters))
        inputs = self._list(len(parameters))
        held: list[np.ndarray] = []  # the memory the device reads, until the call is over
        for value, (parameter, element_type, copy) in zip(arrays, parameters, strict=True):
            if (
                type(value) is np.ndarray
                and value.dtype is parameter.dtype  # numpy's own dtypes are singletons
                and value.shape == parameter.shape
            ):
                array = value  # what convert returns for it, without its calls
            else:
                array = convert(value, parameter)
            flags = array.flags
            if copy or not (
                flags.c_contiguous and flags.writeable and aligned(array, self._alignment)
            ):
                # IREE's own aligned allocation, filled in one native call.
                contiguous = array if flags.c_contiguous else np.ascontiguousarray(array)
                view = self._allocate_copy(
                    self._copy_memory, self._usage, self._device, contiguous, element_type
                )
            else:
                held.append(array)
                buffer = self._import(array, self._memory, self._usage)
                view = self._view(buffer, array.shape, element_type)
            inputs.push_ref(view.ref)
        results = self._results
        outputs = self._list(len(results))
        if self._run is None:
            self._invoke(self._function, inputs, outputs)
        else:
            self._run(self._dispatch_error, self._invoke, self._function, inputs, outputs)
        if len(results) == 1:
            dtype, shape, count = results[0]
            if count and shape is not None and count * dtype.itemsize < HANDED_OVER_BYTES:
                # static, not empty, copied (results.py): without result_array's call
                flat = np.frombuffer(outputs.get_as_object(0, self._view).map(), dtype, count)
                return (flat if len(shape) == 1 else flat.reshape(shape)).copy()
            view = outputs.get_as_object(0, self._view)
            return result_array(view, dtype, shape, lent_ranges(held))
        taken = lent_ranges(held)
        arrays = tuple(
            result_array(outputs.get_as_object(i, self._view), dtype, shape, taken)
            for i, (dtype, shape, _) in enumerate(results)
        )
        return arrays if arrays else None


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
