"""A rule edited as a contributor would edit it gives the same rewrite on the default path
(statement shapes) and on the plain path (every statement parsed and judged on its own).

Each edit is applied with ``monkeypatch`` to the rule's module, so both paths run it:

- (A) ``_number`` writes an f32 attribute as its bits (``arith.constant 0x3FC00000 : f32``
  for ``1.5 : f32``): the bits are of the call's own value, not of a placeholder's;
- (B) ``_dense`` passes a one-element splat as a scalar: a rule that reads a size;
- (C) any rule wrapped so that its output carries a function of everything it read (every
  attribute's text, the target, the types): drawn by hypothesis.

The inputs: the goldens' originals, the FileCheck inputs, the call-dense exports (the
generators of ``benchmarks/make_call_dense.py`` at 48 calls, in ``tests/data/call_dense``),
hypothesis' mutations of them (``test_call_shapes``), with other hole values and sizes, and
jax's exports (``jax_corpus``).
"""

from __future__ import annotations

import hashlib
import re
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_call_shapes import (
    EXPORTS,
    SETTINGS,
    hole_mutations,
    outcome,
    signature_mutations,
    size_mutations,
)

from rewriter.plan import attribute_operands, judging, layouts, planner
from rewriter.plan.attribute_operands import AttributeOperand
from rewriter.syntax import model

ROOT = Path(__file__).resolve().parent.parent
GOLDENS = [
    path.with_name(path.name.replace(".rewritten.mlir", ".mlir"))
    for path in sorted((ROOT / "samples").glob("*/*.rewritten.mlir"))
]
FILECHECK = sorted((ROOT / "tests" / "filecheck").glob("*.mlir"))
INPUTS = {path.name: path.read_text() for path in [*GOLDENS, *FILECHECK]}
INPUTS.update({f"{name}.mlir": text for name, text in EXPORTS.items()})


def f32_bits(literal: str) -> str:
    if "x" in literal:  # written as its bits already
        return literal
    return f"0x{struct.unpack('>I', struct.pack('>f', float(literal)))[0]:08X}"


def edit_a(monkeypatch: pytest.MonkeyPatch) -> None:
    """(A): an f32 attribute written as its bits."""
    number = attribute_operands._number

    def as_bits(path: str, attr: model.NumberAttr, keys: tuple[str, ...]) -> AttributeOperand:
        operand = number(path, attr, keys)
        if operand.type == "f32" and attr.is_float:
            return AttributeOperand(path, "f32", "f32", f32_bits(attr.literal), "f32", keys)
        return operand

    monkeypatch.setattr(attribute_operands, "_number", as_bits)


def edit_b(monkeypatch: pytest.MonkeyPatch) -> None:
    """(B): a one-element splat passed as a scalar of its element type."""
    dense = attribute_operands._dense

    def splat_as_scalar(
        path: str, attr: model.DenseAttr, keys: tuple[str, ...]
    ) -> AttributeOperand:
        operand = dense(path, attr, keys)
        dims = attr.type.dims
        splat = re.fullmatch(r"dense<([^\[\]<>,]+)>", attr.body.replace(" ", ""))
        if splat and all(d.isdigit() for d in dims) and dims.count("1") == len(dims):
            element = operand.type[operand.type.rindex("x") + 1 : -1] if dims else operand.type
            element = element.removeprefix("tensor<").removesuffix(">")
            return AttributeOperand(path, attr.type.text, element, splat.group(1), element, keys)
        return operand

    monkeypatch.setattr(attribute_operands, "_dense", splat_as_scalar)


def assert_paths_agree(text: str, **options) -> object:
    plain = outcome(text, False, **options)
    assert outcome(text, True, **options) == plain
    return plain


def _function(body: str) -> str:
    signature = "func.func @main(%a: tensor<f32>) -> tensor<f32>"
    return f"{signature} {{\n{body}\n  return %a : tensor<f32>\n}}"


# ---------------------------------------------------------------- (A)


def test_a_float_written_as_its_bits_is_the_calls_own(monkeypatch):
    edit_a(monkeypatch)
    text = "\n".join(
        f"  %{k} = stablehlo.custom_call @k(%a) {{mhlo.backend_config = {{eps = {v} : f32}}}}"
        " : (tensor<f32>) -> tensor<f32>"
        for k, v in enumerate(["1.5", "2.5", "1.5", "-0.25"])
    )
    text = _function(text)
    rewritten = assert_paths_agree(text)[0]
    assert "arith.constant 0x3FC00000 : f32" in rewritten
    assert "arith.constant 0xBE800000 : f32" in rewritten


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_floats_as_bits_on_both_paths(monkeypatch, name):
    edit_a(monkeypatch)
    assert_paths_agree(INPUTS[name])


