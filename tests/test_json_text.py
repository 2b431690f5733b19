"""rewriter.emit.json_text writes what ``json.dumps(value, indent=2)`` writes, byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import rewriter
from rewriter.cli import _json_file
from rewriter.emit import json_text

DATA = Path(__file__).parent / "data" / "call_dense"

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(),  # any code point: escapes, surrogates, non-ASCII
)
VALUES = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.lists(st.text(max_size=3), max_size=4),  # lists of strings are remembered
        st.dictionaries(st.text(max_size=5), children, max_size=4),
    ),
    max_leaves=30,
)


@settings(max_examples=500, deadline=None)
@given(VALUES)
def test_any_value_is_written_as_json_dumps_writes_it(value):
    assert json_text.dumps(value) == json.dumps(value, indent=2)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a", "b"]), max_size=2), max_size=5))
def test_a_remembered_list_is_written_at_its_own_indentation(value):
    nested = {"x": value, "y": [value, {"z": value}]}
    assert json_text.dumps(nested) == json.dumps(nested, indent=2)


KEYS = st.text(alphabet='%s{}"\\\né', max_size=3) | st.text(max_size=3)


@st.composite
def records(draw):
    """Dicts with one tuple of keys (a listing's calls), values of any kind, some of them
    the same object again."""
    keys = draw(st.lists(KEYS, unique=True, min_size=1, max_size=4))
    rows = draw(st.lists(st.lists(VALUES, min_size=len(keys), max_size=len(keys)), max_size=4))
    dicts = [dict(zip(keys, row, strict=True)) for row in rows]
    return dicts + dicts[:1]


@settings(max_examples=300, deadline=None)
@given(records())
def test_dicts_with_the_same_keys_are_written_each_with_its_values(value):
    nested = {"x": value, "y": [value, {"z": value}], "%s": value[:1]}
    assert json_text.dumps(nested) == json.dumps(nested, indent=2)


def test_keys_in_another_order_or_with_percent_signs_are_written_as_they_are():
    value = [
        {"a": 1, "b": [1, {"%s": None}]},
        {"b": "%s", "a": [{"%s": "%", "%%": 2.5}]},
        {"a": True, "b": {"%(a)s": "x"}},
    ]
    value.append(value[1])
    assert json_text.dumps(value) == json.dumps(value, indent=2)


def test_a_list_of_dicts_met_again_after_others_is_written_as_it_was():
    """The first time its pieces are appended; met again, they are joined and reused."""
    shared = [{"a": [1, "x"], "b": None}, {"a": [], "b": {"c": 2}}]
    value = [shared, {"d": shared}, shared, [shared], shared, {"e": [shared, shared]}]
    assert json_text.dumps(value) == json.dumps(value, indent=2)


def test_an_object_changed_after_one_document_is_written_as_it_is_in_the_next():
    shared = [{"a": ["x"]}, ["y"]]
    document = {"one": shared, "two": [shared]}
    assert json_text.dumps(document) == json.dumps(document, indent=2)
    shared[0]["a"].append("z")
    shared.append({"b": 1})
    assert json_text.dumps(document) == json.dumps(document, indent=2)


def test_the_listing_of_a_call_dense_export():
    """What ``--list --format json`` prints for a whole export."""
    for path in sorted(DATA.glob("*.mlir")):
        result = rewriter.analyze(path.read_text())
        document = {"schema": 1, "files": [_json_file(path.name, result.calls, [], [])]}
        assert json_text.dumps(document) == json.dumps(document, indent=2)


def test_the_pieces_of_a_listing_join_to_its_text_and_each_holds_a_little_of_it(monkeypatch):
    """``chunks`` is what ``--list --format json`` writes: a listing of hundreds of
    megabytes is never made whole. Here a piece holds 64 parts (these listings are small)."""
    monkeypatch.setattr(json_text, "CHUNK_PARTS", 64)
    for path in sorted(DATA.glob("*.mlir")):
        result = rewriter.analyze(path.read_text())
        document = {"schema": 1, "files": [_json_file(path.name, result.calls, [], [])]}
        pieces = list(json_text.chunks(document))
        text = json.dumps(document, indent=2)
        assert "".join(pieces) == text
        assert len(pieces) > 4
        assert max(map(len, pieces)) < len(text) / 4


@settings(max_examples=200, deadline=None)
@given(records())
def test_the_pieces_of_any_value_join_to_json_dumps(value):
    nested = {"x": value, "y": [value, {"z": value}]}
    assert "".join(json_text.chunks(nested)) == json.dumps(nested, indent=2)
