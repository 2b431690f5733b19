"""The planning modules called directly, each on a small input whose expected outcome is
derived by hand in the test's docstring (the end-to-end tests compare whole exports)."""

from __future__ import annotations

import re

import pytest

from rewriter.plan.call_shapes import CallShapes
from rewriter.plan.calling_conventions import C_ABI
from rewriter.plan.edits import _LONGEST_KEPT, Edit, apply_edits
from rewriter.plan.judging import TARGET
from rewriter.plan.planner import _call_shapes, plan_rewrite, warning_at
from rewriter.syntax.blanks import shape_of
from rewriter.syntax.diagnostics import Diagnostic, Severity
from rewriter.syntax.holes import SPELLED_AFTER, ShapeFinder
from rewriter.syntax.scan import scan
from rewriter.syntax.source import Source

CALL = (
    "%{result} = stablehlo.custom_call @{target}(%{operand}) {{api_version = 4 : i32, "
    "backend_config = {{factor = {factor} : f32}}}} : (tensor<4xf32>) -> tensor<4xf32>"
)
FIRST = CALL.format(result="0", target="scale", operand="arg0", factor="2.0")
SECOND = CALL.format(result="1", target="scale", operand="0", factor="3.0")
MODULE = f"""module @m {{
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {{
    {FIRST}
    {SECOND}
    return %1 : tensor<4xf32>
  }}
}}
"""


def _source() -> Source:
    return Source(MODULE, "m.mlir")


# ---------------------------------------------------------------- holes.ShapeFinder


def test_a_statement_s_holes_are_the_parts_other_statements_change():
    """In ``%0 = stablehlo.custom_call @scale(%arg0) {api_version = 4 : i32, ...}`` the holes
    are, left to right: the result name ``0`` (after ``%``, offset 1), the target ``scale``
    (after ``custom_call @``, offset 28), the operand ``arg0`` (offset 35), the integer
    ``4`` (an ``=`` before it and ``: i32`` after it, offset 56) and the float ``2.0`` (``=``
    before, ``: f32`` after, offset 92). The shape blanks each: names and targets to ``_``,
    integers to ``0``, floats to ``0.0``. Types and attribute names are not holes."""
    shape, holes = shape_of(FIRST)
    assert holes == [(1, 2, "name"), (28, 33, "target"), (35, 39, "name"), (56, 57, "int"),
                     (92, 95, "float")]  # fmt: skip
    assert shape == CALL.format(result="_", target="_", operand="_", factor="0.0").replace(
        "api_version = 4", "api_version = 0"
    )


def test_statements_of_one_shape_share_it_and_keep_their_own_holes():
    """SECOND differs from FIRST only in its result, operand and factor: one KnownShape,
    found twice, each statement with its own hole texts; where hole k ends is read from the
    statement (``1`` ends at 2, ``scale`` at 33, as in FIRST)."""
    finder = ShapeFinder()
    first, first_texts, _ = finder.find(FIRST)
    second, second_texts, end_of = finder.find(SECOND)
    assert second is first and first.made_from == FIRST
    assert first_texts == ("0", "scale", "arg0", "4", "2.0")
    assert second_texts == ("1", "scale", "0", "4", "3.0")
    assert [end_of(k + 1) for k in range(2)] == [2, 33]
    other, _, _ = finder.find(FIRST.replace("tensor<4xf32>", "tensor<8xf32>"))
    assert other is not first and len(finder.shapes) == 2


def test_a_shape_seen_again_is_found_by_its_matcher():
    """The first statement of a shape is read by ``shape_of``, and the shape gets no
    matcher; the next statement tried against the shape makes it, and the matcher's hole
    groups are that statement's hole texts."""
    finder = ShapeFinder()
    known, _, _ = finder.find(CALL.format(result=0, target="k", operand="a", factor="1.0"))
    assert known.matcher is None
    statement = CALL.format(result="x9", target="other.k", operand="y", factor="-5.5e3")
    again, texts, end_of = finder.find(statement)
    assert again is known and known.matcher is not None
    assert texts == ("x9", "other.k", "y", "4", "-5.5e3")
    assert end_of(2) == statement.index("(")


# ---------------------------------------------------------------- call_shapes.CallShapes


