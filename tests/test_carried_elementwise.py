"""A short loop of elementwise updates of one array is one pass with the loop inside each
element, the argument read directly, and the same results to the bit
(rewriter/compile/carried_elementwise.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rewriter.compile import carried_elementwise, compile_module, load

pytestmark = [pytest.mark.toolchain, pytest.mark.iree, pytest.mark.slow]

ARRAY = "tensor<5x67xf32>"


def _loop(count: int, start: str) -> str:
    """A while loop of ``count`` updates ``y = (y - 0.5) * 1.25 + x`` (``x`` the second
    argument) from ``start``: ``%arg0``, or an expression of ``%arg0`` and ``%x``."""
    first = "%arg0" if start == "%arg0" else "%start"
    made = "" if start == "%arg0" else f"%start = {start} : {ARRAY}"
    return f"""\
func.func public @main(%arg0: {ARRAY}, %x: {ARRAY}) -> {ARRAY} {{
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %count = stablehlo.constant dense<{count}> : tensor<i32>
  %scale = stablehlo.constant dense<1.25> : {ARRAY}
  %half = stablehlo.constant dense<0.5> : {ARRAY}
  {made}
  %r:2 = stablehlo.while(%i = %c0, %y = {first}) : tensor<i32>, {ARRAY}
  cond {{
    %lt = stablehlo.compare LT, %i, %count, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }} do {{
    %next = stablehlo.add %i, %c1 : tensor<i32>
    %a = stablehlo.subtract %y, %half : {ARRAY}
    %b = stablehlo.multiply %a, %scale : {ARRAY}
    %new = stablehlo.add %b, %x : {ARRAY}
    stablehlo.return %next, %new : tensor<i32>, {ARRAY}
  }}
  return %r#1 : {ARRAY}
}}
"""


def _expected(y: np.ndarray, x: np.ndarray, count: int) -> np.ndarray:
    for _ in range(count):
        y = (y - np.float32(0.5)) * np.float32(1.25) + x
    return y


def _compiled(text: str, tmp_path: Path, name: str, monkeypatch, fused: bool):
    """The module's ``main`` and its library-calls stage, with or without the fix."""
    if not fused:
        monkeypatch.setattr(carried_elementwise, "loops_inside_elements", lambda t: t)
    stages = tmp_path / f"{name}-{fused}"
    library = tmp_path / f"{name}-{fused}.so"
    compile_module(text, library, keep_temps=stages, cache=False)
    monkeypatch.undo()
    stage = (stages / "3-library-calls.mlir").read_text(encoding="utf-8")
    return load(library).main, stage[stage.index("func.func") :]


def _inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.normal(size=(5, 67)).astype(np.float32) for _ in range(2)]


@pytest.mark.parametrize("start", ["%arg0", "stablehlo.add %arg0, %x"], ids=["copy", "computed"])
def test_a_short_loop_is_one_pass_with_the_same_bits(tmp_path: Path, monkeypatch, start):
    text = _loop(5, start)
    fused, stage = _compiled(text, tmp_path, "short", monkeypatch, True)
    passes, _ = _compiled(text, tmp_path, "short", monkeypatch, False)
    # the loop inside the one elementwise generic, which reads the argument: no copy of it
    assert stage.count("scf.for") == 1 and stage.count("linalg.generic") == 1 + (start != "%arg0")
    assert "memref.copy" not in stage
    assert stage.rindex("linalg.generic") < stage.index("scf.for") < stage.rindex("linalg.yield")
    y, x = _inputs()
    got, want = fused(y, x), passes(y, x)
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))
    first = y if start == "%arg0" else y + x
    np.testing.assert_allclose(got, _expected(first, x, 5), rtol=1e-5)
    np.testing.assert_array_equal(y, _inputs()[0])  # the argument is only read


def test_a_long_loop_stays_passes(tmp_path: Path, monkeypatch):
    count = carried_elementwise.MOST_ITERATIONS + 1
    main, stage = _compiled(_loop(count, "%arg0"), tmp_path, "long", monkeypatch, True)
    assert stage.index("scf.for") < stage.index("linalg.generic")  # the generic in the loop
    y, x = _inputs()
    np.testing.assert_allclose(main(y, x), _expected(y, x, count), rtol=1e-5)


# A bufferized loop whose update also reads the buffer it starts from (and updates in
# place) as another input: each iteration reads what the one before wrote, so running the
# iterations inside each element would read the start once; it is left as it is.
READS_ITS_START = """\
#map = affine_map<(d0) -> (d0)>
func.func @f(%x: memref<8xf32>) -> memref<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %start = memref.alloc() : memref<8xf32>
  memref.copy %x, %start : memref<8xf32> to memref<8xf32>
  %view = memref.cast %start : memref<8xf32> to memref<?xf32>
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%y = %start) -> (memref<8xf32>) {
    linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
        ins(%y, VIEW : memref<8xf32>, VIEW_TYPE) outs(%y : memref<8xf32>) {
    ^bb0(%in: f32, %other: f32, %o: f32):
      %d = arith.addf %in, %other : f32
      linalg.yield %d : f32
    }
    scf.yield %y : memref<8xf32>
  }
  return %r : memref<8xf32>
}
"""


@pytest.mark.parametrize(
    "view, view_type",
    [("%start", "memref<8xf32>"), ("%view", "memref<?xf32>"), ("%x", "memref<8xf32>")],
)
def test_a_loop_reading_its_start_elsewhere_is_left_alone(view: str, view_type: str):
    text = READS_ITS_START.replace("VIEW_TYPE", view_type).replace("VIEW", view)
    changed = carried_elementwise.loops_inside_elements(text)
    if view == "%x":  # the argument, which no iteration writes: one pass
        assert "scf.for" in changed and changed.index("linalg.generic") < changed.index("scf.for")
    else:
        assert changed == text
