"""The shapes of a rewrite's written lines, made once per pattern and literal values, are
the shapes ``LineShapes.of`` gives each line (``rewriter/syntax/written_shapes.py``), and a
validation that uses them says what the plain validation says."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rewriter
from rewriter.api import validate_input
from rewriter.plan.edits import Edit, apply_edits
from rewriter.syntax import validation
from rewriter.syntax.rewrite_validation import Validated, first_error_of_rewrite, validated
from rewriter.syntax.source import Source
from rewriter.syntax.terminals import FLOAT
from rewriter.syntax.written_shapes import Written, WrittenShapes

CALL_DENSE = Path(__file__).parent / "data" / "call_dense"
NAME_CHARACTERS = "abcXYZ019_$.-"
# Values out of every class, or that put a class's value in another's place.
STRANGE = [
    "", "a b", "x<", "a)", "a,b", "custom_call", "%custom_call_1", "kcustom_callz", 'a"b',
    "a\\b", "1abc", "%x%y", "%", "#a", "@b", "loc(#a)", "é", "%é", "0.5", "-3", "true",
    "array", "%array", "dense", "x\ny", "//", "%a = b",
]  # fmt: skip
# Numbers for a constant's value: floats, and integers (the last two out of class (e) of
# written_shapes: ten digits, a sign).
FLOATS = ["-1.5", "2.5e+10", "0.0", "7.", "1.0E-3", "+3.25"]
INTEGERS = ["7", "0", "123456789", "1234567890", "-3"]
# What comes before and after an edit on its first and last lines.
BEFORE = ["    ", "", "  ", "#a = ", '"s" ', "custom_call "]
AFTER = ["\n", "\r\n", " // c %x @y\n", "", " loc(#z)\n", ' "q"\n']


def records() -> list[tuple[str, Written, Edit]]:
    """Every call the call-dense exports rewrite: the input, what its replacement was
    written from, and its edit."""
    found = []
    for path in sorted(CALL_DENSE.glob("*.mlir")):
        text = path.read_text()
        result = rewriter.analyze(text, validated=validate_input(text))
        assert result.written is not None
        for edit in result.edits:
            if edit.start in result.written:
                found.append((text, result.written[edit.start], edit))
    return found


def mutated(written: Written, rng: random.Random) -> tuple[str, ...]:
    """``written``'s values with some replaced by others of their class, and a few by
    strange ones. A constant's value (a field after ``arith.constant``) becomes another
    number, mostly of its kind (float or integer)."""
    constants = {int(field) for field in re.findall(r"arith\.constant \{(\d+)\}", written.pattern)}
    changed = list(written.values)
    for index, value in enumerate(written.values):
        draw = rng.random()
        if draw < 0.4:
            continue
        if draw < 0.97:
            body = "".join(rng.choice(NAME_CHARACTERS) for _ in range(rng.randint(1, 6)))
            if index in constants and re.fullmatch(f"{FLOAT}|[0-9]+", value):
                floating = re.fullmatch(FLOAT, value) is not None
                if rng.random() < 0.1:
                    floating = not floating
                changed[index] = rng.choice([value, *(FLOATS if floating else INTEGERS)])
            elif value.startswith("%"):
                changed[index] = "%" + body
            elif re.fullmatch(r"[A-Za-z_$.\-][\w$.\-]*", value):
                changed[index] = rng.choice("abc_$.-") + body
            elif re.fullmatch(r"[A-Za-z0-9_$.\-]+", value):
                changed[index] = body
            else:  # a number or other literal text: another of its kind, or itself
                changed[index] = rng.choice([value, value + "0", "7", "-1.5"])
        else:
            changed[index] = rng.choice(STRANGE)
    return tuple(changed)


def line_shapes(text: str) -> tuple[str, ...]:
    """The shape of each line of ``text`` (cut after each line break, as a validation
    cuts them), by ``LineShapes.of``."""
    shapes = validation.LineShapes()
    return tuple(shapes.of(line) for line in re.findall(r"[^\n]*\n|[^\n]+$", text))


def test_a_written_line_s_shape_is_the_shape_of_its_text():
    """On every call of the call-dense exports, its fields' values mutated within their
    classes and out of them, and with other text around the edit: the shapes made once
    per pattern and key are the lines' own. One WrittenShapes sees them all, so that
    shapes remembered from one call are used for others."""
    rng = random.Random(13)
    written_shapes = WrittenShapes(validation.LineShapes())
    cases = records()
    assert len(cases) > 200
    used = refused = 0
    for _ in range(3000):
        _, written, _ = rng.choice(cases)
        values = mutated(written, rng) if rng.random() < 0.9 else written.values
        text = written.pattern.format(*values)
        before, after = rng.choice(BEFORE), rng.choice(AFTER)
        shapes = written_shapes.shapes(Written(written.pattern, values, text), text, before, after)
        if shapes is None:
            refused += 1
            continue
        assert shapes == line_shapes(before + text + after)
        used += 1
    assert used > 1500 and refused > 100  # both outcomes well represented


def test_a_text_that_is_not_the_written_one_is_shaped_line_by_line():
    """An equal text that is another object, or another text, is not taken for the one
    written: a caller that changed an edit gets the plain shaping."""
    _, written, edit = records()[0]
    written_shapes = WrittenShapes(validation.LineShapes())
    assert written_shapes.shapes(written, edit.text, "    ", "\n") is not None
    copy = "".join(list(edit.text))
    assert copy == edit.text and copy is not edit.text
    assert written_shapes.shapes(written, copy, "    ", "\n") is None


def test_a_validation_with_written_shapes_says_what_the_plain_one_says():
    """Rewrites whose calls' values are mutated (each edit's text written from its
    mutated values), or whose edits are broken (no longer the written text): the
    validation that shapes written lines by pattern reports what ``first_error`` does."""
    rng = random.Random(5)
    exports = []
    for path in sorted(CALL_DENSE.glob("*.mlir")):
        text = path.read_text()
        result = rewriter.analyze(text, validated=validate_input(text))
        input_ = validated(Source(text))
        assert isinstance(input_, Validated) and result.written
        exports.append((input_, result.edits, result.written))
    checked = errors = 0
    for _ in range(120):
        input_, edits, written = rng.choice(exports)
        edits, written = list(edits), dict(written)
        for index in rng.sample(range(len(edits)), k=min(len(edits), rng.randint(1, 6))):
            start, end, text = edits[index]
            if start in written and rng.random() < 0.8:
                record = written[start]
                values = mutated(record, rng)
                text = record.pattern.format(*values)
                written[start] = Written(record.pattern, values, text)
            else:
                at = rng.randrange(len(text) + 1)
                text = text[:at] + rng.choice(list('%#:=",.@{}()<> \n')) + text[at:]
            edits[index] = Edit(start, end, text)
        rewritten = Source(apply_edits(input_.text, edits))
        expected = validation.first_error(rewritten)
        assert first_error_of_rewrite(rewritten, input_, edits, written) == expected
        checked += 1
        errors += expected is not None
    assert 20 < errors < checked - 20  # both outcomes well represented


def test_written_lines_are_shaped_once_per_pattern_and_key(shaped_lines: list[str]):
    """Of a rewrite with a call on every other line, the lines shaped are a few per
    pattern and per value not seen before: far fewer than the lines written."""
    text = (CALL_DENSE / "long_attributes_48.mlir").read_text()
    result = rewriter.analyze(text, validated=validate_input(text))
    input_ = validated(Source(text))
    assert isinstance(input_, Validated)
    rewritten = Source(result.text)
    shaped_lines.clear()
    assert first_error_of_rewrite(rewritten, input_, result.edits, result.written) is None
    with_written = len(shaped_lines)
    shaped_lines.clear()
    assert first_error_of_rewrite(rewritten, input_, result.edits) is None
    written_lines = sum(edit.text.count("\n") + 1 for edit in result.edits)
    assert len(shaped_lines) >= written_lines > 4 * with_written


@pytest.mark.parametrize("name", ["many_targets_48", "long_attributes_48", "layouts_48"])
def test_constants_that_differ_from_call_to_call_are_shaped_a_few_times(
    name: str, shaped_lines: list[str]
):
    """Exports whose calls' attribute values change from layer to layer (a scale, a
    step, an iteration): the constant lines written for them share a shape (class (e)),
    so they are shaped a few times in all, not once per call (59, 70 and 51 before)."""
    text = (CALL_DENSE / f"{name}.mlir").read_text()
    result = rewriter.analyze(text, validated=validate_input(text))
    input_ = validated(Source(text))
    assert isinstance(input_, Validated) and result.written and len(result.written) == 48
    shaped_lines.clear()
    assert first_error_of_rewrite(Source(result.text), input_, result.edits, result.written) is None
    constants = [line for line in shaped_lines if "arith.constant" in line]
    assert len(constants) < len(result.written) / 2


# Literal text of synthetic patterns: the markers before blanked fields, what may or may
# not follow one, and text the blankings of LineShapes read.
FRAGMENTS = [
    "%", "@", "loc(#", ")", " ", "<", ", ", "\n", '"', "#", " = ", "arith.constant ",
    " : i32", " : f32", "array<", "dense<", "//", "(", "x", "0", "func.call @k(", "\r\n",
    "call", "ay<", "#l = ", "\"\":1:2", " = arith.constant ", " : f32 loc(#", " : i64 loc(#",
    ")\n", "  ",
]  # fmt: skip


SYNTHETIC_VALUES = [
    "%a", "%b.1", "k", "k_2", "$x", "7", "1.5", "custom_", "%custom_", "arr", "%arr", "2.5e+10",
    "1234567890", *STRANGE,
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_a_synthetic_pattern_s_lines_are_shaped_as_their_texts(data: st.DataObject):
    """Patterns of literal fragments and fields (the markers of every class, characters
    that must not follow a blanked field, strings and comments), filled twice: with
    values the first time decides classes from, then with others, of the classes or not.
    Every shape made is the line's own."""
    fields = data.draw(st.integers(1, 4))
    parts = data.draw(
        st.lists(
            st.sampled_from(FRAGMENTS) | st.integers(0, fields - 1).map(lambda i: f"{{{i}}}"),
            min_size=1,
            max_size=14,
        )
    )
    pattern = "".join(
        part.replace("{", "{{").replace("}", "}}")
        if part[:1] != "{" or part[-1:] != "}" or not part[1:-1].isdigit()
        else part
        for part in parts
    )
    value = st.sampled_from(SYNTHETIC_VALUES)
    written_shapes = WrittenShapes(validation.LineShapes())
    for _ in range(3):
        values = tuple(data.draw(st.lists(value, min_size=fields, max_size=fields)))
        text = pattern.format(*values)
        before, after = data.draw(st.sampled_from(BEFORE)), data.draw(st.sampled_from(AFTER))
        shapes = written_shapes.shapes(Written(pattern, values, text), text, before, after)
        if shapes is not None:
            assert shapes == line_shapes(before + text + after)


