"""Every element type the rewriter passes, in one table, and the one parser of tensor types.

A row says what one MLIR element type is called and how it travels everywhere the rewriter
hands it on: XLA's name (also the FFI dtype) and ``XLA_FFI_DataType`` code, its size, the C
types of the calling contract (abi/README.md), the numpy dtype the runtimes use, the
descriptor name of ``abi/include/rewriter/memref.h`` and IREE's calling convention letter.
Emitters and runtimes look types up here instead of keeping tables of their own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class ElementType:
    mlir: str  # "f32", "ui8", "complex<f32>"
    xla: str  # XLA's PrimitiveType name, also the FFI dtype: "f32", "u8", "c64", "pred"
    ffi_code: int  # the XLA_FFI_DataType value (xla/ffi/api/c_api.h)
    size: int  # bytes per element
    c_scalar: str  # the C type of a scalar of this type on the contract; "" when none is passed
    c_element: str  # the C type of one element in a descriptor's buffer
    numpy: str  # numpy's name of the dtype (bfloat16 comes from ml_dtypes)
    descriptor: str  # E of the C descriptor type rw_memref_<E>_<N>d
    iree_cconv: str = ""  # IREE's calling convention letter for a scalar; "" when none

    @property
    def ffi_name(self) -> str:
        """The ``XLA_FFI_DataType`` enumerator, e.g. ``XLA_FFI_DataType_F32``."""
        return f"XLA_FFI_DataType_{self.xla.upper()}"

    @property
    def is_complex(self) -> bool:
        return self.mlir.startswith("complex<")

    @property
    def dtype(self) -> np.dtype:
        """The numpy dtype (numpy is imported here: the rewrite itself does not need it)."""
        import numpy as np

        if self.numpy == "bfloat16":
            import ml_dtypes  # a dependency of jax and of the runtimes; only needed for bf16

            return np.dtype(ml_dtypes.bfloat16)
        return np.dtype(self.numpy)


def _integers() -> list[ElementType]:
    rows = []
    codes = {8: (2, 6), 16: (3, 7), 32: (4, 8), 64: (5, 9)}  # signed, unsigned
    for bits, (signed_code, unsigned_code) in codes.items():
        size = bits // 8
        signed_c, unsigned_c = f"int{bits}_t", f"uint{bits}_t"
        cconv = "I" if bits == 64 else "i"  # the VM widens i8 and i16 to i32
        rows += [
            ElementType(
                f"i{bits}", f"s{bits}", signed_code, size, signed_c, signed_c, f"int{bits}",
                f"i{bits}", cconv,
            ),
            ElementType(
                f"si{bits}", f"s{bits}", signed_code, size, signed_c, signed_c, f"int{bits}",
                f"i{bits}",
            ),
            ElementType(
                f"ui{bits}", f"u{bits}", unsigned_code, size, unsigned_c, unsigned_c,
                f"uint{bits}", f"ui{bits}",
            ),
        ]  # fmt: skip
    return rows


# fmt: off
ELEMENT_TYPES: tuple[ElementType, ...] = (
    ElementType("i1", "pred", 1, 1, "bool", "bool", "bool", "i1", "i"),  # one byte each
    *_integers(),
    # f16 and bf16 travel as their bits (abi/README.md).
    ElementType("f16", "f16", 10, 2, "uint16_t", "uint16_t", "float16", "f16"),
    ElementType("bf16", "bf16", 16, 2, "uint16_t", "uint16_t", "bfloat16", "bf16"),
    ElementType("f32", "f32", 11, 4, "float", "float", "float32", "f32", "f"),
    ElementType("f64", "f64", 12, 8, "double", "double", "float64", "f64", "F"),
    ElementType("complex<f32>", "c64", 15, 8, "", "rw_complex_f32", "complex64", "c64"),
    ElementType("complex<f64>", "c128", 18, 16, "", "rw_complex_f64", "complex128", "c128"),
)
# fmt: on

BY_MLIR = {row.mlir: row for row in ELEMENT_TYPES}
# Signless integers come before siN in the table, so XLA's s8 reads back as MLIR's i8.
BY_XLA = {row.xla: row for row in reversed(ELEMENT_TYPES)}
BY_DESCRIPTOR = {row.descriptor: row for row in reversed(ELEMENT_TYPES)}


@dataclass(frozen=True)
class TensorType:
    """A ranked tensor type: ``tensor<?x8xf32>`` is dims ``(None, 8)``, element ``f32``."""

    dims: tuple[int | None, ...]
    element: str  # the text after the dims, as written

    @property
    def is_static(self) -> bool:
        return None not in self.dims


_TENSOR = re.compile(r"tensor<((?:(?:[0-9]+|\?)x)*)(.+)>")


def dim_sizes(dims: Iterable[str]) -> tuple[int | None, ...]:
    """Dimension texts as sizes: ``("?", "8")`` -> ``(None, 8)``."""
    return tuple(None if d == "?" else int(d) for d in dims)


def parse_tensor(text: str) -> TensorType | None:
    """``tensor<?x8xf32>`` -> ``TensorType((None, 8), "f32")``; None if not a ranked tensor."""
    match = _TENSOR.fullmatch(text)
    if not match:
        return None
    return TensorType(dim_sizes(match.group(1).split("x")[:-1]), match.group(2))


def descriptor_name(element: str) -> str:
    """E of ``rw_memref_<E>_<N>d`` for an MLIR element type; an unknown type keeps its
    name, ``siN`` reads as ``iN`` (the same C type)."""
    row = BY_MLIR.get(element)
    return row.descriptor if row else re.sub(r"^si([0-9]+)$", r"i\1", element)
