"""Statement shapes (rewriter/plan/call_shapes.py): reusing a shape's parse gives exactly what
parsing every statement with lark gives.

The exports in tests/data/call_dense/ were made by
``python benchmarks/make_call_dense.py tests/data/call_dense --calls 48``: every shape of the
call-dense benchmark, 48 calls each. Each property mutates them (the parts that shapes
leave as holes, and the parts they keep) and compares ``plan_rewrite`` with shapes reused
against ``plan_rewrite(reuse_shapes=False)``, which parses every statement with lark.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rewriter.api import read_source
from rewriter.plan.edits import apply_edits
from rewriter.plan.naming import NamePool
from rewriter.plan.planner import plan_rewrite
from rewriter.syntax import model
from rewriter.syntax.blanks import shape_of
from rewriter.syntax.dimensions import size_runs
from rewriter.syntax.grammar import parser
from rewriter.syntax.holes import FoundShapes, KnownShape, ShapeFinder, spelled_matcher
from rewriter.syntax.scan import scan
from rewriter.syntax.to_model import custom_call_from_tree
from rewriter.syntax.validation import first_error

DATA = Path(__file__).parent / "data" / "call_dense"
EXPORTS = {path.stem: path.read_text() for path in sorted(DATA.glob("*.mlir"))}
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def outcome(text: str, reuse: bool, **options) -> object:
    """Everything a rewrite decides: the text, every call's report, the diagnostics."""
    source = read_source(text, "call_dense.mlir")
    found = scan(source)
    if found.diagnostics:
        return ("unusable", found.diagnostics)
    plan = plan_rewrite(source, found, reuse_shapes=reuse, **options)
    return apply_edits(source.text, plan.edits), plan.reports, plan.warnings, plan.errors


def assert_same_rewrite(text: str, **options) -> None:
    exact = outcome(text, False, **options)
    assert outcome(text, True, **options) == exact
    assert outcome_spelled(text, **options) == exact
    assert outcome_taken(text, **options) == exact


def outcome_taken(text: str, **options) -> object:
    """``outcome`` of a rewrite that takes the statement shapes a validation of the text
    found (``--validate``'s), as far as the validation got."""
    source = read_source(text, "call_dense.mlir")
    found = scan(source)
    if found.diagnostics:
        return ("unusable", found.diagnostics)
    calls = FoundShapes()
    first_error(source, None, calls)
    plan = plan_rewrite(source, found, found=calls, **options)
    return apply_edits(source.text, plan.edits), plan.reports, plan.warnings, plan.errors


def outcome_spelled(text: str, **options) -> object:
    """``outcome`` with every shape spelled out from its third statement on (by default
    only shapes with a thousand statements are)."""
    import rewriter.syntax.holes as holes

    default = holes.SPELLED_AFTER
    holes.SPELLED_AFTER = 1
    try:
        return outcome(text, True, **options)
    finally:
        holes.SPELLED_AFTER = default


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_every_export_rewrites_as_when_every_statement_is_parsed(name):
    text = EXPORTS[name]
    rewritten = outcome(text, True)
    assert rewritten == outcome(text, False) == outcome_spelled(text) == outcome_taken(text)
    reports = rewritten[1]
    assert len(reports) == text.count("stablehlo.custom_call @")
    assert all(report.status == "rewritten" for report in reports)
    assert "stablehlo.custom_call" not in rewritten[0]
    assert_same_rewrite(text, abi=_iree_abi())


def _iree_abi():
    from rewriter.plan.calling_conventions import Abi

    return Abi("iree", "ffi")


# Replacements for one hole, by kind: the values a user's export may have, odd ones too.
HOLE_VALUES = {
    "name": st.sampled_from(["0", "arg0", "x", "eps", "eps_1", "a.b", "$q", "9z", "-x", "v_"]),
    "alias": st.sampled_from(["loc1", "loc", "_x", "$a", "l.o-c"]),
    "target": st.sampled_from(
        ["kernel_0", "other", "Sharding", "mhlo.sort", "a.b", "k$1", "xla.sdy.x", "9k", "-k"]
    ),
    "float": st.sampled_from(
        ["1.5", "-0.5", "+2.0", "1.", "0.0", "1.0e+10", "3.4E38", "-1.0e-45", "7.", "12.5e3"]
    ),
    "int": st.sampled_from(
        ["0", "1", "-1", "127", "128", "-129", "255", "256", "300", "-7", "+3", "-0", "00"]
    ),
    "bool": st.sampled_from(["true", "false"]),
}


