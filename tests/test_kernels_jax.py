"""One kernel source, two entry points: the XLA FFI handler and the ``_mlir_ciface_`` entry.

For every kernel in samples/kernels/: JAX runs the sample's own Python function (imported
from its export.py) with the handler registered, and the result matches a numpy reference.
Then the kernel's ``_mlir_ciface_`` entry, called directly through cffi with memref
descriptors as the compiled module would pass them (abi/README.md), gives the same bits,
both on a dense input and on a strided view with an offset. That is the compiled path's
kernel side, checked before a compiled module exists.
"""

from __future__ import annotations

import functools
import re

import jax
import ml_dtypes
import numpy as np
import pytest
from kernel_library import SAMPLES, load_kernels, sample

pytestmark = [pytest.mark.toolchain("gcc", "g++"), pytest.mark.jax, pytest.mark.slow]


@pytest.fixture(scope="session")
def kernels(kernel_library):
    """The kernel library (built once per session in conftest.py) as its cffi module."""
    return load_kernels(kernel_library)


# --- the extern each entry implements ------------------------------------------------------

EXTERNS = {
    "rms_norm": 'func.func private @rms_norm(tensor<10x10xf32> {bufferization.access = "read"}'
    ", f32) -> tensor<10x10xf32> attributes {llvm.emit_c_interface}",
    "two_results": "func.func private @sum_and_max(tensor<4x6xf32> "
    '{bufferization.access = "read"}, f32) -> (tensor<4xf32>, tensor<4xi32>) '
    "attributes {llvm.emit_c_interface}",
    "attribute_kernel": "func.func private @attr_kernel(tensor<2xf32> "
    '{bufferization.access = "read"}, i16, i1, i16, f32, f64, tensor<3xf32> '
    '{bufferization.access = "read"}, i16, i32, i64, i8, tensor<3xi64> '
    '{bufferization.access = "read"}, tensor<6xi8> {bufferization.access = "read"}, '
    "i16, i32, i64, i8) -> tensor<18xf64> attributes {llvm.emit_c_interface}",
    "side_effect": 'func.func private @count_calls(tensor<3xf32> {bufferization.access = "read"}'
    ", i32) attributes {llvm.emit_c_interface}",
    "dynamic_shape": "func.func private @row_scale(tensor<?x8xf32> "
    '{bufferization.access = "read"}, tensor<2xi32> {bufferization.access = "read"}, f32) '
    "-> tensor<?x8xf32> attributes {llvm.emit_c_interface}",
}


@pytest.mark.parametrize("name", sorted(EXTERNS))
def test_entry_prototypes_follow_the_golden_externs(name):
    """The prototypes in kernels.h were written for exactly these externs (their FFI
    description, rewriter.xla_ffi, is not part of the C signature)."""
    text = (SAMPLES / name / f"{name}.rewritten.mlir").read_text()
    externs = re.findall(
        r"^  (func\.func private @.*llvm\.emit_c_interface)(?:, rewriter\.xla_ffi = .*)?\}$",
        text,
        re.M,
    )
    assert [extern + "}" for extern in externs] == [EXTERNS[name]]


# --- descriptors -----------------------------------------------------------------------------

MEMREF_KIND = {
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
    np.dtype(np.int8): "i8",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
}


