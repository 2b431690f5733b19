"""What the compiled path makes of ops whose time grew faster than XLA's with their size
(benchmarks/op_complexity.py): structural checks of the bufferized module, not
timings."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from test_op_coverage import token_loop

from rewriter.compile import compile_module, load
from rewriter.compile.loop_carries import carry_in_place


def _yields_what_it_carries(loop: str) -> bool:
    """Whether the first ``scf.for`` in ``loop`` yields the buffer it carries."""
    carried = re.search(r"iter_args\((%\w+) = ", loop)
    return carried is not None and f"scf.yield {carried.group(1)} :" in loop


def _bufferized(folder: Path) -> str:
    """The module after bufferization and the library calls, from a compile's kept stages."""
    (stage,) = folder.glob("*-library-calls.mlir")
    return stage.read_text(encoding="utf-8")


@pytest.mark.toolchain
@pytest.mark.jax
def test_a_gather_of_random_indices_is_one_loop_with_its_index_arithmetic(tmp_path: Path):
    """``x[i] + v``: jax wraps negative indices, makes ``i`` N x 1, and the rewrite clamps
    it (gather_bounds.py). Unit dimensions folded, the index arithmetic, the gather and
    the add fuse into one loop that writes the result alone; the reshapes between N and
    N x 1 used to keep them three loops, each writing N elements."""
    import rewriter

    rng = np.random.default_rng(0)
    x = rng.normal(size=1000).astype(np.float32)
    i = rng.integers(-1000, 1000, 1000).astype(np.int32)
    v = rng.normal(size=1000).astype(np.float32)
    text = rewriter.export(lambda x, i, v: x[i] + v, x, i, v).text
    temps = tmp_path / "temps"
    compile_module(rewriter.rewrite(text).text, tmp_path / "lib.so", keep_temps=temps)
    bufferized = _bufferized(temps)
    assert bufferized.count("memref.alloc(") == 1, bufferized
    assert bufferized.count("linalg.generic") == 1, bufferized
    np.testing.assert_array_equal(load(tmp_path / "lib.so").main(x, i, v), x[i] + v)


@pytest.mark.toolchain
@pytest.mark.jax
def test_a_scatter_add_reads_its_indices_in_one_loop_before_the_scatter(tmp_path: Path):
    """``x.at[i].add(v)``: jax wraps negative indices, and the rewrite clamps them and
    turns the updates out of range into ``-0.0`` (scatter_masks.py): two loops read the
    wrapped indices. Fused as one loop with two results (IREE's multi-use producer fusion),
    the indices are read once and the wrapped ones never written; they were three loops,
    each writing N elements, before the copy of ``x`` and the scatter."""
    import jax

    import rewriter

    rng = np.random.default_rng(0)
    x = rng.normal(size=1000).astype(np.float32)
    i = rng.integers(-1200, 1200, 1000).astype(np.int32)
    i[::7] = 3
    v = rng.normal(size=1000).astype(np.float32)
    function = lambda x, i, v: x.at[i].add(v)  # noqa: E731
    text = rewriter.export(function, x, i, v).text
    temps = tmp_path / "temps"
    compile_module(rewriter.rewrite(text).text, tmp_path / "lib.so", keep_temps=temps)
    bufferized = _bufferized(temps)
    assert bufferized.count("linalg.generic") == 1, bufferized
    assert bufferized.count("memref.alloc(") == 3, bufferized  # indices, updates, result
    expected = np.asarray(jax.jit(function)(x, i, v))
    assert load(tmp_path / "lib.so").main(x, i, v).tobytes() == expected.tobytes()


# benchmarks/op_complexity.py's loop carrying a token, on 1,000 elements.
TOKEN_LOOP = token_loop("tensor<1000xf32>")


@pytest.mark.toolchain
def test_a_loop_carrying_a_token_updates_its_tensor_in_place(tmp_path: Path, monkeypatch):
    """One buffer for the carried tensor (a copy of the argument, which is the caller's),
    updated in place by every iteration: nothing is allocated in the loop. Bufferization
    alone allocated a new buffer each iteration (loop_carries.py). The loop is left a loop
    of passes here: carried_elementwise.py then runs it inside each element, one pass
    (tests/test_carried_elementwise.py)."""
    import rewriter
    from rewriter.compile import carried_elementwise

    monkeypatch.setattr(carried_elementwise, "loops_inside_elements", lambda text: text)

    temps = tmp_path / "temps"
    compile_module(rewriter.rewrite(TOKEN_LOOP).text, tmp_path / "lib.so", keep_temps=temps)
    bufferized = _bufferized(temps)
    loop = bufferized[bufferized.index("scf.for") :]
    assert bufferized.count("memref.alloc(") == 1, bufferized
    assert "memref.alloc(" not in loop, bufferized
    assert _yields_what_it_carries(loop), bufferized
    x = np.random.default_rng(0).normal(size=1000).astype(np.float32)
    kept = x.copy()
    np.testing.assert_array_equal(load(tmp_path / "lib.so").main(x), x * 8)
    np.testing.assert_array_equal(x, kept)  # the caller's array is not written


