"""A call's results as numpy arrays: a large one handed over in the memory IREE wrote, a
small one copied.

Copying a result out of its mapped buffer cost a large part of a memory-bound call: 16 MB
take 2.5 ms or more to copy, about what ``benchmarks/op_complexity.py``'s ``token_while``
at 4M elements takes to compute. So a result of ``HANDED_OVER_BYTES`` or more becomes a
numpy array over the buffer's own memory, as the compiled path does with the buffers its
code returns (``rewriter/compile/loader.py``, ``OWNED_RESULT_BYTES``). The array's base
holds IREE's mapping, and the mapping holds the buffer (``HalMappedMemory`` retains it):
the memory lives as long as the array does, after the call and after ``IreeModule.close``.

The array is writable, like every other result, though IREE maps a result for reading
only: on the CPU the mapping is the buffer's memory itself, and once IREE has returned the
buffer nothing of IREE's reads or writes it again. A result is still copied when its memory
is not the call's alone:

- it overlaps an argument the module read in place (``import_host_allocation``): IREE
  returns an argument it did not change as its own buffer, the caller's array;
- it overlaps a result handed over before in the same call (``return %y, %y``).

Results IREE computes go to one allocation of the call's (each result a part of it, a
returned constant copied in too): handing one over keeps that allocation while the array
lives; the copied small results and the other large ones are of the same call.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

# From this size on a result is handed over rather than copied (the compiled path's
# threshold: a copy of 32 KB costs about what the handing over does).
HANDED_OVER_BYTES = 32 << 10


class _Mapped:
    """A writable numpy view's base: the result's memory (``__array_interface__``) and
    IREE's mapping, which keeps the buffer alive while the array lives."""

    def __init__(self, mapping: Any, address: int, shape: tuple[int, ...], dtype: np.dtype):
        self.mapping = mapping
        self.__array_interface__ = {
            "data": (address, False),
            "shape": shape,
            "typestr": dtype.str,
            "descr": dtype.descr,
            "version": 3,
        }


def result_array(
    view: Any,
    dtype: np.dtype,
    shape: tuple[int, ...] | None,
    taken: list[tuple[int, int]],
) -> np.ndarray:
    """The result behind the buffer view ``view`` as a numpy array (module docstring).
    ``shape`` is the declared one, None for a dynamic shape (read from the view).
    ``taken`` holds the address ranges ``(start, end)`` of the memory the call's arguments
    lent and of the results handed over so far; a result handed over is added."""
    if shape is None:
        shape = tuple(view.shape)
    count = math.prod(shape)
    if count == 0:
        return np.zeros(shape, dtype)
    mapping = view.map()
    flat = np.frombuffer(mapping, dtype, count)
    nbytes = count * dtype.itemsize
    if nbytes >= HANDED_OVER_BYTES:
        start = flat.__array_interface__["data"][0]
        end = start + nbytes
        if not any(start < other_end and other_start < end for other_start, other_end in taken):
            taken.append((start, end))
            return np.asarray(_Mapped(mapping, start, shape, dtype))
    return (flat if len(shape) == 1 else flat.reshape(shape)).copy()


def lent_ranges(arrays: Sequence[np.ndarray]) -> list[tuple[int, int]]:
    """The address ranges of the arrays a call lent IREE (read in place)."""
    ranges = []
    for array in arrays:
        start = array.__array_interface__["data"][0]
        ranges.append((start, start + array.nbytes))
    return ranges