def strided_copy(array: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``array`` copied into every other element of a larger buffer: (buffer, view)."""
    base = np.zeros([2 * n + 1 for n in array.shape], array.dtype)
    view = base[(slice(1, None, 2),) * array.ndim]
    view[...] = array
    return base, view


class Descriptors:
    """Builds memref descriptors on numpy arrays and keeps the arrays alive (as long as
    it is alive itself: a descriptor of a strided copy points into memory this holds)."""

    def __init__(self, ffi, strided: bool):
        self.ffi, self.strided, self.keep = ffi, strided, []

    def __call__(self, array: np.ndarray):
        array = np.ascontiguousarray(array)
        base, view = strided_copy(array) if self.strided else (array, array)
        self.keep.append(base)
        desc = self.ffi.new(f"rw_memref_{MEMREF_KIND[array.dtype]}_{array.ndim}d *")
        pointer = self.ffi.cast(self.ffi.typeof(desc.aligned), base.ctypes.data)
        desc.allocated = desc.aligned = pointer
        desc.offset = (view.ctypes.data - base.ctypes.data) // array.itemsize
        desc.sizes = list(array.shape)
        desc.strides = [stride // array.itemsize for stride in view.strides]
        return desc


def take(kernels, desc, dtype) -> np.ndarray:
    """Copy out a result the entry allocated (checking the ownership rule), then free it."""
    ffi = kernels.ffi
    sizes = list(desc.sizes)
    assert desc.allocated == desc.aligned and desc.offset == 0
    assert int(ffi.cast("uintptr_t", desc.aligned)) % 64 == 0
    assert list(desc.strides) == [int(np.prod(sizes[d + 1 :])) for d in range(len(sizes))]
    nbytes = int(np.prod(sizes)) * np.dtype(dtype).itemsize
    data = np.frombuffer(ffi.buffer(desc.aligned, nbytes), dtype).reshape(sizes).copy()
    kernels.lib.free(desc.allocated)
    return data


def same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


LAYOUTS = pytest.mark.parametrize("strided", [False, True], ids=["dense", "strided"])


# --- rms_norm ----------------------------------------------------------------------------------


@LAYOUTS
def test_rms_norm(kernels, strided):
    rms_norm = sample("rms_norm").rms_norm
    x = np.random.default_rng(0).normal(size=(10, 10)).astype(np.float32)
    via_jax = np.asarray(jax.jit(rms_norm)(x))

    x64 = x.astype(np.float64)
    reference = x64 / np.sqrt(np.mean(x64**2, axis=-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(via_jax, reference, rtol=1e-6)

    result = kernels.ffi.new("rw_memref_f32_2d *")
    descriptors = Descriptors(kernels.ffi, strided)  # alive until the call: it keeps x's copy
    x_desc = descriptors(x)
    kernels.lib._mlir_ciface_rms_norm(result, x_desc, np.float32(1e-5))
    assert same_bits(take(kernels, result, np.float32), via_jax)


# --- sum_and_max ---------------------------------------------------------------------------------


@LAYOUTS
def test_sum_and_max(kernels, strided):
    sum_and_max = sample("two_results").sum_and_max
    x = np.random.default_rng(1).uniform(0.5, 2.0, size=(4, 6)).astype(np.float32)
    sums, argmax = (np.asarray(r) for r in jax.jit(sum_and_max)(x))

    np.testing.assert_allclose(sums, x.astype(np.float64).sum(axis=-1) * 0.5, rtol=1e-6)
    assert argmax.dtype == np.int32 and argmax.tolist() == x.argmax(axis=-1).tolist()

    results = kernels.ffi.new("sum_and_max_results *")
    descriptors = Descriptors(kernels.ffi, strided)  # alive until the call: it keeps x's copy
    x_desc = descriptors(x)
    kernels.lib._mlir_ciface_sum_and_max(results, x_desc, np.float32(0.5))
    assert same_bits(take(kernels, results.result0, np.float32), sums)
    assert same_bits(take(kernels, results.result1, np.int32), argmax)


# --- attr_kernel ---------------------------------------------------------------------------------


def attribute_slots(attributes: dict, x: np.ndarray) -> list[float]:
    """The numpy reference: each attribute decoded, in sorted-name order, then x[0] + x[1]."""
    slots: list[float] = []
    for name in sorted(attributes):
        value = attributes[name]
        if isinstance(value, str):
            data = value.encode("utf-8")
            slots += [float(len(data)), float(sum(data))]
        elif value.dtype.kind == "f" and value.ndim == 1:
            total = 0.0
            for element in value:
                total += float(element)
            slots.append(total)
        elif value.ndim == 1:
            slots.append(float(sum(int(element) for element in value)))
        else:
            slots.append(float(value))
    return [*slots, float(x[0]) + float(x[1])]


def contract_arguments(attributes: dict, descriptor) -> list:
    """The C arguments the rewritten module passes for ``attributes`` (abi/README.md)."""
    arguments = []
    for name in sorted(attributes):
        value = attributes[name]
        if isinstance(value, str):
            arguments.append(descriptor(np.frombuffer(value.encode("utf-8"), np.int8)))
        elif value.ndim == 1:
            arguments.append(descriptor(value))
        elif value.dtype.itemsize == 2 and value.dtype.kind not in "iu":  # f16, bf16: bits
            arguments.append(int(value.view(np.uint16)))
        else:
            arguments.append(value.item())
    return arguments


@LAYOUTS
def test_attr_kernel(kernels, strided):
    module = sample("attribute_kernel")
    x = np.array([0.1, -3.75], np.float32)
    with jax.enable_x64(True):
        run = jax.jit(functools.partial(module.attr_kernel, attributes=module.XLA_ATTRIBUTES))
        via_jax = np.asarray(run(x))
    assert via_jax.dtype == np.float64
    assert via_jax.tolist() == attribute_slots(module.ATTRIBUTES, x)

    descriptor = Descriptors(kernels.ffi, strided)
    result = kernels.ffi.new("rw_memref_f64_1d *")
    arguments = contract_arguments(module.ATTRIBUTES, descriptor)
    kernels.lib._mlir_ciface_attr_kernel(result, descriptor(x), *arguments)
    assert same_bits(take(kernels, result, np.float64), via_jax)


def test_attr_kernel_half_precision_literals_round_trip():
    """The f16/bf16 literals jax printed parse back to the bits the JAX path passes."""
    attributes = sample("attribute_kernel").ATTRIBUTES
    text = (SAMPLES / "attribute_kernel" / "attribute_kernel.rewritten.mlir").read_text()
    for name, dtype in [("f16", np.float16), ("bf16", ml_dtypes.bfloat16)]:
        literal = re.search(rf"%{name} = arith\.constant (\S+) : {name} ", text).group(1)
        assert dtype(float(literal)).view(np.uint16) == attributes[name].view(np.uint16)


def test_xla_rejects_half_precision_scalar_attributes(kernels):
    """Why XLA_ATTRIBUTES exists: jaxlib 0.10.2 cannot run f16/bf16 scalar attributes."""
    module = sample("attribute_kernel")
    x = np.zeros(2, np.float32)
    with jax.enable_x64(True), pytest.raises(Exception, match="Unsupported float attribute"):
        jax.jit(module.attr_kernel)(x).block_until_ready()


# --- count_calls ---------------------------------------------------------------------------------


def test_count_calls(kernels):
    count_and_double = sample("side_effect").count_and_double
    lib = kernels.lib
    x = np.array([1.0, -2.5, 4.0], np.float32)

    lib.count_calls_reset()
    run = jax.jit(count_and_double)
    for _ in range(3):
        assert same_bits(run(x), x * 2)
    assert lib.count_calls_value() == 3 * 3
    jax.jit(functools.partial(count_and_double, tag=-5))(x).block_until_ready()
    assert lib.count_calls_value() == 3 * 3 - 5

    lib.count_calls_reset()
    descriptors = Descriptors(kernels.ffi, strided=True)  # alive: it keeps x's strided copy
    x_desc = descriptors(x)
    lib._mlir_ciface_count_calls(x_desc, 3)
    lib._mlir_ciface_count_calls(x_desc, 4)
    assert lib.count_calls_value() == 7


# --- row_scale -----------------------------------------------------------------------------------


@LAYOUTS
@pytest.mark.parametrize("batch", [1, 3, 7])
def test_row_scale(kernels, strided, batch):
    module = sample("dynamic_shape")
    x = np.random.default_rng(batch).normal(size=(batch, 8)).astype(np.float32)
    via_jax = np.asarray(jax.jit(module.row_scale)(x))

    factors = (np.arange(1, batch + 1, dtype=np.float32) * np.float32(0.5))[:, None]
    np.testing.assert_allclose(via_jax, x * factors, rtol=1e-6)

    # The shape-polymorphic export itself runs in XLA too, with b taken from x.
    exported = jax.export.export(
        jax.jit(module.row_scale),
        platforms=["cpu"],
        disabled_checks=[jax.export.DisabledSafetyCheck.custom_call("row_scale")],
    )(module.polymorphic_input())
    assert same_bits(exported.call(x), via_jax)

    descriptor = Descriptors(kernels.ffi, strided)
    result = kernels.ffi.new("rw_memref_f32_2d *")
    shape = descriptor(np.array([batch, 8], np.int32))  # the extern's shape operand
    kernels.lib._mlir_ciface_row_scale(result, descriptor(x), shape, np.float32(0.5))
    assert same_bits(take(kernels, result, np.float32), via_jax)