def _placed_calls(
    monkeypatch: pytest.MonkeyPatch,
    judged: list[str] | None = None,
    selected: list[str] | None = None,
    *,
    reuse: bool = True,
    text: str = MODULE,
):
    from rewriter.plan import call_shapes

    source = Source(text, "m.mlir")
    found = scan(source)
    judge_signature = call_shapes.judge_signature

    def judge(view):
        if judged is not None:
            judged.append(view.target)
        return judge_signature(view)

    def select(call, target):
        if selected is not None:
            selected.append(target)
        return None

    monkeypatch.setattr(call_shapes, "judge_signature", judge)
    shapes = CallShapes(source, found, select, C_ABI, reuse=reuse)
    return [shapes.place(site)[0] for site in found.calls]


def test_a_shape_is_parsed_and_judged_once_and_selected_once_per_target(monkeypatch):
    """FIRST, SECOND and a third call of ``shift`` share a shape: the signature's rules are
    asked once, on the shape's view, which holds no target (``judging.TARGET``), selection
    once for each target of the shape; each placed call keeps its own target, holes (and its
    attribute value, a field of its replacement after them) and position."""
    third = CALL.format(result="2", target="shift", operand="1", factor="4.0")
    text = MODULE.replace(f"{SECOND}\n", f"{SECOND}\n    {third}\n")
    judged: list[str] = []
    selected: list[str] = []
    first, second, shifted = _placed_calls(monkeypatch, judged, selected, text=text)
    assert judged == [TARGET]
    assert selected == ["scale", "shift"]
    assert first.shape is not None and second.shape is shifted.shape is first.shape
    assert first.holes == ("0", "scale", "arg0", "4", "2.0", "2.0")
    assert second.holes == ("1", "scale", "0", "4", "3.0", "3.0")
    assert shifted.holes == ("2", "shift", "1", "4", "4.0", "4.0")
    assert [c.start for c in (first, second, shifted)] == [
        text.index(s) for s in (FIRST, SECOND, third)
    ]
    assert [c.target for c in (first, second, shifted)] == ["scale", "scale", "shift"]


# ---------------------------------------------------------------- planner.plan_rewrite


def test_plan_rewrite_of_two_calls_of_one_kernel():
    """By hand, from the contract: both calls are user kernels of one signature, so one
    extern @scale (rule 5: the target, a C identifier naming no symbol), declared once at
    the top of the module with its operand read-only and the FFI facts of the call. The
    f32 attribute factor becomes an ``arith.constant`` operand after the tensors (rules
    2-3); api_version is dropped. Constants are named after the attribute, the second
    with the first free suffix."""
    plan = plan_rewrite(_source(), scan(_source()))
    assert plan.errors == [] and plan.warnings == []
    assert [(r.status, r.symbol, r.line, r.column) for r in plan.reports] == [
        ("rewritten", "scale", 3, 5),
        ("rewritten", "scale", 4, 5),
    ]
    assert [a.value for r in plan.reports for a in r.attributes] == ["2.0", "3.0"]
    declaration = (
        '  func.func private @scale(tensor<4xf32> {bufferization.access = "read"}, f32)'
        " -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = "
        '{attributes = {factor = "f32"}, operands = ["f32[4]{0}"], results = ["f32[4]{0}"],'
        ' target = "scale"}}\n'
    )
    assert apply_edits(MODULE, plan.edits) == (
        "module @m {\n"
        + declaration
        + """  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %factor = arith.constant 2.0 : f32
    %0 = func.call @scale(%arg0, %factor) : (tensor<4xf32>, f32) -> tensor<4xf32>
    %factor_1 = arith.constant 3.0 : f32
    %1 = func.call @scale(%0, %factor_1) : (tensor<4xf32>, f32) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}
"""
    )


def test_plan_rewrite_leaves_calls_that_are_not_selected():
    """targets=["other"] matches neither call: both are reported left alone and nothing
    is edited."""
    plan = plan_rewrite(_source(), scan(_source()), targets=["other"])
    assert plan.edits == []
    assert [(r.status, r.reason) for r in plan.reports] == [
        ("left alone", "not matched by targets="),
        ("left alone", "not matched by targets="),
    ]