# A bufferized loop as one-shot bufferization leaves it: the carried buffer starts as a
# copy of the argument, and each iteration allocates the next.
BUFFERIZED_LOOP = """\
#map = affine_map<(d0) -> (d0)>
func.func @f(%x: memref<8xf32>, %out: memref<8xf32>) -> memref<8xf32> {
  %two = arith.constant 2.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %start = memref.alloc() : memref<8xf32>
  memref.copy %x, %start : memref<8xf32> to memref<8xf32>
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%y = %start) -> (memref<8xf32>) {
    %next = memref.alloc() : memref<8xf32>
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
        ins(%y : memref<8xf32>) outs(%next : memref<8xf32>) {
    ^bb0(%in: f32, %o: f32):
      %d = arith.mulf %in, %two : f32
      linalg.yield %d : f32
    }
    AFTER
    scf.yield %next : memref<8xf32>
  }
  return %r : memref<8xf32>
}
"""


def test_an_elementwise_update_of_a_carried_buffer_is_written_in_place():
    text = carry_in_place(BUFFERIZED_LOOP.replace("AFTER", ""))
    assert text.count("memref.alloc(") == 1
    loop = text[text.index("scf.for") :]
    carried = re.search(r"iter_args\((%\w+) = ", loop)
    assert carried is not None
    name = carried.group(1)
    assert f"ins({name} : memref<8xf32>) outs({name} : memref<8xf32>)" in loop
    assert _yields_what_it_carries(loop)


@pytest.mark.parametrize(
    "change",
    [
        # the old value is read after the update: it must survive it
        ("AFTER", "memref.copy %y, %out : memref<8xf32> to memref<8xf32>"),
        # the loop starts from the caller's buffer, which must not be written
        ("iter_args(%y = %start)", "iter_args(%y = %x)"),
        # the update reads a neighbour: element k written before element k + 1 is read
        ("indexing_maps = [#map, #map]", "indexing_maps = [affine_map<(d0) -> (7 - d0)>, #map]"),
        # the starting buffer is read after the loop
        ("  return %r", "  memref.copy %start, %out : memref<8xf32> to memref<8xf32>\n  return %r"),
    ],
)
def test_a_carried_buffer_that_is_read_elsewhere_is_left_alone(change: tuple[str, str]):
    text = BUFFERIZED_LOOP.replace("AFTER", "").replace(*change)
    if change[0] == "AFTER":
        text = BUFFERIZED_LOOP.replace(*change)
    assert carry_in_place(text) == text


def test_a_buffer_that_starts_two_carried_values_is_left_alone():
    """Updated in place, one value would change the other: both are that buffer."""
    two = (
        BUFFERIZED_LOOP.replace("AFTER", "")
        .replace("iter_args(%y = %start)", "iter_args(%y = %start, %z = %start)")
        .replace("-> (memref<8xf32>) {", "-> (memref<8xf32>, memref<8xf32>) {")
        .replace(
            "scf.yield %next : memref<8xf32>", "scf.yield %next, %z : memref<8xf32>, memref<8xf32>"
        )
        .replace("%r = scf.for", "%r, %s = scf.for")
    )
    assert carry_in_place(two) == two


@pytest.mark.toolchain
@pytest.mark.jax
def test_a_while_loop_whose_condition_reads_the_carry_neither_copies_nor_allocates_it(
    tmp_path: Path,
):
    """``lax.while_loop`` until the first element reaches 100: an ``scf.while``, whose
    condition region bufferization made copy the carried tensor every iteration, and
    whose body wrote each update into a new buffer. Both now use the one buffer."""
    import jax

    import rewriter

    def doubled(y):
        return jax.lax.while_loop(lambda z: z[0] < 100.0, lambda z: z * 2.0, y)

    x = np.random.default_rng(0).uniform(1, 2, 1000).astype(np.float32)
    temps = tmp_path / "temps"
    text = rewriter.rewrite(rewriter.export(doubled, x).text).text
    compile_module(text, tmp_path / "lib.so", keep_temps=temps)
    bufferized = _bufferized(temps)
    loop = bufferized[bufferized.index("scf.while") :]
    assert "memref.alloc() alignment = 64 : memref<1000xf32>" not in loop, bufferized
    assert "memref.copy" not in loop, bufferized
    kept = x.copy()
    got = load(tmp_path / "lib.so").main(x)
    np.testing.assert_array_equal(got, np.asarray(jax.jit(doubled)(x)))
    np.testing.assert_array_equal(x, kept)


