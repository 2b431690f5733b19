"""Models apart from sizes (rewriter/syntax/dimensions.py): a statement's model written back
from the parse of its text with sentinels for sizes is the model lark makes of it.

The statements are the custom call lines of tests/data/call_dense/ (see test_call_shapes.py)
with their sizes, and the text around them, changed; every model is compared with
``custom_call_from_tree`` of lark's own parse of the statement.
"""

from __future__ import annotations

from pathlib import Path

import lark
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rewriter.syntax.dimensions import SizedModels, size_runs, sized_apart
from rewriter.syntax.grammar import parser
from rewriter.syntax.to_model import custom_call_from_tree

DATA = Path(__file__).parent / "data" / "call_dense"
CALL_LINES = sorted(
    {
        line
        for path in sorted(DATA.glob("*.mlir"))
        for line in path.read_text().split("\n")
        if "stablehlo.custom_call" in line
    }
)
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SIZES = st.sampled_from(["0", "1", "2", "00", "10", "4096", "7000003", "70000", "123456789012"])


def parse_tree(text: str) -> lark.Tree:
    return parser().parse(text, start="custom_call_stmt")


def lark_model(text: str):
    return custom_call_from_tree(parse_tree(text), text, 0)


class Counting(SizedModels):
    """SizedModels that counts lark's parses."""

    def __init__(self):
        self.parses: list[str] = []

        def counted(text: str) -> lark.Tree:
            self.parses.append(text)
            return parse_tree(text)

        super().__init__(counted, lambda tree, text: custom_call_from_tree(tree, text, 0))


def with_sizes(line: str, sizes: list[str]) -> str:
    """``line`` with its sizes replaced by ``sizes``, in order (cycled)."""
    runs = size_runs(line)
    parts, position = [], 0
    for index, (start, end) in enumerate(runs):
        parts += [line[position:start], sizes[index % len(sizes)]]
        position = end
    return "".join([*parts, line[position:]])


def test_the_sizes_of_a_call_are_the_digit_runs_of_its_dimension_lists():
    line = (
        '%0 = stablehlo.custom_call @k(%a) {s = "tensor<9x9xf32>", d = dense<0> : tensor<2x3xi32>}'
        " : (tensor<4x?x10xf32>) -> tensor<*xf32> // tensor<5xf32>"
    )
    assert [line[start:end] for start, end in size_runs(line)] == ["2", "3", "4", "10"]


def _runs_by_the_whole_pattern(text: str) -> list[tuple[int, int]]:
    """``size_runs`` with every alternative tried everywhere (its reference)."""
    import rewriter.syntax.blanks as blanks

    plain = blanks._TENSOR_DIMENSION_LIST
    blanks._TENSOR_DIMENSION_LIST = blanks._DIMENSION_LIST
    try:
        return size_runs(text)
    finally:
        blanks._TENSOR_DIMENSION_LIST = plain


PIECES = st.sampled_from(
    [
        "tensor<",
        "memref<",
        "vector<",
        "x",
        "4",
        "16",
        "?",
        "*",
        "f32>",
        '"',
        "\\",
        "/",
        "//",
        " ",
        "\n",
        "xtensor<",
        ", ",
        "(",
        ")",
        ":",
    ]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(PIECES, max_size=24), st.sampled_from(CALL_LINES), st.integers(0, 400))
def test_sizes_are_found_alike_with_the_tensor_pattern(pieces, line, at):
    """``size_runs`` looks for ``tensor<`` alone in a text with no string, comment,
    ``memref<`` or ``vector<``: the same runs as the whole pattern, on call lines with
    odd text spliced in."""
    text = line[:at] + "".join(pieces) + line[at:]
    assert size_runs(text) == _runs_by_the_whole_pattern(text)


def test_statements_that_differ_in_sizes_share_one_parse():
    models = Counting()
    line = next(line for line in CALL_LINES if "tensor<4x1xf32>" in line)
    for size in ["1", "2", "17", "1000"]:
        text = line.replace("tensor<4x1xf32>", f"tensor<4x{size}xf32>")
        assert models.parse(text) == lark_model(text)
    assert len(models.parses) == 1
    assert "tensor<4x1xf32>" not in models.parses[0]


def test_models_that_share_a_parse_share_no_mutable_part():
    """A resize keeps the immutable parts with no size in them, and rebuilds the rest: the
    models of two statements share no call and no list (a call's notes)."""
    models = Counting()
    line = next(line for line in CALL_LINES if "tensor<4x1xf32>" in line)
    first = models.parse(line)
    second = models.parse(line.replace("tensor<4x1xf32>", "tensor<4x2xf32>"))
    assert len(models.parses) == 1
    assert first is not second and first.notes is not second.notes
    first.notes.append("only the first's")
    assert second.notes == [] and models.parse(line).notes == []


@pytest.mark.parametrize("line", CALL_LINES[:: max(1, len(CALL_LINES) // 40)])
def test_export_statements_model_as_lark_makes_them(line):
    assert Counting().parse(line) == lark_model(line)


@SETTINGS
@given(st.sampled_from(CALL_LINES), st.lists(SIZES, min_size=1, max_size=4), st.data())
def test_other_sizes_model_as_lark_makes_them(line, sizes, data):
    models = Counting()
    models.parse(line)  # the sentinel parse, from the export's own sizes
    text = with_sizes(line, sizes)
    expected = lark_model(text)
    assert models.parse(text) == expected
    if sized_apart(text, size_runs(text)) is not None:
        assert len(models.parses) == 1


@SETTINGS
@given(
    st.sampled_from(CALL_LINES),
    st.integers(0, 400),
    st.sampled_from(["", "0", "x", "?", "*", "0x", "x0", "<", ">", '"', "\\", "^", "#", " "]),
    st.integers(0, 2),
)
def test_statements_changed_around_sizes_model_as_lark_makes_them(line, at, junk, cut):
    """Characters spliced anywhere (near sizes, too): the model is lark's, or both fail."""
    text = line[:at] + junk + line[at + cut :]
    try:
        expected = lark_model(text)
    except lark.exceptions.LarkError:
        with pytest.raises(lark.exceptions.LarkError):
            Counting().parse(text)
        return
    assert Counting().parse(text) == expected


def test_sizes_the_lexer_does_not_take_as_dims_are_parsed_as_themselves():
    """After ``^`` (a CARET_ID), ``tensor<0x5x...`` lexes as HEX: a sentinel in place of
    the ``0`` would lex as INT. The sentinel parse finds its sentinels in no DIMS token,
    and the statement is parsed as itself."""
    text = (
        "%0 = stablehlo.custom_call @k(%a) {a = #x<^tensor<0x5xf32>>}"
        " : (tensor<4xf32>) -> tensor<4xf32>"
    )
    models = Counting()
    assert models.parse(text) == lark_model(text)
    assert models.parses[-1] == text


def test_a_statement_with_a_backslash_is_parsed_as_itself():
    text = '%0 = stablehlo.custom_call @k(%a) {s = "\\37"} : (tensor<7000003xf32>) -> tensor<4xf32>'
    models = Counting()
    assert models.parse(text) == lark_model(text)
    assert models.parses == [text]