def _export_lines(draw, most: int) -> tuple[list[str], list[int]]:
    """The lines of one export, and up to ``most`` of its custom call lines to change."""
    lines = draw(st.sampled_from(sorted(EXPORTS.values()))).split("\n")
    call_lines = [i for i, line in enumerate(lines) if "stablehlo.custom_call" in line]
    return lines, draw(st.lists(st.sampled_from(call_lines), min_size=1, max_size=most))


@st.composite
def hole_mutations(draw):
    """An export with some of its holes (see call_shapes) given other values."""
    lines, chosen = _export_lines(draw, 6)
    for index in chosen:
        line = lines[index]
        _, holes = shape_of(line)
        if not holes:
            continue
        start, end, kind = draw(st.sampled_from(holes))
        lines[index] = line[:start] + draw(HOLE_VALUES[kind]) + line[end:]
    return "\n".join(lines)


@SETTINGS
@given(hole_mutations())
def test_other_hole_values_rewrite_as_when_parsed(text):
    assert_same_rewrite(text)


@SETTINGS
@given(hole_mutations(), st.sampled_from([None, ["kernel_*"], ["o*"]]))
def test_selection_is_asked_for_every_target(text, targets):
    assert_same_rewrite(text, targets=targets, skip=["*_3"])


def _changed_call_lines(draw, most: int, change, repeat) -> str:
    """An export with up to ``most`` of its call lines given by ``change(draw, line)``
    (None: left alone), each changed line repeated after itself when ``repeat(draw)``."""
    lines, chosen = _export_lines(draw, most)
    for index in sorted(chosen, reverse=True):
        changed = change(draw, lines[index])
        if changed is None:
            continue
        lines[index] = changed
        if repeat(draw):
            lines.insert(index + 1, changed)
    return "\n".join(lines)


def _other_size(draw, line: str) -> str | None:
    runs = size_runs(line)
    if not runs:
        return None
    start, end = draw(st.sampled_from(runs))
    size = draw(st.sampled_from(["0", "1", "3", "16", "00", "7000003", "123456789012"]))
    return line[:start] + size + line[end:]


@st.composite
def size_mutations(draw):
    """An export with the sizes of some call lines' types changed (one kernel, more
    signatures), each changed line repeated so that its new signature recurs."""
    return _changed_call_lines(draw, 6, _other_size, lambda draw: True)


@SETTINGS
@given(size_mutations())
def test_other_sizes_rewrite_as_when_parsed(text):
    assert_same_rewrite(text)


SIZES = st.sampled_from(
    ["0", "1", "2", "3", "16", "00", "07", "7000003", "9" * 18, "1" * 19, "2" * 4301]
)


def _all_sizes_changed(draw, line: str) -> str | None:
    """``line`` with each of its sizes (types of operands, results and attributes alike)
    replaced by another, the runs taken from the last so that the earlier stay put."""
    runs = size_runs(line)
    if not runs:
        return None
    for start, end in reversed(runs):
        if draw(st.booleans()):
            line = line[:start] + draw(SIZES) + line[end:]
    return line


@st.composite
def signature_mutations(draw):
    """An export whose call lines are many signatures of a few statements: some lines with
    any of their sizes changed (layouts, dense attributes and all), each repeated."""
    return _changed_call_lines(draw, 8, _all_sizes_changed, lambda draw: draw(st.booleans()))


@SETTINGS
@given(signature_mutations(), st.booleans())
def test_signatures_are_judged_as_when_parsed(text, iree):
    """A statement's outcome taken from its sentinel parse's, its sizes written in
    (``call_shapes._SizedOutcome``), is the one of judging it on its own."""
    assert_same_rewrite(text, **({"abi": _iree_abi()} if iree else {}))