def _symbols_and_warnings(text: str) -> tuple[list[str | None], list[tuple]]:
    """The externs of a plan's calls and its warnings (severity, line, column, message);
    the plan must have no errors."""
    plan = plan_rewrite(Source(text, "m.mlir"), scan(Source(text, "m.mlir")))
    assert plan.errors == []
    warnings = [(w.severity, w.line, w.column, w.message) for w in plan.warnings]
    return [r.symbol for r in plan.reports], warnings


def test_plan_rewrite_warns_of_an_extern_not_named_after_its_target():
    """Rule 5, by hand: ``scale.v2`` is no C identifier, so its extern is ``scale_v2``,
    whose C symbol (``llvm.emit_c_interface``) is ``_mlir_ciface_scale_v2``. One warning,
    at the target's ``@`` (line 3, after the 31 characters ``    %0 = stablehlo.custom_call ``);
    the second call, of ``scale``, keeps its name and warns of nothing."""
    symbols, warnings = _symbols_and_warnings(MODULE.replace("@scale(%arg0)", "@scale.v2(%arg0)"))
    assert symbols == ["scale_v2", "scale"]
    assert warnings == [
        (
            "warning",
            3,
            32,
            "custom call target 'scale.v2' becomes extern @scale_v2 "
            "(C symbol _mlir_ciface_scale_v2): 'scale.v2' is not a valid C identifier",
        )
    ]


def test_plan_rewrite_warns_of_one_extern_for_calls_an_ffi_handler_tells_apart():
    """Both calls pass a tensor and an f32, so they share extern @scale (one signature, one
    name), but the second names its attribute ``gain``, not ``factor``: an XLA FFI handler
    sees them differently, so the second call (line 4) gets the warning."""
    symbols, warnings = _symbols_and_warnings(MODULE.replace("{factor = 3.0", "{gain = 3.0"))
    assert symbols == ["scale", "scale"]
    assert warnings == [
        (
            "warning",
            4,
            32,
            "this call of @scale shares extern @scale with an earlier call but differs from "
            "it in what an XLA FFI handler sees (attribute names, signedness, layouts or "
            "shapes); FFI adapters follow the first call",
        )
    ]


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("reuse", [True, False])
def test_a_warning_on_a_call_s_line_is_placed_as_diagnostic_at_places_it(newline, reuse):
    """``warning_at`` tells a warning's line from the call's report, not from the file's
    table of line starts: for every offset on a call's line, the line break and either
    side, it gives what ``Diagnostic.at`` gives (line, column, source line)."""
    text = MODULE.replace("\n", newline) + "    " + SECOND  # the last line has no break
    source = Source(text, "m.mlir")
    found = scan(source)
    shapes = _call_shapes(source, found, None, None, C_ABI, reuse)
    for site in found.calls:
        placed, _ = shapes.place(site)
        line_start = source.line_start(placed.start)
        for offset in range(max(line_start - 3, 0), min(placed.end + 4, len(text) + 1)):
            expected = Diagnostic.at(source, offset, "m", Severity.WARNING)
            assert warning_at(source, placed, offset, "m") == expected


# ---------------------------------------------------------------- types kept parsed


def test_an_attribute_operand_keeps_its_own_element_type():
    """The operand of an unsigned array or dense attribute is signless (``tensor<2xi8>``);
    the attribute's own element type (``ui8``) is what the header's descriptor and the FFI
    dtype name, read from the attribute's type by the one tensor parser."""
    from rewriter.emit.header import attribute_c_type
    from rewriter.plan.attribute_operands import AttributeOperand

    array = AttributeOperand("a", "array<ui8>", "tensor<2xi8>", "dense<[1, 2]>", "tensor<2xi8>")
    dense = AttributeOperand("d", "tensor<2x3xui16>", "tensor<2x3xi16>", "dense<1>", "")
    text = AttributeOperand("s", "string", "tensor<2xi8>", 'dense<"0x6869">', "tensor<2xi8>")
    scalar = AttributeOperand("n", "ui32", "i32", "7", "i32")
    assert [a.own_element for a in (array, dense, text, scalar)] == ["ui8", "ui16", None, None]
    assert [attribute_c_type(a) for a in (array, dense, text, scalar)] == [
        "rw_memref_ui8_1d *",
        "rw_memref_ui16_2d *",
        "rw_memref_i8_1d *",
        "uint32_t",
    ]