@pytest.mark.parametrize(
    ("pattern", "first", "then"),
    [
        # A name that a literal continues: `custom_call` across the two (strings stay in
        # a custom call's shape, not in other lines').
        ('%{0}call "s"\n', "custom_", "x"),
        # A name before `<`: `array<` across the two, which keeps an alias definition's
        # file location numbers.
        ('#a = %{0}<"f":1:2\n', "array", "x"),
        # An alias not closed right after: no location alias, so not blanked.
        ("%r = f loc(#{0} )\n", "a", "b"),
    ],
)
def test_a_field_is_blanked_only_where_its_class_allows(pattern: str, first: str, then: str):
    """Each case would share a shape between two texts whose shapes differ, if the field
    were blanked: the character after it, or the `)` after an alias, keeps it literal."""
    written_shapes = WrittenShapes(validation.LineShapes())
    for value in (first, then):
        text = pattern.format(value)
        shapes = written_shapes.shapes(Written(pattern, (value,), text), text, "", "")
        assert shapes == line_shapes(text)
    assert line_shapes(pattern.format(first)) != line_shapes(pattern.format(then))


@pytest.mark.parametrize(("pattern", "value"), [("{0}", ""), ("x\n{0}", ""), ("x\n{0}", "y")])
def test_a_text_that_ends_the_file_has_no_line_after_its_last_line_break(pattern: str, value: str):
    """A last line that its values leave empty, at the end of the file, is no line (as
    a literal line break at the end leaves none); found by the synthetic patterns."""
    text = pattern.format(value)
    shapes = WrittenShapes(validation.LineShapes()).shapes(
        Written(pattern, (value,), text), text, "", ""
    )
    assert shapes == line_shapes(text)


