"""The kinds of attribute operand, and what each layer does with each: the table ``KINDS``.

A rule of ``attribute_operands`` makes an attribute's operand and, with it, its
``source_type``: the attribute's own type (``ui8``, ``bf16``, ``string``,
``array<i64>``, ``tensor<2x3xf32>``). That type is the one place the kind is written;
``kind_of`` reads it, once, and every consumer takes what it needs from the kind's row
rather than looking at the type text again:

- the operand rules that make it (``rules``: functions of ``attribute_operands``);
- what an XLA FFI handler receives (``ffi``: ``ffi_facts``);
- the C parameter of the extern (``c_parameter``: ``emit.header``);
- how a Python implementation on the IREE path receives it (``iree_value``:
  ``iree.values.attribute_value``).

IREE modules record each attribute's ``source_type`` (``rewriter.attribute_types``), so the
IREE path decides the kind from the same text with the same function.

Adding a kind: a row here, its rule in ``attribute_operands``, its test pairs
(CONTRIBUTING.md, "Adding a new attribute kind").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..syntax.element_types import parse_tensor
from ..syntax.text_enum import TextEnum


class OperandKind(TextEnum):
    """What an attribute is, as its operand passes it."""

    INTEGER = "integer"  # iN, siN, uiN: a signless iN scalar of the same bits
    BOOL = "bool"  # true / false (and numbers of type i1): an i1 scalar
    FLOAT = "float"  # f32, f64: a scalar of that type
    HALF = "half"  # f16, bf16: the i16 of its bits (C receives uint16_t)
    STRING = "string"  # bytes: tensor<Nxi8>
    ARRAY = "array"  # array<T: ...>: a rank-1 tensor of signless T
    DENSE = "dense"  # dense<...> : tensor<...>: the tensor, its elements signless


class FfiKind(TextEnum):
    """What an FFI handler receives for an attribute."""

    SCALAR = "scalar"  # one value of ``dtype``
    ARRAY = "array"  # a flat array of ``dtype`` (dense and array<> attributes)
    STRING = "string"  # bytes
    DICT = "dict"  # a nested dictionary of ``entries``


class CParameter(TextEnum):
    """How the extern's C prototype takes the operand (abi/README.md)."""

    SCALAR = "scalar"  # the C scalar of the attribute's own type (uint16_t for f16/bf16)
    DESCRIPTOR = "descriptor"  # a pointer to the memref descriptor of its own element type


class IreeValue(TextEnum):
    """What a Python implementation of an IREE import receives (``iree.values``)."""

    INTEGER = "integer"  # a numpy integer of the attribute's own signedness and width
    BOOL = "bool"  # np.bool_
    FLOAT = "float"  # np.float32 / np.float64
    HALF_BITS = "half_bits"  # np.float16 / bfloat16, decoded from the i16 bits passed
    BYTES = "bytes"  # bytes
    ARRAY = "array"  # a numpy array viewed as the attribute's own element type


@dataclass(frozen=True)
class KindRow:
    kind: OperandKind
    rules: tuple[str, ...]  # the functions of ``attribute_operands`` that make such operands
    ffi: FfiKind
    c_parameter: CParameter
    iree_value: IreeValue


_K, _F, _C, _I = OperandKind, FfiKind, CParameter, IreeValue
# fmt: off
KINDS: dict[OperandKind, KindRow] = {row.kind: row for row in (
    #        kind        rules                         FFI         C parameter    IREE value
    KindRow(_K.INTEGER, ("_number",),                  _F.SCALAR, _C.SCALAR,     _I.INTEGER),
    KindRow(_K.BOOL,    ("_bool", "_number"),          _F.SCALAR, _C.SCALAR,     _I.BOOL),
    KindRow(_K.FLOAT,   ("_number",),                  _F.SCALAR, _C.SCALAR,     _I.FLOAT),
    KindRow(_K.HALF,    ("_number",),                  _F.SCALAR, _C.SCALAR,     _I.HALF_BITS),
    KindRow(_K.STRING,  ("_string_operand",),          _F.STRING, _C.DESCRIPTOR, _I.BYTES),
    KindRow(_K.ARRAY,   ("_array",),                   _F.ARRAY,  _C.DESCRIPTOR, _I.ARRAY),
    KindRow(_K.DENSE,   ("_dense",),                   _F.ARRAY,  _C.DESCRIPTOR, _I.ARRAY),
)}
# fmt: on

_INTEGER = re.compile(r"[su]?i[0-9]+")


class UnknownKind(ValueError):
    """A source type no rule makes (a recorded type that was edited by hand, say)."""


def kind_of(source_type: str) -> KindRow:
    """The row of the operand whose attribute has type ``source_type``: the one place an
    attribute's kind is read from its type."""
    return KINDS[_classify(source_type)]


@lru_cache(maxsize=256)
def _classify(source_type: str) -> OperandKind:
    if source_type == "string":
        return OperandKind.STRING
    if source_type.startswith("array<"):
        return OperandKind.ARRAY
    if source_type.startswith("tensor<"):
        return OperandKind.DENSE
    if source_type in ("f16", "bf16"):
        return OperandKind.HALF
    if source_type in ("f32", "f64"):
        return OperandKind.FLOAT
    if source_type == "i1":
        return OperandKind.BOOL
    if _INTEGER.fullmatch(source_type):
        return OperandKind.INTEGER
    raise UnknownKind(f"{source_type} is the type of no attribute operand")


def own_element(source_type: str) -> str | None:
    """The element type of an array or dense attribute as the attribute has it (``ui8`` of
    ``array<ui8>`` or ``tensor<2xui8>``: the signedness the operand's type drops); None
    for scalars, strings, and a tensor type the parser does not read."""
    kind = _classify(source_type)
    if kind == OperandKind.ARRAY:
        return source_type[len("array<") : -1]
    if kind == OperandKind.DENSE:
        tensor = parse_tensor(source_type)
        return tensor.element if tensor else None
    return None
