"""Property tests: generated modules with random FFI calls survive the rewrite exactly.

Hypothesis builds modules with calls of random operand and result types (every element
type the contract knows, ranks 0 to 3, `?` dims), attribute dictionaries of every kind
(integers of every width and signedness, floats of every width, booleans, strings with any
bytes, dense and array attributes, nested dictionaries), some calls nested in a region.
For each: the output verifies in jaxlib; every attribute value, read back through jaxlib
from its `arith.constant`, equals the value jaxlib reads from the original attribute; and
rewriting twice gives the same text as rewriting once.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mlir_tools import jaxlib_verify

import rewriter

pytestmark = [pytest.mark.jax, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
ELEMENTS = ["f32", "f64", "bf16", "f16", "i1", "i8", "i32", "i64", "ui8", "ui32"]
NAMES = st.text("abcdefghij_", min_size=1, max_size=6)


@st.composite
def integer_attrs(draw):
    width = draw(st.sampled_from([8, 16, 32, 64]))
    sign = draw(st.sampled_from(["i", "si", "ui"]))
    low, high = (0, 2**width - 1) if sign == "ui" else (-(2 ** (width - 1)), 2 ** (width - 1) - 1)
    return f"{draw(st.integers(low, high))} : {sign}{width}"


@st.composite
def float_attrs(draw):
    kind = draw(st.sampled_from(["f16", "bf16", "f32", "f64"]))
    if kind in ("f16", "bf16"):  # the bits, as MLIR's hexadecimal form
        bits = draw(st.integers(0, 0xFFFF).filter(lambda b: (b >> 7 & 0xFF) != 0xFF))
        return f"0x{bits:04X} : {kind}"
    value = draw(
        st.floats(allow_nan=False, allow_infinity=False, width=32 if kind == "f32" else 64)
    )
    return f"{value:.17e} : {kind}"


def escaped(data: bytes) -> str:
    return '"' + "".join(f"\\{byte:02X}" for byte in data) + '"'


@st.composite
def dense_attrs(draw):
    element = draw(st.sampled_from(["ui8", "i32", "i64"]))
    width = int(element.lstrip("ui"))
    low, high = (
        (0, 2**width - 1)
        if element.startswith("u")
        else (-(2 ** (width - 1)), 2 ** (width - 1) - 1)
    )
    values = draw(st.lists(st.integers(low, high), min_size=1, max_size=4))
    return f"dense<[{', '.join(map(str, values))}]> : tensor<{len(values)}x{element}>"


@st.composite
def array_attrs(draw):
    if draw(st.booleans()):
        values = draw(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=3))
        return f"array<i64{': ' if values else ''}{', '.join(map(str, values))}>"
    values = draw(st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), max_size=3))
    return f"array<f32{': ' if values else ''}{', '.join(f'{v:.9e}' for v in values)}>"


SCALARS = st.one_of(
    integer_attrs(),
    float_attrs(),
    st.sampled_from(["true", "false"]),
    st.binary(max_size=8).map(escaped),
    dense_attrs(),
    array_attrs(),
)


@st.composite
def dictionaries(draw, depth: int = 0):
    names = draw(st.lists(NAMES, min_size=0, max_size=4, unique=True))
    entries = []
    for name in names:
        nested = depth == 0 and draw(st.integers(0, 5)) == 0
        value = draw(dictionaries(depth + 1)) if nested else draw(SCALARS)
        entries.append(f"{name} = {value}")
    return "{" + ", ".join(entries) + "}"


@st.composite
def tensor_types(draw):
    rank = draw(st.integers(0, 3))
    dims = draw(st.lists(st.sampled_from(["1", "2", "3", "?"]), min_size=rank, max_size=rank))
    return f"tensor<{''.join(d + 'x' for d in dims)}{draw(st.sampled_from(ELEMENTS))}>"


@st.composite
def modules(draw):
    arguments = draw(st.lists(tensor_types(), min_size=1, max_size=3))
    lines = []
    for index in range(draw(st.integers(1, 3))):
        used = draw(st.lists(st.integers(0, len(arguments) - 1), max_size=3))
        results = draw(st.lists(tensor_types(), max_size=2))
        result_part = results[0] if len(results) == 1 else f"({', '.join(results)})"
        binding = (
            ""
            if not results
            else f"%r{index}{':' + str(len(results)) if len(results) > 1 else ''} = "
        )
        call = (
            f"{binding}stablehlo.custom_call @{draw(NAMES)}"
            f"({', '.join(f'%arg{i}' for i in used)}) "
            f"{{mhlo.backend_config = {draw(dictionaries())}}} : "
            f"({', '.join(arguments[i] for i in used)}) -> {result_part}"
        )
        if draw(st.booleans()):  # nested in a region
            lines += [
                f'%c{index} = "stablehlo.case"(%index) ({{',
                "  " + call,
                f"  stablehlo.return %arg0 : {arguments[0]}",
                f"}}) : (tensor<i32>) -> {arguments[0]}",
            ]
        else:
            lines.append(call)
    signature = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(arguments))
    body = "\n".join("    " + line for line in lines)
    return (
        "module {\n"
        f"  func.func @main({signature}, %index: tensor<i32>) -> {arguments[0]} {{\n"
        f"{body}\n"
        f"    return %arg0 : {arguments[0]}\n"
        "  }\n"
        "}\n"
    )


def _operations(operation):
    for region in operation.regions:
        for block in region.blocks:
            for child in block.operations:
                yield child
                yield from _operations(child)


def _flatten(dictionary, ir) -> list:
    values = []
    for index in sorted(range(len(dictionary)), key=lambda i: dictionary[i].name.encode()):
        entry = dictionary[index]
        if isinstance(entry.attr, ir.DictAttr):
            values += _flatten(entry.attr, ir)
        else:
            values.append(entry.attr)
    return values


def _numbers(attr, ir) -> tuple[str, object]:
    """A comparable (kind, value) for an attribute or constant value; integers as bits."""
    if isinstance(attr, ir.DenseI64ArrayAttr):
        return "ints", [v % 2**64 for v in attr]
    if isinstance(attr, ir.DenseF32ArrayAttr):
        return "array", list(attr)
    if isinstance(attr, ir.BoolAttr):
        return "int", int(attr.value) & 1
    if isinstance(attr, ir.IntegerAttr):
        width = ir.IntegerType(attr.type).width
        return "int", attr.value % (2**width)
    if isinstance(attr, ir.FloatAttr):
        return "float", struct.pack("<d", attr.value)
    if isinstance(attr, ir.StringAttr):
        return "bytes", attr.value_bytes
    if isinstance(attr, ir.DenseIntElementsAttr):
        width = ir.IntegerType(ir.ShapedType(attr.type).element_type).width
        values = [int(v) % (2**width) for v in np.array(attr).reshape(-1)]
        return "ints", values
    if isinstance(attr, ir.DenseElementsAttr):
        return "array", list(np.array(attr).reshape(-1))
    raise AssertionError(f"unexpected attribute {attr}")


def _comparable(original, constant, ir) -> bool:
    kind, value = _numbers(original, ir)
    other_kind, other = _numbers(constant, ir)
    if kind == "bytes":
        return other_kind == "ints" and bytes(other) == value
    if kind == "array":
        return [float(v) for v in value] == [float(v) for v in other]
    return (kind, value) == (other_kind, other) or (
        {kind, other_kind} == {"int", "ints"} and [value] == [other] or value == other
    )


def attribute_values(text: str) -> tuple[list, list]:
    """(original FFI attribute values, values of the rewritten constants), through jaxlib."""
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir

    with mlir.make_ir_context():
        module = ir.Module.parse(text)
        originals = []
        for op in _operations(module.operation):
            if op.operation.name == "stablehlo.custom_call":
                originals += _flatten(op.operation.attributes["mhlo.backend_config"], ir)
        output = ir.Module.parse(rewriter.rewrite(text).text)
        constants = [
            op.operation.attributes["value"]
            for op in _operations(output.operation)
            if op.operation.name == "arith.constant"
        ]
        pairs = list(zip(originals, constants, strict=True))
        return [_comparable(a, b, ir) for a, b in pairs], [str(a) for a, _ in pairs]


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(modules())
def test_rewrite_verifies_keeps_values_and_is_idempotent(text: str):
    jaxlib_verify(text)  # the generated input is valid MLIR
    once = rewriter.rewrite(text).text
    jaxlib_verify(once)
    assert rewriter.rewrite(once).text == once
    same, shown = attribute_values(text)
    assert all(same), [s for s, ok in zip(shown, same, strict=True) if not ok]


@settings(max_examples=4, deadline=None)
@given(text=modules())
def test_output_bytes_do_not_depend_on_hash_seed(tmp_path_factory, text: str):
    source = tmp_path_factory.mktemp("seed") / "module.mlir"
    source.write_text(text)
    outputs = set()
    for seed in ("0", "1", "12345"):
        run = subprocess.run(
            [sys.executable, "-m", "rewriter", str(source)],
            cwd=ROOT,
            capture_output=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
            check=True,
        )
        outputs.add(run.stdout)
    assert len(outputs) == 1


def escaped_byte_by_byte(value: str) -> str:
    """The encoding spelled out: printable ASCII but ``"`` and ``\\`` as it is, every other
    byte of the UTF-8 as ``\\XX``."""
    return (
        '"'
        + "".join(
            chr(byte) if 0x20 <= byte < 0x7F and chr(byte) not in '"\\' else f"\\{byte:02X}"
            for byte in value.encode("utf-8")
        )
        + '"'
    )


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x80)) | st.text())
def test_strings_are_encoded_byte_by_byte(value):
    """encode_string writes a string of printable ASCII at once: as each byte would be."""
    from rewriter.syntax.strings import encode_string

    assert encode_string(value) == escaped_byte_by_byte(value)
    assert encode_string('a"b\\c~ \x7f') == '"a\\22b\\5Cc~ \\7F"'


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_encoded_strings_decode_to_their_bytes(value):
    """rewriter.syntax.strings: what the rewrite writes (target names, attribute names in
    rewriter.xla_ffi and rewriter.attribute_types) reads back as the same bytes, and jaxlib's
    parser agrees."""
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir

    from rewriter.syntax.strings import decode_string, encode_string

    literal = encode_string(value)
    assert decode_string(literal) == value.encode("utf-8")
    with mlir.make_ir_context():
        assert ir.StringAttr(ir.Attribute.parse(literal)).value_bytes == value.encode("utf-8")