# A constant line's parts as a rewrite writes them (class (e)), and a little off that form.
CONSTANT_INDENTS = (["", "    ", "\t"], ["x array< ", "arith.constant 1 : i32 "])
CONSTANT_TYPES = (["f32", "f64", "i32", "i64", "si32", "ui64"], ["i8", "f16", "i1"])
CONSTANT_LINE_ENDS = ([" loc(#{})"], ["  loc(#{})", " loc(#{}) ", " loc(#{}) // array<"])
# Values of each field of a constant line, and values out of the field's class.
CONSTANT_FIELDS = (
    (["%a", "%b_1", "%0"], ["a", "%", "%a b", "array<"]),
    ([*FLOATS[:-1], *INTEGERS[:-2], "42"], ["true", "0x1F", "1e5", "a", "1234567890", "-3"]),
    (["loc1", "loc2", "_x"], ["1a", "a)"]),
)


def test_constant_lines_are_shaped_as_their_texts():
    """Patterns of constant lines as a rewrite writes them (class (e)), some a little off
    the form (another type, blanks, a last line, indentation that is not blanks), filled
    with values mostly of each field's class, and with other text around the edit (some
    that keeps a constant's value from being blanked): every shape made is the line's
    own."""
    rng = random.Random(7)
    used = with_constants = 0
    for _ in range(3000):
        lines = []
        for number in range(rng.randint(1, 3)):
            name, value, alias = (f"{{{3 * number + field}}}" for field in range(3))
            indent, type_, end = (
                rng.choice(part[rng.random() < 0.2])
                for part in (CONSTANT_INDENTS, CONSTANT_TYPES, CONSTANT_LINE_ENDS)
            )
            lines.append(f"{indent}{name} = arith.constant {value} : {type_}{end.format(alias)}")
        pattern = "\n".join(lines) + rng.choice(["\n%r = func.call @k()", "\n", ""])
        written_shapes = WrittenShapes(validation.LineShapes())
        for _ in range(4):
            values = tuple(
                rng.choice(CONSTANT_FIELDS[index % 3][rng.random() < 0.05])
                for index in range(3 * len(lines))
            )
            text = pattern.format(*values)
            before = rng.choice(["    ", "", "#a = ", *CONSTANT_INDENTS[1]])
            after = rng.choice(["\n", "", " // c %x @y\n", " array<\n"])
            shapes = written_shapes.shapes(Written(pattern, values, text), text, before, after)
            if shapes is not None:
                assert shapes == line_shapes(before + text + after)
                used += 1
                # a field of (e) is checked by FLOAT or by [0-9]{1,9}; the others' classes
                # spell digits only as part of A-Za-z0-9
                with_constants += "[0-9]" in written_shapes.templates[pattern].check.pattern
    assert with_constants > 500 and used > with_constants


