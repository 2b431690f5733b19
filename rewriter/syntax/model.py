"""What the rewrite knows about a custom call: plain data, with spans into the source text."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, fields, is_dataclass

from .element_types import dim_sizes
from .records import quick_init
from .text_enum import TextEnum


@functools.cache
def field_names(kind: type) -> tuple[str, ...]:
    """The field names of a model dataclass, in order: code that walks or rebuilds model
    values (call shapes, sizes written back) asks per value, ``dataclasses.fields`` is slow."""
    return tuple(item.name for item in fields(kind))


_FIELD_NAMES_IF_DATACLASS: dict[type, tuple[str, ...] | None] = {}


def field_names_if_dataclass(kind: type) -> tuple[str, ...] | None:
    """``field_names(kind)`` for a dataclass, None for any other type: the one question a
    walk over model values asks of each value's type (``is_dataclass`` is slow too)."""
    try:
        return _FIELD_NAMES_IF_DATACLASS[kind]
    except KeyError:
        names = field_names(kind) if is_dataclass(kind) else None
        _FIELD_NAMES_IF_DATACLASS[kind] = names
        return names


@quick_init
@dataclass(frozen=True)
class Span:
    start: int
    end: int


class TypeKind(TextEnum):
    """What the contract makes of a type: only tensors cross it; tuples and tokens are
    named in the diagnostic that refuses them."""

    TENSOR = "tensor"  # a tensor type (ranked or not)
    SCALAR = "scalar"  # a signless integer or float, i1
    TUPLE = "tuple"
    TOKEN = "token"  # !stablehlo.token, !mhlo.token
    OTHER = "other"  # everything else (complex scalars, memrefs, dialect types, ...)


class CallForm(TextEnum):
    """How a custom call statement is written."""

    PRETTY = "pretty"  # stablehlo.custom_call @target(...)
    GENERIC = "generic"  # "stablehlo.custom_call"(...) <{call_target_name = ...}>


@quick_init
@dataclass(frozen=True)
class Type:
    """A type as written, plus what the rewrite needs to know about it."""

    text: str
    kind: TypeKind
    element: str = ""  # element type text of a tensor, or the scalar type itself
    dims: tuple[str, ...] = ()  # dimension sizes of a ranked tensor ("?" when dynamic)
    ranked: bool = True

    @property
    def sizes(self) -> tuple[int | None, ...]:
        """``dims`` as numbers, None where dynamic."""
        return dim_sizes(self.dims)


# Attribute values. Every value keeps its source text and span, for diagnostics and copying.


@quick_init
@dataclass(frozen=True)
class Attr:
    text: str
    span: Span


@quick_init
@dataclass(frozen=True)
class NumberAttr(Attr):
    literal: str  # as written, sign included
    type: str  # as written; "" when elided (then i64 or f64)
    is_float: bool


@quick_init
@dataclass(frozen=True)
class BoolAttr(Attr):
    value: bool


@quick_init
@dataclass(frozen=True)
class StringAttr(Attr):
    value: bytes  # escapes decoded


@quick_init
@dataclass(frozen=True)
class DenseAttr(Attr):
    body: str  # the text of `dense<...>` or `dense_resource<...>`
    type: Type
    keyword: str  # "dense", "dense_resource" or "sparse"


@quick_init
@dataclass(frozen=True)
class ArrayAttr(Attr):
    element_type: str
    elements: tuple[str, ...]


@quick_init
@dataclass(frozen=True)
class DictAttr(Attr):
    entries: tuple[tuple[str, Attr], ...]

    def get(self, name: str) -> Attr | None:
        for key, value in self.entries:
            if key == name:
                return value
        return None


@quick_init
@dataclass(frozen=True)
class ListAttr(Attr):
    items: tuple[Attr, ...]


@quick_init
@dataclass(frozen=True)
class SymbolAttr(Attr):
    pass


@quick_init
@dataclass(frozen=True)
class OtherAttr(Attr):
    """Any attribute the contract gives no meaning to (dialect attributes, types, ...)."""

    description: str


@quick_init
@dataclass(frozen=True)
class UnitAttr(Attr):
    pass


@dataclass
class CustomCall:
    """One `stablehlo.custom_call` statement, pretty or generic form."""

    span: Span  # the statement from its first non-blank character to the end of the op
    indent: str  # the whitespace before the statement on its line
    results: str  # result binding as written, e.g. "%0" or "%0:2"; "" when there are none
    target: str  # call target name, decoded
    target_span: Span
    operands: tuple[str, ...]
    attributes: DictAttr  # properties and attributes together (generic form: both)
    input_types: tuple[Type, ...]
    result_types: tuple[Type, ...]
    results_text: str  # the function type's result part as written: "tensor<..>" or "(...)"
    location: str  # the trailing `loc(...)` as written, or ""
    form: CallForm
    module: int = -1  # index of the enclosing module body in the scan, -1 for none
    notes: list[str] = field(default_factory=list)