def test_signatures_are_judged_once_each(monkeypatch):
    """One kernel on 24 shapes: the signature's rules see each shape once (with its own
    sizes: no judgement is shared between sizes), lark parses one of them
    (``test_signatures_share_one_parse``), and the rewrite is the one of judging each call."""
    from rewriter.plan import call_shapes

    text = EXPORTS["signatures_48"]
    exact = outcome(text, False)
    judged: list[model.CustomCall] = []
    judge = call_shapes.judge_signature

    def counting(view):
        judged.append(view)
        return judge(view)

    monkeypatch.setattr(call_shapes, "judge_signature", counting)
    assert outcome(text, True) == exact
    signatures = {(report.operand_types, report.result_types) for report in exact[1]}
    assert len(signatures) == 24 and len(judged) == 24
    assert {tuple(t.text for t in view.input_types) for view in judged} == {
        operands for operands, _ in signatures
    }


def _spliced(draw, line: str) -> str:
    at = draw(st.integers(0, len(line)))
    junk = draw(st.sampled_from(["", "x", " ", ",", "%", "#", "@", "{", "}", '"', "=", "0"]))
    return line[:at] + junk + line[at + draw(st.integers(0, 3)) :]


@st.composite
def text_mutations(draw):
    """An export with characters of its call lines changed: shapes that are not holes;
    some changed statements repeated, so that their shapes recur."""
    return _changed_call_lines(draw, 4, _spliced, lambda draw: draw(st.booleans()))


@SETTINGS
@given(text_mutations())
def test_broken_and_odd_statements_rewrite_as_when_parsed(text):
    assert_same_rewrite(text)


def _number_in_call(literal: str, type_: str) -> model.NumberAttr:
    statement = (
        f"%0 = stablehlo.custom_call @k(%a) {{mhlo.backend_config = {{x = {literal} : "
        f"{type_}}}}} : (tensor<f32>) -> tensor<f32>"
    )
    call = custom_call_from_tree(parser().parse(statement, start="custom_call_stmt"), statement, 0)
    config = call.attributes.get("mhlo.backend_config")
    assert isinstance(config, model.DictAttr)
    value = config.get("x")
    assert isinstance(value, model.NumberAttr)
    return value


@settings(max_examples=200, deadline=None)
@given(st.from_regex(r"\A[-+]?[0-9]{1,12}\.[0-9]{0,12}(?:[eE][-+]?[0-9]{1,3})?\Z"))
def test_every_float_form_literal_is_one_float_token(literal):
    """Point 2 of call_shapes' argument, for floats: lark reads the whole literal as FLOAT."""
    value = _number_in_call(literal, "f32")
    assert (value.literal, value.is_float) == (literal, True)
    assert shape_of(f"x = {literal} : f32}}")[1] == [(4, 4 + len(literal), "float")]


@settings(max_examples=200, deadline=None)
@given(st.from_regex(r"\A[-+]?[0-9]{1,25}\Z"), st.sampled_from(["i8", "si32", "ui64", "i1"]))
def test_every_int_form_literal_is_one_int_token(literal, type_):
    value = _number_in_call(literal, type_)
    assert (value.literal, value.is_float, value.type) == (literal, False, type_)
    assert shape_of(f"x = {literal} : {type_}}}")[1] == [(4, 4 + len(literal), "int")]


