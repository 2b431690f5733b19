"""``noalias`` on the split loops' pointers (rewriter/compile/loop_buffers.py): given where no
buffer a loop writes is reached through two of its pointers, refused elsewhere, and the
gather and scatter of jax's indexing, with duplicate, negative and out-of-range indices,
give jax.jit's bits with it (and on IREE)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rewriter.compile.loop_buffers import noalias_bodies, separate_buffers

# A loop that reads two arguments, one of them at a loaded index (a gather), and writes a
# buffer of its own: apart.
GATHER = """\
func.func @main(%x: memref<8xf32>, %i: memref<8xindex>) -> memref<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %out = memref.alloc() : memref<8xf32>
  scf.parallel (%k) = (%c0) to (%c8) step (%c1) {
    %j = memref.load %i[%k] : memref<8xindex>
    %v = memref.load %x[%j] : memref<8xf32>
    memref.store %v, %out[%k] : memref<8xf32>
    scf.reduce
  }
  return %out : memref<8xf32>
}
"""

# A loop that writes a buffer through one view and reads it through another: its two
# pointers would point into one buffer.
TWO_VIEWS = """\
func.func @main(%x: memref<8xf32>) -> memref<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %buffer = memref.alloc() : memref<8xf32>
  memref.copy %x, %buffer : memref<8xf32> to memref<8xf32>
  %low = memref.subview %buffer[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  %high = memref.subview %buffer[4] [4] [1]
      : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  scf.parallel (%k) = (%c0) to (%c4) step (%c1) {
    %v = memref.load %high[%k] : memref<4xf32, strided<[1], offset: 4>>
    memref.store %v, %low[%k] : memref<4xf32, strided<[1]>>
    scf.reduce
  }
  return %buffer : memref<8xf32>
}
"""

# A loop whose buffer is carried by an scf.for: where it comes from is not known.
CARRIED = """\
func.func @main(%x: memref<8xf32>) -> memref<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %first = memref.alloc() : memref<8xf32>
  %last = scf.for %t = %c0 to %c8 step %c1 iter_args(%y = %first) -> (memref<8xf32>) {
    scf.parallel (%k) = (%c0) to (%c8) step (%c1) {
      %v = memref.load %x[%k] : memref<8xf32>
      memref.store %v, %y[%k] : memref<8xf32>
      scf.reduce
    }
    scf.yield %y : memref<8xf32>
  }
  return %last : memref<8xf32>
}
"""

# A loop that copies a buffer inside: an op the check does not read.
COPY_INSIDE = """\
func.func @main(%x: memref<8xf32>) -> memref<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %out = memref.alloc() : memref<8xf32>
  scf.parallel (%k) = (%c0) to (%c8) step (%c1) {
    memref.copy %x, %out : memref<8xf32> to memref<8xf32>
    scf.reduce
  }
  return %out : memref<8xf32>
}
"""

# A loop that reads and writes one buffer through one value (in place), and reads an
# argument through two views: apart (reads say nothing).
IN_PLACE = """\
func.func @main(%x: memref<8xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %out = memref.alloc() : memref<4xf32>
  %low = memref.subview %x[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  %high = memref.subview %x[4] [4] [1]
      : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  scf.parallel (%k) = (%c0) to (%c4) step (%c1) {
    %a = memref.load %low[%k] : memref<4xf32, strided<[1]>>
    %b = memref.load %high[%k] : memref<4xf32, strided<[1], offset: 4>>
    %o = memref.load %out[%k] : memref<4xf32>
    %s = arith.addf %a, %b : f32
    %t = arith.addf %s, %o : f32
    memref.store %t, %out[%k] : memref<4xf32>
    scf.reduce
  }
  return %out : memref<4xf32>
}
"""


@pytest.mark.iree
@pytest.mark.parametrize(
    ("text", "apart"),
    [(GATHER, True), (IN_PLACE, True), (TWO_VIEWS, False), (CARRIED, False), (COPY_INSIDE, False)],
    ids=["gather", "in_place", "two_views", "carried", "copy_inside"],
)
def test_loops_are_apart_only_where_each_written_buffer_has_one_pointer(text, apart):
    assert separate_buffers(text) is apart


def test_every_pointer_of_every_outlined_body_becomes_noalias():
    before = """\
define internal void @parallel_compute_fn(i64 %0, ptr %1, ptr %2, i64 %3) {
  ret void
}

define internal void @parallel_compute_fn_0(ptr %0, ptr %1) {
  ret void
}

define ptr @rw_entry_main(ptr %0, ptr %1) {
  ret ptr %0
}
"""
    after = """\
define internal void @parallel_compute_fn(i64 %0, ptr noalias %1, ptr noalias %2, i64 %3) {
  ret void
}

define internal void @parallel_compute_fn_0(ptr noalias %0, ptr noalias %1) {
  ret void
}

define ptr @rw_entry_main(ptr %0, ptr %1) {
  ret ptr %0
}
"""
    assert noalias_bodies(before) == after


SIZE = 1 << 20  # 16 blocks of parallel_loops.MIN_TASK_SIZE: split


def _indexed(size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Values, indices and updates: the indices repeat (a tenth of them one index), and a
    few are negative (counted from the end) or past either end."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=size).astype(np.float32)
    i = rng.integers(-size, size, size).astype(np.int32)
    i[::10] = 7
    i[1::97] = size + 5
    i[2::89] = -size - 3
    v = rng.normal(size=size).astype(np.float32)
    return x, i, v


def _gather(x, i, v):
    return x[i] + v


def _scatter_add(x, i, v):
    return x.at[i].add(v)


@pytest.mark.slow
@pytest.mark.jax
@pytest.mark.toolchain
@pytest.mark.iree
@pytest.mark.parametrize("function", [_gather, _scatter_add], ids=["gather", "scatter_add"])
def test_split_gathers_and_scatters_give_the_bits_of_jax_jit(function, tmp_path: Path):
    import jax

    import rewriter
    from rewriter.compile import compile_module, load

    arguments = _indexed(SIZE)
    text = rewriter.rewrite(rewriter.export(function, *arguments).text).text
    library = tmp_path / "lib.so"
    stages = tmp_path / "stages"
    compile_module(text, library, threads=2, keep_temps=stages)
    lowered = (stages / "6-translate.ll").read_text()
    bodies = [line for line in lowered.splitlines() if "@parallel_compute_fn" in line]
    definitions = [line for line in bodies if line.startswith("define")]
    assert definitions and all("ptr noalias %" in line for line in definitions)
    expected = np.asarray(jax.jit(function)(*arguments))
    assert load(library).main(*arguments).tobytes() == expected.tobytes()


@pytest.mark.slow
@pytest.mark.jax
@pytest.mark.iree
@pytest.mark.parametrize("function", [_gather, _scatter_add], ids=["gather", "scatter_add"])
def test_iree_gathers_and_scatters_give_the_bits_of_jax_jit(function, tmp_path: Path):
    """The same programs on IREE (local-task for the gather at this size, drivers.py)."""
    import jax

    import rewriter
    from rewriter.iree import load as load_iree

    arguments = _indexed(SIZE)
    module = tmp_path / "module.mlir"
    module.write_text(rewriter.rewrite(rewriter.export(function, *arguments).text, abi="iree").text)
    expected = np.asarray(jax.jit(function)(*arguments))
    got = np.asarray(load_iree(module, imports={}).main(*arguments))
    assert got.tobytes() == expected.tobytes()


# A loop that writes a buffer a branch passes (a block's argument, which may be %a) and
# reads %a: not the function's arguments.
BRANCHED = """\
func.func @main(%x: memref<8xf32>, %c: i1) -> memref<8xf32> {
  %a = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<8xf32>
  cf.cond_br %c, ^join(%a : memref<8xf32>), ^join(%b : memref<8xf32>)
^join(%chosen: memref<8xf32>):
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%k) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %a[%k] : memref<8xf32>
    memref.store %v, %chosen[%k] : memref<8xf32>
    scf.reduce
  }
  return %chosen : memref<8xf32>
}
"""


@pytest.mark.iree
def test_a_buffer_a_branch_passes_is_of_unknown_origin():
    assert separate_buffers(BRANCHED) is False
