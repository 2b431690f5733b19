"""Two results of a call that share one buffer are both read before it is freed
(rewriter/compile/loader.py, ``_take_results``)."""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np
import pytest

from rewriter.compile import compile_module, load
from rewriter.compile import loader as compiled_loader

pytestmark = [pytest.mark.toolchain]

# A sum returned twice (a sum and a mean over the same rows, after CSE): the compiled code
# returns the one buffer twice. (A sum over a dimension of 1 is no buffer of its own: it
# is a view of the argument, as XLA folds it, which ``load`` copies.)
TWICE = """\
func.func public @main(%x: tensor<64x2xf64>) -> (tensor<64xf64>, tensor<64xf64>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f64>
  %0 = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1]
      : (tensor<64x2xf64>, tensor<f64>) -> tensor<64xf64>
  return %0, %0 : tensor<64xf64>, tensor<64xf64>
}
"""


class _PoisoningLibc:
    """libc whose ``free`` first overwrites the whole block with 0xFF bytes (NaN), as
    malloc may reuse it at once: a read after the free then sees it."""

    def __init__(self, ffi, libc) -> None:
        self.ffi, self.libc = ffi, libc
        self.system = ctypes.CDLL(None)
        self.system.malloc_usable_size.restype = ctypes.c_size_t
        self.system.malloc_usable_size.argtypes = [ctypes.c_void_p]

    def free(self, pointer) -> None:
        address = int(self.ffi.cast("uintptr_t", pointer))
        ctypes.memset(address, 0xFF, self.system.malloc_usable_size(address))
        self.libc.free(pointer)


def test_two_results_in_one_buffer_are_both_the_values(tmp_path: Path, monkeypatch):
    taken = compiled_loader._take_results

    def poisoned(ffi, libc, *arguments):
        return taken(ffi, _PoisoningLibc(ffi, libc), *arguments)

    monkeypatch.setattr(compiled_loader, "_take_results", poisoned)
    library = tmp_path / "twice.so"
    compile_module(TWICE, library, keep_temps=tmp_path / "stages")
    stages = (tmp_path / "stages" / "3-library-calls.mlir").read_text(encoding="utf-8")
    assert "return %alloc, %alloc" in stages  # one buffer, returned twice
    x = np.random.default_rng(0).normal(size=(64, 2))
    first, second = load(library).main(x)
    np.testing.assert_array_equal(first, x[:, 0] + x[:, 1])
    np.testing.assert_array_equal(second, x[:, 0] + x[:, 1])