def _leaf_value(literal: str, type_: str) -> model.Attr:
    """Lark's model of the attribute ``x = literal : type_`` of a call, moved to offset 0."""
    from rewriter.plan.attribute_operands import at_start

    statement = (
        f"%0 = stablehlo.custom_call @k(%a) {{mhlo.backend_config = {{x = {literal}"
        f"{' : ' + type_ if type_ else ''}}}}} : (tensor<f32>) -> tensor<f32>"
    )
    call = custom_call_from_tree(parser().parse(statement, start="custom_call_stmt"), statement, 0)
    config = call.attributes.get("mhlo.backend_config")
    assert isinstance(config, model.DictAttr)
    value = config.get("x")
    assert value is not None
    return at_start(value)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.tuples(
            st.from_regex(r"\A[-+]?[0-9]{1,12}\.[0-9]{0,12}(?:[eE][-+]?[0-9]{1,3})?\Z"),
            st.sampled_from(["f32", "f64"]),
        ),
        st.tuples(
            st.from_regex(r"\A[-+]?[0-9]{1,25}\Z"), st.sampled_from(["i8", "si32", "ui64", "i1"])
        ),
        st.tuples(st.sampled_from(["true", "false"]), st.just("")),
    )
)
def test_a_leaf_with_a_value_is_larks_model_of_it(literal_and_type):
    """``call_shapes._Leaf.attribute``: the model made from a value hole's text is lark's
    model of the attribute with that text, at offset 0 (what the rules are handed)."""
    from rewriter.plan.call_shapes import _Leaf
    from rewriter.syntax.blanks import sentinel

    literal, type_ = literal_and_type
    kind = "bool" if not type_ else "float" if type_.startswith("f") else "int"
    parsed = _leaf_value(sentinel(kind, 3), type_)
    assert isinstance(parsed, (model.NumberAttr, model.BoolAttr))
    assert _Leaf(0, 3, ("x",), parsed).attribute(literal) == _leaf_value(literal, type_)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(EXPORTS.values())), st.data())
def test_a_shape_is_its_own_shape(text, data):
    """Blanking keeps every hole where it was and of its kind (point 1)."""
    lines = [line for line in text.split("\n") if "stablehlo.custom_call" in line]
    line = data.draw(st.sampled_from(lines))
    key, holes = shape_of(line)
    again, holes_again = shape_of(key)
    assert again == key
    assert [kind for _, _, kind in holes_again] == [kind for _, _, kind in holes]


def _matcher_agrees_with_shape_of(made_from: str, line: str) -> bool:
    """Whether the matcher of ``made_from``'s shape takes ``line`` (when it does, ``line``
    must have that shape, with shape_of's hole texts and ends); the spelled-out matcher
    takes what the matcher takes, with the same hole texts and ends."""
    key, holes = shape_of(made_from)
    matched = KnownShape(key, made_from, holes, ()).match(line)
    spelled = spelled_matcher(made_from, holes).fullmatch(line)
    assert (spelled is None) == (matched is None)  # both take what shape_of reads alike
    if matched is None or spelled is None:
        return False
    texts, end_of = matched
    assert spelled.groups() == texts
    assert [spelled.end(k + 1) for k in range(len(holes))] == [
        end_of(k + 1) for k in range(len(holes))
    ]
    line_key, line_holes = shape_of(line)
    assert line_key == key
    assert list(texts) == [line[start:end] for start, end, _ in line_holes]
    assert [end_of(k + 1) for k in range(len(holes))] == [end for _, end, _ in line_holes]
    assert [kind for _, _, kind in line_holes] == [kind for _, _, kind in holes]
    return True


# A statement of twelve name holes, and one no shape with holes there can take: only the
# literal pieces hold a blank, and the last hole ends the statement. With a hole's group
# able to give back characters, ``fullmatch`` tried every split of the 60 letters among
# the holes before refusing it (hours); each group atomic, it refuses at once.
_REFUSED_IN_LINEAR_TIME = """
import sys
from rewriter.syntax.blanks import shape_of
from rewriter.syntax.holes import KnownShape, spelled_matcher
made_from = "%a" * 12
key, holes = shape_of(made_from)
assert len(holes) == 12
statement = "b" * 60 + " "
assert KnownShape(key, made_from, holes, ()).match(statement) is None
assert spelled_matcher(made_from, holes).fullmatch(statement) is None
assert KnownShape(key, made_from, holes, ()).match("%bb" * 12) is not None
"""


def test_a_matcher_refuses_a_statement_without_trying_every_split_of_its_holes():
    """``holes.py``'s matchers give no text back from a hole: a statement of many holes
    that has not the shape is refused in time linear in its length (a hypothesis example
    of ten name holes once hung ``test_written_shapes``). In a subprocess, so that the
    test fails on the timeout instead of hanging."""
    subprocess.run([sys.executable, "-c", _REFUSED_IN_LINEAR_TIME], timeout=60, check=True)


