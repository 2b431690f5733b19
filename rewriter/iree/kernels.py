"""Serve an IREE import with a C function that follows the calling contract (abi/README.md).

The function is a cffi function pointer: ``lib._mlir_ciface_S`` of an ``ffi.dlopen``
library, or ``ffi.addressof(lib, "_mlir_ciface_S")`` of a compiled (API mode) cffi module.
Its own C type says how to build each argument, so no header is needed here:

- the results pointer first (one descriptor, or a struct of descriptors), when there are
  results; the kernel allocates every result buffer and this side frees it;
- a descriptor per tensor, in contract order, pointing straight at the buffer view's
  host-visible memory (zero copy, row-major strides);
- scalars by value, wrapped to the width and signedness of the C parameter.
"""

from __future__ import annotations

import re

import numpy as np

from .signatures import ImportSignature
from .values import buffer_view, dtype_of, host_view, integer_bits, shape_matches, tensor_type

_INTEGER = re.compile(r"(u?)int(8|16|32|64)_t")


class KernelSignatureError(Exception):
    """The C function cannot serve the import (wrong number or kinds of parameters)."""


def _ffi():
    import cffi

    ffi = cffi.FFI()
    ffi.cdef("void free(void *);")
    return ffi, ffi.dlopen(None)


class KernelImport:
    """A callable for ``PyModuleInterface``: VM arguments in, VM references out."""

    def __init__(self, function, signature: ImportSignature, device):
        self.ffi, self.libc = _ffi()
        try:
            self.ctype = self.ffi.typeof(function)
        except TypeError:
            raise KernelSignatureError(
                "not a cffi function pointer (for a compiled cffi module, pass "
                'ffi.addressof(lib, "_mlir_ciface_NAME"))'
            ) from None
        self.function = function
        self.signature = signature
        self.device = device
        self.contract = signature.contract_types()
        self._check()
        # What each call needs, worked out once: an import may be called thousands of times.
        has_results = bool(signature.results)
        self._tensors = [
            (tensor_type(t)[1], c_type, dict(c_type.item.fields))
            if t.startswith("tensor<")
            else None
            for t, c_type in zip(self.contract, self.ctype.args[has_results:], strict=True)
        ]
        self._result_types = [(*tensor_type(t), t) for t in signature.results]

    def _check(self) -> None:
        ctype, signature = self.ctype, self.signature
        if ctype.kind != "function":
            raise KernelSignatureError(f"{ctype.cname} is not a function")
        has_results = bool(signature.results)
        expected = len(self.contract) + has_results
        described = "a results pointer and " if has_results else ""
        if len(ctype.args) != expected or ctype.ellipsis:
            raise KernelSignatureError(
                f"{ctype.cname} takes {len(ctype.args)} arguments; the contract passes "
                f"{described}{len(self.contract)} (operands, then attributes)"
            )
        for index, (type_, c_type) in enumerate(
            zip(self.contract, ctype.args[has_results:], strict=True)
        ):
            wanted = "pointer" if type_.startswith("tensor<") else "primitive"
            if c_type.kind != wanted:
                how = "a descriptor pointer" if wanted == "pointer" else "by value"
                raise KernelSignatureError(
                    f"parameter {index + has_results} of {ctype.cname} is {c_type.cname}; "
                    f"the contract passes {type_} there ({how})"
                )
        if has_results:
            results = ctype.args[0]
            if results.kind != "pointer" or results.item.kind != "struct":
                raise KernelSignatureError(
                    f"the first parameter of {ctype.cname} must point to the results"
                )
            count = len(signature.results)
            fields = results.item.fields
            if count > 1 and len(fields) != count:
                raise KernelSignatureError(
                    f"{results.cname} holds {len(fields)} results; the call has {count}"
                )
            structs = [results.item] if count == 1 else [field.type for _, field in fields]
            for struct, type_ in zip(structs, signature.results, strict=True):
                self._check_descriptor(struct, type_)
        for type_, c_type in zip(self.contract, ctype.args[has_results:], strict=True):
            if type_.startswith("tensor<"):
                self._check_descriptor(c_type.item, type_)

    def _check_descriptor(self, struct, type_: str) -> None:
        """``struct`` is a memref descriptor of the rank and element size of ``type_``."""
        fields = dict(struct.fields or ()) if struct.kind == "struct" else {}
        if "aligned" not in fields:
            raise KernelSignatureError(f"{struct.cname} is not a memref descriptor")
        dims, element = tensor_type(type_)
        rank = fields["sizes"].type.length if "sizes" in fields else 0
        itemsize = self.ffi.sizeof(fields["aligned"].type.item)
        if rank != len(dims) or itemsize != dtype_of(element).itemsize:
            raise KernelSignatureError(
                f"{struct.cname} (rank {rank}, {itemsize}-byte elements) cannot describe {type_}"
            )

    def __call__(self, *arguments):
        ffi, signature = self.ffi, self.signature
        contract = signature.in_contract_order(arguments)
        has_results = bool(signature.results)
        c_arguments = []
        keep_alive = []  # the mapped inputs must outlive the call
        holder = ffi.new(self.ctype.args[0]) if has_results else None
        if holder is not None:
            c_arguments.append(holder)
        for raw, tensor, c_type in zip(
            contract, self._tensors, self.ctype.args[has_results:], strict=True
        ):
            if tensor is not None:
                element, descriptor_type, fields = tensor
                view = host_view(raw, element)
                keep_alive.append(view)
                c_arguments.append(self._descriptor(descriptor_type, fields, view))
            else:
                c_arguments.append(self._scalar(raw, c_type))
        self.function(*c_arguments)
        if holder is None:
            return None
        descriptors = self._result_descriptors(holder)
        try:
            references = [
                buffer_view(self.device, self._read(descriptor, dims, element, type_), element)
                for descriptor, (dims, element, type_) in zip(
                    descriptors, self._result_types, strict=True
                )
            ]
        finally:
            for descriptor in descriptors:
                if descriptor.allocated != ffi.NULL:
                    self.libc.free(ffi.cast("void *", descriptor.allocated))
        return references[0] if len(references) == 1 else tuple(references)

    def _descriptor(self, c_type, fields: dict, view: np.ndarray):
        ffi = self.ffi
        descriptor = ffi.new(c_type)
        pointer_type = fields["aligned"].type
        if view.size:
            pointer = ffi.cast(pointer_type, ffi.from_buffer(view))
        else:
            pointer = ffi.cast(pointer_type, 0)
        descriptor.allocated = descriptor.aligned = pointer
        descriptor.offset = 0
        if "sizes" in fields:  # rank checked at load time; a 0-d descriptor has none
            descriptor.sizes = list(view.shape)
            descriptor.strides = [stride // view.itemsize for stride in view.strides]
        return descriptor

    def _scalar(self, raw, c_type):
        name = c_type.cname
        if name in ("float", "double"):
            return float(raw)
        if name in ("_Bool", "bool"):
            return bool(raw)
        integer = _INTEGER.fullmatch(name)
        bits = int(integer.group(2)) if integer else self.ffi.sizeof(c_type) * 8
        unsigned = bool(integer.group(1)) if integer else name.startswith("unsigned")
        return integer_bits(int(raw), bits, signed=not unsigned)

    def _result_descriptors(self, holder) -> list:
        """One descriptor per result: the pointee itself, or each field of the struct."""
        if len(self.signature.results) == 1:
            return [holder]
        return [getattr(holder, name) for name, _ in self.ctype.args[0].item.fields]

    def _read(self, descriptor, dims, element: str, type_: str) -> np.ndarray:
        """A copy of a result the kernel allocated, checked against the result type."""
        ffi = self.ffi
        dtype = dtype_of(element)  # the element size was checked at load time
        shape = tuple(descriptor.sizes[i] for i in range(len(dims))) if dims else ()
        strides = tuple(descriptor.strides[i] for i in range(len(dims))) if dims else ()
        if not shape_matches(shape, dims):
            raise KernelSignatureError(f"the kernel returned shape {shape} for {type_}")
        if any(size == 0 for size in shape):
            return np.zeros(shape, dtype)
        span = 1 + sum((size - 1) * stride for size, stride in zip(shape, strides, strict=True))
        start = descriptor.aligned + descriptor.offset
        flat = np.frombuffer(ffi.buffer(start, span * dtype.itemsize), dtype)
        byte_strides = tuple(stride * dtype.itemsize for stride in strides)
        return np.lib.stride_tricks.as_strided(flat, shape, byte_strides).copy()
