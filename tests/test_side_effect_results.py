"""A custom call with results and ``has_side_effect = true`` whose results nobody reads.

XLA keeps such a call for its effect: ``jax.jit`` runs the handler on every call. So must
both paths. On the IREE path a call served by an XLA FFI handler normally becomes a
dispatch (rewriter/iree/dispatches.py), and IREE drops a dispatch whose results are
unused, the effect with it; the rewrite records ``has_side_effect`` on the IREE import
(``rewriter.has_side_effect``), and such a call stays a VM import, which IREE keeps. A call
without the flag still becomes a dispatch.
"""

from __future__ import annotations

import ctypes

import jax
import numpy as np
import pytest
from kernel_library import build_handler_library

import rewriter
from rewriter.compile import compile_module
from rewriter.compile import load as load_compiled
from rewriter.iree import from_module_text
from rewriter.iree import load as load_iree

pytestmark = [
    pytest.mark.toolchain,
    pytest.mark.toolchain("gcc", "g++"),
    pytest.mark.iree,
    pytest.mark.jax,
    pytest.mark.slow,
]

# A handler that copies its operand and counts its calls.
COUNTED = r"""
#include <cstdint>
#include "xla/ffi/api/ffi.h"
namespace ffi = xla::ffi;
static int64_t calls = 0;
extern "C" int64_t counted_calls() { return calls; }
static ffi::Error CountedImpl(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  calls += 1;
  for (size_t i = 0; i < x.element_count(); ++i) y->typed_data()[i] = x.typed_data()[i];
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(Counted, CountedImpl,
    ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>());
"""

CALLS = 3


def counted_and_doubled(x):
    """The call's result is unused: only its effect (the count) can be seen."""
    jax.ffi.ffi_call("counted", jax.ShapeDtypeStruct(x.shape, x.dtype), has_side_effect=True)(x)
    return x * 2


def pure_counted(x):
    return jax.ffi.ffi_call("counted", jax.ShapeDtypeStruct(x.shape, x.dtype))(x) * 2


@pytest.fixture(scope="module")
def counted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("counted")
    source = folder / "counted.cc"
    source.write_text(COUNTED)
    library = ctypes.CDLL(str(build_handler_library(source, folder / "counted.so")))
    library.counted_calls.restype = ctypes.c_int64
    capsule = jax.ffi.pycapsule(library.Counted)
    jax.ffi.register_ffi_target("counted", capsule, platform="cpu")
    return library, capsule


def calls_made(library, function) -> int:
    x = np.arange(4, dtype=np.float32)
    before = library.counted_calls()
    for _ in range(CALLS):
        np.testing.assert_array_equal(function(x), x * 2)
    return library.counted_calls() - before


def test_jax_runs_the_call_for_its_effect(counted):
    library, _ = counted
    assert calls_made(library, jax.jit(counted_and_doubled)) == CALLS


def test_the_compiled_path_runs_the_call_for_its_effect(counted, tmp_path):
    library, capsule = counted
    original = rewriter.export(counted_and_doubled, np.zeros(4, np.float32)).original
    shared = tmp_path / "libcounted.so"
    compile_module(rewriter.rewrite(original).text, shared, ffi_bridge=True)
    module = load_compiled(shared, ffi_handlers={"counted": capsule})
    assert calls_made(library, module.main) == CALLS


@pytest.mark.parametrize("driver", ["local-task", "local-sync"])
def test_the_iree_path_runs_the_call_for_its_effect(counted, tmp_path, driver):
    library, capsule = counted
    original = rewriter.export(counted_and_doubled, np.zeros(4, np.float32)).original
    path = tmp_path / "counted.iree.mlir"
    path.write_text(rewriter.rewrite(original, abi="iree").text)
    module = load_iree(path, imports={"counted": capsule}, driver=driver)
    assert calls_made(library, module.main) == CALLS


def test_the_rewrite_records_the_effect_on_the_import_only_when_the_call_has_one():
    x = np.zeros(4, np.float32)
    effects = {}
    for function in (counted_and_doubled, pure_counted):
        text = rewriter.rewrite(rewriter.export(function, x).original, abi="iree").text
        (signature,) = from_module_text(text)
        effects[function.__name__] = signature.side_effect
    assert effects == {"counted_and_doubled": True, "pure_counted": False}


def test_a_call_without_the_effect_is_still_a_dispatch(counted, tmp_path):
    from rewriter.iree import compile_module as compile_vmfb
    from rewriter.iree import read_vmfb

    x = np.zeros(4, np.float32)
    for function, dispatched in ((pure_counted, True), (counted_and_doubled, False)):
        path = tmp_path / f"{function.__name__}.iree.mlir"
        path.write_text(rewriter.rewrite(rewriter.export(function, x).original, abi="iree").text)
        vmfb = tmp_path / f"{function.__name__}.vmfb"
        compile_vmfb(path, vmfb, ffi_dispatch=True)
        (signature,) = read_vmfb(vmfb)
        assert signature.dispatch is dispatched