@SETTINGS
@given(st.one_of(hole_mutations(), text_mutations()))
def test_a_matcher_takes_only_statements_of_its_shape(text):
    """The claim of ``rewriter/syntax/holes.py``: a shape's matcher finds holes where shape_of
    does."""
    lines = [line for line in text.split("\n") if "custom_call" in line][:12]
    for made_from in lines:
        assert _matcher_agrees_with_shape_of(made_from, made_from)
        for line in lines:
            _matcher_agrees_with_shape_of(made_from, line)


@SETTINGS
@given(st.one_of(hole_mutations(), text_mutations()), st.data())
def test_runs_of_one_shape_find_what_a_new_finder_finds(text, data):
    """``ShapeFinder.find`` tries the spelled matcher of the last two statements' shape
    first: in runs of statements of one shape and of others, each statement's shape, hole
    texts and hole ends are those a finder that has seen nothing finds."""
    import rewriter.syntax.holes as holes

    lines = [line for line in text.split("\n") if "custom_call" in line][:12]
    if not lines:
        return
    runs = data.draw(
        st.lists(st.tuples(st.sampled_from(lines), st.integers(1, 4)), min_size=1, max_size=12)
    )
    default = holes.SPELLED_AFTER
    holes.SPELLED_AFTER = 1  # spelled from a shape's second statement on
    try:
        finder = ShapeFinder()
        for line, repeats in runs:
            for _ in range(repeats):
                known, texts, end_of = finder.find(line)
                fresh, fresh_texts, fresh_end_of = ShapeFinder().find(line)
                assert known.key == fresh.key and texts == fresh_texts
                ends = range(1, len(fresh.holes) + 1)
                assert [end_of(k) for k in ends] == [fresh_end_of(k) for k in ends]
    finally:
        holes.SPELLED_AFTER = default


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(sorted(EXPORTS.values())),
    st.data(),
    st.text(alphabet='%#@=:,{}()<>. \t"\\/0123456789aefilrtux_-+', max_size=6),
)
def test_a_matcher_refuses_what_shape_of_reads_differently(text, data, junk):
    """Junk spliced into a statement next to a hole (where contexts and runs meet): the
    matcher of the original takes the result only if shape_of gives it the same shape."""
    line = data.draw(st.sampled_from([x for x in text.split("\n") if "custom_call" in x]))
    _, holes = shape_of(line)
    start, end, _ = data.draw(st.sampled_from(holes))
    at = data.draw(st.sampled_from([start - 1, start, end, end + 1]))
    at = max(0, min(at, len(line)))
    _matcher_agrees_with_shape_of(line, line[:at] + junk + line[at:])


def _first_free(base: str, taken: set[str]) -> str:
    """The search NamePool replaces: count up from ``base_1`` every time."""
    name, counter = base, 0
    while name in taken:
        counter += 1
        name = f"{base}_{counter}"
    taken.add(name)
    return name


@settings(max_examples=400, deadline=None)
@given(
    st.sets(st.sampled_from(["a", "a_1", "a_2", "a_1_1", "b", "b_3", "a_10", "a_0", "a_01", "_1"])),
    st.lists(
        st.sampled_from(["a", "b", "a_1", "c", "a_0", "a_01", "a_", "_", "a_1_1", "+a", "a_1_"]),
        max_size=30,
    ),
)
def test_name_pool_hands_out_what_a_search_from_one_would(existing, bases):
    """The pool keeps only the names taken from outside (never copying or changing them)
    and tells the names it handed out by its suffix counters: it must hand out what a
    search over the set of every name taken so far would."""
    outside = set(existing)
    pool, taken = NamePool(outside), set(existing)
    assert [pool.claim(base) for base in bases] == [_first_free(base, taken) for base in bases]
    assert outside == existing


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["claim", "add"]), st.sampled_from(["x", "x_1", "x_2", "y", "x_1_1"])
        ),
        max_size=25,
    )
)
def test_name_pool_takes_added_names_into_account(steps):
    pool, taken = NamePool(), set()
    for action, name in steps:
        if action == "add":
            pool.add(name)
            taken.add(name)
        else:
            assert pool.claim(name) == _first_free(name, taken)