CONSTANT = "{0} = arith.constant {1} : f32 loc(#{2})"


@pytest.mark.parametrize(
    ("pattern", "before", "after", "name"),
    [
        # The name is no whole name: the line is no binding, and `array<` keeps the value.
        (CONSTANT + "\n%r = f", "", "\n", "array<"),
        # The last line, which the text after the edit completes with `array<`.
        ("%r = f\n" + CONSTANT, "", " array<\n", "%c"),
        # The first line, after text with `array<` before the edit.
        (CONSTANT + "\n%r = f", "x array< ", "\n", "%c"),
        # Not blanks before the name.
        ("x array< " + CONSTANT + "\n%r = f", "", "\n", "%c"),
        # More after the location.
        (CONSTANT + " // array<\n%r = f", "", "\n", "%c"),
    ],
)
def test_a_constant_s_value_is_blanked_only_in_its_form(
    pattern: str, before: str, after: str, name: str
):
    """Each case would share a shape between two constants whose values the shapes keep,
    if the value were blanked: the line is off class (e)'s form."""
    written_shapes = WrittenShapes(validation.LineShapes())
    texts = []
    for value in ("1.5", "2.5"):
        values = (name, value, "loc1")
        text = pattern.format(*values)
        shapes = written_shapes.shapes(Written(pattern, values, text), text, before, after)
        assert shapes == line_shapes(before + text + after)
        texts.append(before + text + after)
    assert line_shapes(texts[0]) != line_shapes(texts[1])