def test_a_parsed_type_gives_its_sizes():
    """What the FFI facts record of an operand: its dims as numbers, None where dynamic."""
    from rewriter.syntax.model import Type, TypeKind

    assert Type("tensor<?x8xf32>", TypeKind.TENSOR, "f32", ("?", "8")).sizes == (None, 8)
    assert Type("f32", TypeKind.SCALAR, "f32").sizes == ()


def test_the_scan_collects_the_names_a_made_name_could_be():
    """%0, %12 and %1x start with a digit: no made name is one of them (above)."""
    source = Source("module {\n  %0 = a.b %arg0, %12, %1x, %eps, %-q, %$r : f32\n}\n", "m.mlir")
    assert scan(source).values == {"arg0", "eps", "-q", "$r"}


def _applied_one_by_one(text: str, edits: list[Edit]) -> str:
    """The edits applied from the last to the first (insertions at one offset: the last
    given first), each by slicing: the reference."""
    numbered = sorted(enumerate(edits), key=lambda n: (n[1].start, n[1].end, n[0]))
    for _, edit in reversed(numbered):
        text = text[: edit.start] + edit.text + text[edit.end :]
    return text


def test_apply_edits_writes_each_piece_between_edits_as_it_is():
    """``apply_edits`` keeps equal pieces between edits once: the output is the same as
    applying the edits one by one, for pieces that repeat and more distinct pieces than
    it keeps (``_KEPT``), insertions at one offset in their given order."""
    lines = [
        f"  %{k} = op loc(#loc{k % 3})\n" if k % 2 else f"  %{k} = op{k}\n" for k in range(300)
    ]
    text = "".join(lines)
    edits: list[Edit] = []
    position = 0
    for line in lines:
        start = position + 2
        edits.append(Edit(start, start + line.index(" op") - 2, f"%r{len(edits)}"))
        position += len(line)
    edits.append(Edit.insert(0, "first\n"))
    edits.append(Edit.insert(0, "second\n"))
    assert len({text[a.end : b.start] for a, b in zip(edits[:-3], edits[1:-2], strict=True)}) > 64
    assert apply_edits(text, edits) == _applied_one_by_one(text, edits)


def test_apply_edits_writes_long_pieces_as_they_are():
    """Pieces longer than ``_LONGEST_KEPT`` (a constant's hex between two calls) are not
    looked up among the kept ones, equal or not: the output is the edits applied one by
    one."""
    long_piece = "  %w = constant " + "0F" * _LONGEST_KEPT + "\n"
    text = "".join(f"  %{k} = call\n" + long_piece[: len(long_piece) - k % 2] for k in range(6))
    edits = [Edit(m.start(), m.start() + 1, "%r") for m in re.finditer("%[0-9]", text)]
    assert len(text) > 6 * _LONGEST_KEPT and len(edits) == 6
    assert apply_edits(text, edits) == _applied_one_by_one(text, edits)


def test_statements_in_a_cycle_of_shapes_are_found_with_their_own_shapes_and_holes():
    """Three shapes in turn (an unrolled loop body of three calls), past the number of
    statements after which a shape is spelled out, with a statement now and then that
    differs from the shape that came next last time in a literal (``tensor<5xf32>``): each
    statement is found with the shape ``shape_of`` gives it and its own hole texts, and
    each shape is found once (the shape after the last one is tried first)."""
    sizes = ["4", "8", "16"]
    finder = ShapeFinder()
    for k in range(4 * SPELLED_AFTER):
        size = "5" if k % 29 == 28 else sizes[k % 3]
        statement = CALL.format(result=k, target=f"t{k % 5}", operand=k - 1, factor=f"{k}.5")
        statement = statement.replace("tensor<4xf32>", f"tensor<{size}xf32>")
        known, texts, end_of = finder.find(statement)
        key, holes = shape_of(statement)
        assert known.key == key and finder.shapes[key] is known
        assert texts == tuple(statement[start:end] for start, end, _ in holes)
        assert [end_of(h + 1) for h in range(len(holes))] == [end for _, end, _ in holes]
    assert len(finder.shapes) == 4
    assert sorted(shape.spelled is not None for shape in finder.shapes.values()) == [
        False, True, True, True
    ]  # fmt: skip