def test_shapes_are_reused():
    """The point of it all: a call-dense export parses a handful of shapes, not every call."""
    import rewriter.plan.call_shapes as call_shapes

    parsed = []
    original = call_shapes.custom_call_from_tree

    def counting(tree, text, base):
        parsed.append(base)
        return original(tree, text, base)

    call_shapes.custom_call_from_tree = counting
    try:
        outcome(EXPORTS["many_targets_48"], True)
    finally:
        call_shapes.custom_call_from_tree = original
    calls = len(re.findall("stablehlo.custom_call", EXPORTS["many_targets_48"]))
    assert calls == 48 and len(parsed) == 1


def test_signatures_share_one_parse(monkeypatch):
    """One kernel on 24 shapes: 24 statement shapes, each judged on its own, parsed once
    between them (rewriter/syntax/dimensions.py)."""
    import rewriter.plan.call_shapes as call_shapes

    parsed: list[str] = []
    original = call_shapes._parse_statement

    def counting(text):
        parsed.append(text)
        return original(text)

    monkeypatch.setattr(call_shapes, "_parse_statement", counting)
    text = EXPORTS["signatures_48"]
    _, reports, _, _ = outcome(text, True)
    signatures = {(report.operand_types, report.result_types) for report in reports}
    assert len(reports) == 48 and len(signatures) == 24
    assert len(parsed) == 1


@pytest.mark.parametrize(
    "encoding",
    ["#foo<%arg0>", "{a = 1.5 : f32}", "#foo<loc(#loc3)>"],
)
def test_a_hole_in_a_tensor_encoding_is_no_hole_of_the_outcome(encoding):
    """A name, float or alias hole inside a type's encoding reaches the call's types, which
    its replacement writes as they are: the shape's outcome holds a sentinel where no
    statement's own text goes (``_leaks``), so its statements are parsed one by one."""
    lines = EXPORTS["many_targets_48"].split("\n")
    for index, line in enumerate(lines):
        if "stablehlo.custom_call" in line:
            lines[index] = line.replace("-> tensor<16x16xf32>", f"-> tensor<16x16xf32, {encoding}>")
    text = "\n".join(lines)
    exact = outcome(text, False)
    assert all(report.status == "rewritten" for report in exact[1])
    assert f"tensor<16x16xf32, {encoding}>" in exact[0]
    assert outcome(text, True) == exact


def test_a_rewrite_takes_every_statement_shape_its_validation_found(
    monkeypatch: pytest.MonkeyPatch,
):
    """The rewrite after ``--validate``'s validation of its input finds no statement's
    shape again: the validation found each at the place the rewrite looks it up."""
    finds: list[str] = []
    for text in EXPORTS.values():
        source = read_source(text, "call_dense.mlir")
        found = scan(source)
        calls = FoundShapes()
        assert first_error(source, None, calls) is None
        assert len(calls.at) == len(found.calls) > 0
        monkeypatch.setattr(ShapeFinder, "find", lambda self, piece: finds.append(piece))
        plan_rewrite(source, found, found=calls)
        monkeypatch.undo()
    assert finds == []


def test_a_statement_that_holds_a_sentinels_text_is_parsed_as_itself():
    """A location (or any text the replacement copies) that reads like a placeholder of the
    shape's parse (``blanks.sentinel``) is copied as itself, not as a hole's text."""
    lines = EXPORTS["many_targets_48"].split("\n")
    for index, line in enumerate(lines):
        if "stablehlo.custom_call" in line:
            lines[index] = re.sub(r"loc\(#[^)]*\)$", 'loc("1.0000017531e+07"(#loc1))', line)
    text = "\n".join(lines)
    exact = outcome(text, False)
    assert exact[0].count('loc("1.0000017531e+07"(#loc1))') > 48
    assert outcome(text, True) == exact
