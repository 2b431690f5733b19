"""The one table of element types, checked against the sources it copies: jaxlib's XLA FFI
header, jax's own MLIR name of each numpy dtype, numpy's sizes and a C compiler's sizes."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from mlir_tools import require_tool

from rewriter.syntax.element_types import (
    BY_DESCRIPTOR,
    BY_MLIR,
    BY_XLA,
    ELEMENT_TYPES,
    TensorType,
    descriptor_name,
    parse_tensor,
)


def _ffi_enum() -> dict[str, int]:
    """``XLA_FFI_DataType_*`` values as jaxlib's copy of xla/ffi/api/c_api.h defines them."""
    import jax.ffi

    header = Path(jax.ffi.include_dir()) / "xla" / "ffi" / "api" / "c_api.h"
    found = re.findall(r"\b(XLA_FFI_DataType_\w+) = (\d+),", header.read_text())
    assert len(found) > 20, f"no XLA_FFI_DataType enumerators in {header}"
    return {name: int(value) for name, value in found}


def test_ffi_codes_are_jaxlibs():
    enum = _ffi_enum()
    assert {row.ffi_name: row.ffi_code for row in ELEMENT_TYPES} == {
        row.ffi_name: enum[row.ffi_name] for row in ELEMENT_TYPES
    }
    # The codes are XLA's PrimitiveType numbers (NOTES.md 6): PRED=1 ... C128=18.
    assert (BY_XLA["pred"].ffi_code, BY_XLA["f32"].ffi_code, BY_XLA["c128"].ffi_code) == (1, 11, 18)


def test_mlir_names_are_jaxs_names_of_the_numpy_dtypes():
    """jax lowers a numpy dtype to an MLIR type; signless and unsigned rows must agree."""
    from jax._src.interpreters import mlir

    with mlir.make_ir_context():
        for row in ELEMENT_TYPES:
            if row.mlir.startswith("si"):
                continue  # jax never writes siN; it is the same numpy type as iN
            assert str(mlir.dtype_to_ir_type(row.dtype)) == row.mlir, row


def test_sizes_and_kinds_are_numpys():
    kinds = {"pred": "b", "s": "i", "u": "u", "f": "f", "b": "V", "c": "c"}
    for row in ELEMENT_TYPES:
        assert row.dtype.itemsize == row.size, row
        kind = kinds["pred"] if row.xla == "pred" else kinds[row.xla[0]]
        assert row.dtype.kind == kind, row  # ml_dtypes' bfloat16 is a void-kind dtype
    assert BY_MLIR["bf16"].dtype.name == "bfloat16"
    assert BY_MLIR["si32"].dtype == np.int32


def test_c_types_have_the_sizes_of_the_elements(tmp_path):
    """A C compiler agrees on every C type's size (the contract passes f16/bf16 as bits)."""
    compiler = require_tool("gcc")
    c_types = sorted(
        {row.c_element for row in ELEMENT_TYPES} | {row.c_scalar for row in ELEMENT_TYPES} - {""}
    )
    program = tmp_path / "sizes.c"
    program.write_text(
        "#include <stdbool.h>\n#include <stdint.h>\n#include <stdio.h>\n"
        "typedef struct { float re, im; } rw_complex_f32;\n"
        "typedef struct { double re, im; } rw_complex_f64;\n"
        "int main(void) {\n"
        + "".join(f'  printf("{t} %zu\\n", sizeof({t}));\n' for t in c_types)
        + "  return 0;\n}\n"
    )
    binary = tmp_path / "sizes"
    subprocess.run([compiler, str(program), "-o", str(binary)], check=True)
    output = subprocess.run([str(binary)], check=True, capture_output=True, text=True).stdout
    sizes = {line.rsplit(" ", 1)[0]: int(line.rsplit(" ", 1)[1]) for line in output.splitlines()}
    for row in ELEMENT_TYPES:
        assert sizes[row.c_element] == row.size, row
        if row.c_scalar:
            assert sizes[row.c_scalar] == row.size, row


def test_lookups_prefer_signless_integers():
    assert BY_XLA["s8"].mlir == "i8"
    assert BY_XLA["u8"].mlir == "ui8"
    assert BY_DESCRIPTOR["i64"].mlir == "i64"
    assert BY_MLIR["si16"].xla == "s16"


def test_iree_calling_convention_letters():
    letters = {row.mlir: row.iree_cconv for row in ELEMENT_TYPES if row.iree_cconv}
    assert letters == {
        "i1": "i",
        "i8": "i",
        "i16": "i",
        "i32": "i",
        "i64": "I",
        "f32": "f",
        "f64": "F",
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("tensor<10x10xf32>", TensorType((10, 10), "f32")),
        ("tensor<f32>", TensorType((), "f32")),
        ("tensor<?x8xui8>", TensorType((None, 8), "ui8")),
        ("tensor<0xindex>", TensorType((0,), "index")),
        ("tensor<2x3xcomplex<f64>>", TensorType((2, 3), "complex<f64>")),
        ("memref<2xf32>", None),
        ("f32", None),
    ],
)
def test_parse_tensor(text, expected):
    assert parse_tensor(text) == expected


def test_parse_tensor_static():
    assert parse_tensor("tensor<3xi64>").is_static
    assert not parse_tensor("tensor<?xi64>").is_static


@pytest.mark.parametrize(
    ("element", "name"),
    [
        ("f32", "f32"),
        ("si32", "i32"),
        ("ui8", "ui8"),
        ("complex<f32>", "c64"),
        ("si4", "i4"),
        ("index", "index"),
    ],
)
def test_descriptor_name(element, name):
    assert descriptor_name(element) == name