@SETTINGS
@given(st.one_of(hole_mutations(), size_mutations()))
def test_floats_as_bits_on_both_paths_mutated(text):
    with pytest.MonkeyPatch.context() as monkeypatch:
        edit_a(monkeypatch)
        assert_paths_agree(text)


# ---------------------------------------------------------------- (B)


def _dense_calls(types: list[str]) -> str:
    lines = [
        f"  %{k} = stablehlo.custom_call @k(%a) {{mhlo.backend_config = {{w = dense<2.0> : "
        f"{type_}}}}} : (tensor<f32>) -> tensor<f32>"
        for k, type_ in enumerate(types)
    ]
    return _function("\n".join(lines))


def test_a_splat_of_one_element_is_judged_on_its_own_sizes(monkeypatch):
    edit_b(monkeypatch)
    text = _dense_calls(["tensor<2xf32>", "tensor<3xf32>", "tensor<1xf32>", "tensor<1x1xf32>"])
    rewritten = assert_paths_agree(text)[0]
    assert rewritten.count("arith.constant 2.0 : f32") == 2
    assert "arith.constant dense<2.0> : tensor<3xf32>" in rewritten


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_splats_as_scalars_on_both_paths(monkeypatch, name):
    edit_b(monkeypatch)
    assert_paths_agree(INPUTS[name])


@SETTINGS
@given(signature_mutations())
def test_splats_as_scalars_on_both_paths_mutated(text):
    with pytest.MonkeyPatch.context() as monkeypatch:
        edit_b(monkeypatch)
        assert_paths_agree(text)


# ---------------------------------------------------------------- (C)


def _digest(*values: object) -> str:
    return hashlib.sha1(repr(values).encode()).hexdigest()[:6]


def _attr_read(attr: model.Attr) -> object:
    """What a rule may read of an attribute: all of it but where it is."""
    fields = [getattr(attr, name) for name in model.field_names(type(attr)) if name != "span"]
    return tuple(_attr_read(f) if isinstance(f, model.Attr) else f for f in fields)


def _value_rule(name: str):
    """Rule ``name`` of attribute_operands, its output's value and type followed by a
    function of everything its attribute holds."""

    def wrap(monkeypatch: pytest.MonkeyPatch) -> None:
        rule = getattr(attribute_operands, name)

        def wrapped(path, attr, *rest):
            operand = rule(path, attr, *rest)
            read = _digest(path, _attr_read(attr) if isinstance(attr, model.Attr) else attr)
            return AttributeOperand(
                operand.path,
                operand.source_type,
                f"{operand.type}_{read}" if read[0] in "0123" else operand.type,
                f"{operand.value} // {read}",
                operand.constant_type,
                operand.keys,
            )

        monkeypatch.setattr(attribute_operands, name, wrapped)

    return wrap


def _selection_reads_attributes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Selection leaves a call alone by a function of its target and its types."""
    select = planner.skip_reason

    def wrapped(call, targets, skip, target=None, words=None):
        reason = select(call, targets, skip, target, *([words] if words else []))
        key = _digest(target or call.target, [t.text for t in call.input_types])
        return reason or (f"drawn {key}" if key[0] in "01234" else None)

    monkeypatch.setattr(planner, "skip_reason", wrapped)


def _layouts_read_types(monkeypatch: pytest.MonkeyPatch) -> None:
    """Layouts transpose a square operand whose sizes' digest says so."""
    permutations = layouts.permutations

    def wrapped(call):
        operands, results = permutations(call)
        flipped = [
            tuple(reversed(p)) if len(p) == 2 and _digest(t.text)[0] in "0123" else p
            for p, t in zip(operands, call.input_types, strict=True)
        ]
        return flipped, results

    monkeypatch.setattr(judging, "permutations", wrapped)


EDITS = {
    "number": _value_rule("_number"),
    "dense": _value_rule("_dense"),
    "array": _value_rule("_array"),
    "string": _value_rule("_string_operand"),
    "operand": _value_rule("_operand"),
    "selection": _selection_reads_attributes,
    "layouts": _layouts_read_types,
    "A": edit_a,
    "B": edit_b,
}


@settings(SETTINGS, max_examples=60)
@given(
    st.one_of(hole_mutations(), signature_mutations(), st.sampled_from(sorted(INPUTS.values()))),
    st.lists(st.sampled_from(sorted(EDITS)), min_size=1, max_size=3, unique=True),
)
def test_rules_that_read_values_give_the_same_rewrite_on_both_paths(text, edits):
    with pytest.MonkeyPatch.context() as monkeypatch:
        for edit in edits:
            EDITS[edit](monkeypatch)
        assert_paths_agree(text)


@pytest.mark.jax
@pytest.mark.parametrize("edit", ["A", "B", "number", "dense", "array", "selection", "layouts"])
def test_rule_edits_on_jax_exports(monkeypatch, edit):
    from jax_corpus import corpus

    EDITS[edit](monkeypatch)
    for _, text in corpus():
        assert_paths_agree(text)
