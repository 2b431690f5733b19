"""A large result's buffer becomes the numpy array's memory, freed when the array goes, and
a small one is copied (rewriter/compile/loader.py, ``_take_results``)."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import numpy as np
import pytest

from rewriter.compile import compile_module, load
from rewriter.compile import loader as compiled_loader

pytestmark = [pytest.mark.toolchain]

DOUBLED = """\
func.func public @main(%x: tensor<SIZExf32>) -> tensor<SIZExf32> {
  %0 = stablehlo.add %x, %x : tensor<SIZExf32>
  return %0 : tensor<SIZExf32>
}
"""


class _CountingLibc:
    """libc whose ``free`` counts its calls."""

    def __init__(self, libc) -> None:
        self.libc = libc
        self.frees = 0

    def free(self, pointer) -> None:
        self.frees += 1
        self.libc.free(pointer)

    def malloc_usable_size(self, pointer) -> int:
        return self.libc.malloc_usable_size(pointer)


def _doubled(tmp_path: Path, size: int, monkeypatch) -> tuple[object, list[_CountingLibc]]:
    taken = compiled_loader._take_results
    counters: list[_CountingLibc] = []

    def counted(ffi, libc, *arguments):
        counters.append(_CountingLibc(libc))
        return taken(ffi, counters[-1], *arguments)

    monkeypatch.setattr(compiled_loader, "_take_results", counted)
    library = tmp_path / f"doubled{size}.so"
    compile_module(DOUBLED.replace("SIZE", str(size)), library)
    return load(library).main, counters


def test_a_large_result_is_its_buffer_freed_with_the_array(tmp_path: Path, monkeypatch):
    size = compiled_loader.OWNED_RESULT_BYTES // 4
    main, counters = _doubled(tmp_path, size, monkeypatch)
    x = np.arange(size, dtype=np.float32)
    first = main(x)
    second = main(x + 1)  # the first buffer is still the first result's, not reused
    assert not first.flags.owndata and first.flags.writeable and first.flags.c_contiguous
    assert first.ctypes.data % 64 == 0  # the compiled code's aligned pointer, not a copy
    assert [c.frees for c in counters] == [0, 0]
    np.testing.assert_array_equal(first, 2 * x)
    np.testing.assert_array_equal(second, 2 * (x + 1))
    del first
    gc.collect()
    assert [c.frees for c in counters] == [1, 0]
    del second
    gc.collect()
    assert [c.frees for c in counters] == [1, 1]


def test_a_small_result_is_copied_and_its_buffer_freed_at_once(tmp_path: Path, monkeypatch):
    size = compiled_loader.OWNED_RESULT_BYTES // 4 - 1
    main, counters = _doubled(tmp_path, size, monkeypatch)
    x = np.arange(size, dtype=np.float32)
    result = main(x)
    assert result.flags.owndata
    assert [c.frees for c in counters] == [1]
    np.testing.assert_array_equal(result, 2 * x)


@pytest.mark.jax
def test_a_large_result_that_is_a_small_part_of_its_buffer_is_copied(tmp_path: Path):
    """``lax.top_k`` of 9,000 of 40,000: its results are the first 9,000 of the sorted
    buffers (160 KB), returned as views; the 36 KB of values are copied, and the buffer
    freed, rather than kept whole by the array."""
    import jax

    import rewriter

    x = np.random.default_rng(0).normal(size=40_000).astype(np.float32)
    text = rewriter.export(lambda x: jax.lax.top_k(x, 9_000), x).text
    compile_module(rewriter.rewrite(text).text, tmp_path / "top.so")
    values, indices = load(tmp_path / "top.so").main(x)
    assert values.nbytes >= compiled_loader.OWNED_RESULT_BYTES
    assert values.flags.owndata and indices.flags.owndata
    want_values, want_indices = jax.jit(lambda x: jax.lax.top_k(x, 9_000))(x)
    np.testing.assert_array_equal(values, want_values)
    np.testing.assert_array_equal(indices, want_indices)


def test_a_call_makes_no_python_frame_of_cffi(tmp_path: Path):
    """A call's descriptors, casts and argument buffers come from cffi's C functions, not
    from ``FFI``'s Python methods around them, a frame each (a call of ``x + 1`` on 10
    floats made five: ``benchmarks/call_overhead.py``)."""
    library = tmp_path / "doubled10.so"
    compile_module(DOUBLED.replace("SIZE", "10"), library)
    main = load(library).main
    x = np.arange(10, dtype=np.float32)
    main(x)  # cffi looks libc's functions up on their first use
    frames: list[str] = []

    def profile(frame, event, argument) -> None:
        if event == "call" and "cffi" in frame.f_code.co_filename:
            frames.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        got = main(x)
    finally:
        sys.setprofile(None)
    assert frames == []
    np.testing.assert_array_equal(got, x + x)
