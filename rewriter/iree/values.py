"""Values crossing an import: buffer views and numpy arrays, VM scalars and attribute values.

A tensor reaches an import as a ``HalBufferView`` in host-visible memory (llvm-cpu on the
``local-task`` driver); it is handed on as a read-only numpy view of that memory, without a
copy. Results go back as new buffer views, copied from what the implementation returned.
Scalars arrive as the VM passes them: i1, i8 and i16 widened (sign-extended) to a Python
int, i32 and i64 as ints, f32 and f64 as floats.
"""

from __future__ import annotations

import numpy as np

from ..compile.loader import dtype_of
from ..plan.attribute_kinds import IreeValue, kind_of, own_element
from ..syntax.element_types import parse_tensor


def tensor_type(text: str) -> tuple[tuple[int | None, ...], str]:
    """``tensor<?x8xf32>`` -> ``((None, 8), "f32")``."""
    tensor = parse_tensor(text)
    if tensor is None:
        raise TypeError(f"not a ranked tensor type: {text}")
    return tensor.dims, tensor.element


def shape_matches(shape: tuple[int, ...], dims: tuple[int | None, ...]) -> bool:
    if len(shape) != len(dims):
        return False
    return all(d is None or d == s for s, d in zip(shape, dims, strict=True))


def host_view(reference, element: str) -> np.ndarray:
    """A read-only numpy view of the buffer view behind a VM reference (no copy)."""
    from iree.runtime import HalBufferView

    view = reference.deref(HalBufferView)
    dtype = dtype_of(element)
    if view.byte_length == 0:
        return np.zeros(view.shape, dtype)
    array = view.map().asarray(view.shape, dtype)
    array.flags.writeable = False  # the caller's buffer: the contract makes inputs read-only
    return array


def buffer_view(device, array: np.ndarray, element: str):
    """A new buffer view on ``device`` holding a copy of ``array``; the VM reference."""
    from iree.runtime import BufferUsage, HalBufferView, MemoryType
    from iree.runtime.array_interop import map_dtype_to_element_type

    dtype = dtype_of(element)
    # np.require keeps a 0-d array 0-d (np.ascontiguousarray would make it shape (1,)).
    contiguous = np.require(array, dtype=dtype, requirements="C")
    # i1 tensors are bytes in memory; IREE calls the element type BOOL_8.
    element_type = map_dtype_to_element_type(dtype)
    view = device.allocator.allocate_buffer_copy(
        memory_type=MemoryType.DEVICE_LOCAL,
        allowed_usage=BufferUsage.DEFAULT,
        device=device,
        buffer=contiguous,
        element_type=element_type,
    )
    assert isinstance(view, HalBufferView)
    return view.ref


# IREE's executables assume bindings aligned like its own allocations (IREE_HAL_HEAP_BUFFER_
# ALIGNMENT): vector loads of a 16-byte aligned numpy array crash them.
BUFFER_ALIGNMENT = 64


def input_view(device, value, keep_alive: list[object], copy: bool = False):
    """A function argument as IREE gets it: a numpy array as a buffer view on its own memory
    (no copy), or on a 64-byte aligned copy when it is not aligned, contiguous and
    writable, or when ``copy`` is set; anything else unchanged (IREE's packer converts it).
    The imported buffer does not hold the array: it goes into ``keep_alive``, which must
    outlive the call.

    IREE's packer would copy each array into a fresh device allocation instead, which
    costs more than the program on inputs of megabytes (8 MB of weights: 10 to 15 ms). The
    imported memory is only read unless an op that IREE computes in place on its operand
    (sort, scatter, dynamic_update_slice) has an operand made of it
    (``written_arguments.py``): for such an argument the caller sets ``copy``, since IREE
    would write into the caller's array.
    Every result is copied out before the call returns.
    """
    from iree.runtime import BufferUsage, HalBufferView, MemoryType
    from iree.runtime.array_interop import map_dtype_to_element_type

    if not isinstance(value, np.ndarray) or value.size == 0:
        return value
    element_type = map_dtype_to_element_type(value.dtype)
    if element_type is None:
        return value
    if copy or not (
        value.flags.c_contiguous
        and value.flags.writeable
        and value.ctypes.data % BUFFER_ALIGNMENT == 0
    ):
        value = aligned_copy(value)
    keep_alive.append(value)
    buffer = device.allocator.import_host_allocation(
        value, MemoryType.HOST_LOCAL | MemoryType.DEVICE_VISIBLE, BufferUsage.DEFAULT
    )
    return HalBufferView(buffer, value.shape, element_type)


def aligned_copy(array: np.ndarray) -> np.ndarray:
    raw = np.empty(array.nbytes + BUFFER_ALIGNMENT, np.uint8)
    start = -raw.ctypes.data % BUFFER_ALIGNMENT
    copy = raw[start : start + array.nbytes].view(array.dtype).reshape(array.shape)
    copy[...] = array
    return copy


def integer_bits(value: int, bits: int, signed: bool) -> int:
    """``value`` wrapped to a ``bits``-wide integer (the VM sign-extends narrow ones)."""
    value &= (1 << bits) - 1
    if signed and value >> (bits - 1):
        value -= 1 << bits
    return value


def attribute_value(raw, source_type: str):
    """What a Python implementation receives for one FFI attribute: its kind's
    ``iree_value`` (``plan.attribute_kinds``), read from the type the module recorded.

    Scalars become numpy scalars of the attribute's own type (``ui8`` as ``np.uint8``,
    ``f16``/``bf16`` decoded from the bits the contract passes, ``i1`` as ``np.bool_``);
    tensors (dense and array attributes) numpy arrays with the attribute's element type;
    strings ``bytes``.
    """
    decoding = kind_of(source_type).iree_value
    if decoding == IreeValue.BYTES:
        return raw.tobytes()
    if decoding == IreeValue.ARRAY:
        return raw.view(dtype_of(own_element(source_type) or ""))
    if decoding == IreeValue.HALF_BITS:
        bits = np.uint16(integer_bits(raw, 16, signed=False))
        return bits.view(dtype_of(source_type))[()]
    if decoding == IreeValue.FLOAT:
        return dtype_of(source_type).type(raw)
    if decoding == IreeValue.BOOL:
        return np.bool_(raw)
    dtype = dtype_of(source_type)
    width = dtype.itemsize * 8
    return dtype.type(integer_bits(raw, width, signed=dtype.kind == "i"))