# A bufferized while loop as one-shot bufferization leaves it: the condition region copies
# the carried buffer before handing it on, the body writes each update into a new one.
BUFFERIZED_WHILE = """\
#map = affine_map<(d0) -> (d0)>
func.func @f(%x: memref<8xf32>) -> memref<8xf32> {
  %two = arith.constant 2.0 : f32
  %c0 = arith.constant 0 : index
  %limit = arith.constant 100.0 : f32
  %start = memref.alloc() : memref<8xf32>
  memref.copy %x, %start : memref<8xf32> to memref<8xf32>
  %r = scf.while (%a = %start) : (memref<8xf32>) -> memref<8xf32> {
    %first = memref.load %a[%c0] : memref<8xf32>
    CHECK
    %go = arith.cmpf olt, %first, %limit : f32
    %handed = memref.alloc() : memref<8xf32>
    memref.copy %a, %handed : memref<8xf32> to memref<8xf32>
    scf.condition(%go) %handed : memref<8xf32>
  } do {
  ^bb0(%b: memref<8xf32>):
    %next = memref.alloc() : memref<8xf32>
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
        ins(%b : memref<8xf32>) outs(%next : memref<8xf32>) {
    ^bb0(%in: f32, %o: f32):
      %d = arith.mulf %in, %two : f32
      linalg.yield %d : f32
    }
    scf.yield %next : memref<8xf32>
  }
  return %r : memref<8xf32>
}
"""


def test_a_while_loop_hands_on_and_updates_its_carried_buffer_in_place():
    text = carry_in_place(BUFFERIZED_WHILE.replace("CHECK", ""))
    assert text.count("memref.alloc(") == 1
    assert text.count("memref.copy") == 1  # the argument's, before the loop


def test_a_while_loop_whose_condition_writes_the_carry_is_left_alone():
    """Only a condition region that reads the buffer hands it on (conservative: what it
    writes, bufferization has reasons for)."""
    text = BUFFERIZED_WHILE.replace("CHECK", "memref.store %limit, %a[%c0] : memref<8xf32>")
    assert carry_in_place(text) == text


# A while loop whose condition hands the body one of the two values it carries (as jax's
# loop of ``betainc`` drops its flag): the body's arguments are fewer than the loop's.
FEWER_HANDED_ON = """\
#map = affine_map<(d0) -> (d0)>
func.func @f(%x: memref<8xf32>, %flag: memref<i1>) -> memref<8xf32> {
  %two = arith.constant 2.0 : f32
  %c0 = arith.constant 0 : index
  %limit = arith.constant 100.0 : f32
  %start = memref.alloc() : memref<8xf32>
  memref.copy %x, %start : memref<8xf32> to memref<8xf32>
  %r = scf.while (%a = %start, %f = %flag) : (memref<8xf32>, memref<i1>) -> memref<8xf32> {
    %first = memref.load %a[%c0] : memref<8xf32>
    %go = arith.cmpf olt, %first, %limit : f32
    %handed = memref.alloc() : memref<8xf32>
    memref.copy %a, %handed : memref<8xf32> to memref<8xf32>
    scf.condition(%go) %handed : memref<8xf32>
  } do {
  ^bb0(%b: memref<8xf32>):
    %next = memref.alloc() : memref<8xf32>
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
        ins(%b : memref<8xf32>) outs(%next : memref<8xf32>) {
    ^bb0(%in: f32, %o: f32):
      %d = arith.mulf %in, %two : f32
      linalg.yield %d : f32
    }
    scf.yield %next, %flag : memref<8xf32>, memref<i1>
  }
  return %r : memref<8xf32>
}
"""


def test_a_while_loop_that_hands_on_fewer_values_than_it_carries_is_rewritten():
    """The body's one argument is the condition's copy of the first carried value: that
    value is handed on and updated in place (the rewrite read a body argument for every
    carried value and raised IndexError)."""
    text = carry_in_place(FEWER_HANDED_ON)
    assert text.count("memref.alloc(") == 1
    assert text.count("memref.copy") == 1  # the argument's, before the loop


@pytest.mark.slow
@pytest.mark.toolchain
def test_the_incomplete_beta_function_compiles_and_gives_jaxs_numbers(tmp_path: Path):
    """``jax.scipy.special.betainc``: a while loop whose condition drops a value."""
    import jax
    import jax.scipy as jsp

    import rewriter

    def betainc(a, b, x):
        return jsp.special.betainc(a, b, x)

    generator = np.random.default_rng(0)
    a, b = (generator.uniform(0.1, 3.1, 300).astype(np.float32) for _ in range(2))
    x = generator.uniform(0, 1, 300).astype(np.float32)
    text = rewriter.rewrite(rewriter.export(betainc, a, b, x).text).text
    compile_module(text, tmp_path / "lib.so")
    got = load(tmp_path / "lib.so").main(a, b, x)
    np.testing.assert_allclose(got, jax.jit(betainc)(a, b, x), rtol=2e-6, atol=1e-7)
