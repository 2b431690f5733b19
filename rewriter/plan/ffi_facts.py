"""What an XLA FFI handler needs to know about a call, kept on the extern it becomes.

The extern's C signature loses facts an FFI call frame needs: the target's own name, the
signedness of element types (``ui8`` and ``i8`` are both ``i8``), attribute names and
nesting, the logical dims behind a non-default layout, and which operands are only result
shapes. The rewrite records them on each extern declaration as the discardable attribute
``rewriter.xla_ffi``, so a rewritten module alone is enough to generate FFI adapters
(``--emit-ffi-adapters``, ``python -m rewriter.compile --ffi-bridge``)::

    rewriter.xla_ffi = {attributes = {uplo = "u8"}, operands = ["f32[3,3]{0,1}"],
                        results = ["f32[3,3]{0,1}", "s32[]"], target = "lapack_spotrf_ffi"}

Tensors are written as XLA shapes (element type, logical dims, minor-to-major layout);
attributes as a dictionary shaped like the call's backend_config, each value naming the
FFI kind: a dtype for scalars, ``dtype[dims]`` for arrays (dense and ``array<>``
attributes reach a handler as flat arrays), ``"string"``, or a nested dictionary.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..syntax import model
from ..syntax.element_types import BY_MLIR, BY_XLA, parse_tensor
from .attribute_kinds import FfiKind, OperandKind
from .attribute_operands import AttributeOperand
from .layouts import dense_integers
from .mlir_text import dictionary, integer_list, string_list, string_literal

FACTS_ATTRIBUTE = "rewriter.xla_ffi"

# The dtype of a token operand or result (``!stablehlo.token``): the handler receives it as
# a rank-0 buffer of XLA's TOKEN type, which carries no data; the extern never sees it.
TOKEN_DTYPE = "token"

_SHAPE = re.compile(r"([a-z0-9]+)\[([^\]]*)\](?:\{([0-9,]*)\})?")


class FactsError(Exception):
    """A call (or a recorded description) the FFI bridge cannot describe; ``offset`` is
    where in the description text the fault is, when known."""

    def __init__(self, message: str, offset: int | None = None):
        super().__init__(message)
        self.offset = offset


def xla_dtype(element: str) -> str:
    """``f32`` -> ``f32``, ``ui8`` -> ``u8``, ``i32``/``si32`` -> ``s32``, ``i1`` -> ``pred``."""
    row = BY_MLIR.get(element)
    if row is None:
        raise FactsError(f"element type {element} has no XLA FFI dtype")
    return row.xla


def mlir_element(dtype: str) -> str:
    """The inverse of ``xla_dtype``: ``u8`` -> ``ui8``, ``s32`` -> ``i32``, ``pred`` -> ``i1``."""
    row = BY_XLA.get(dtype)
    if row is None:
        raise FactsError(f"{dtype} is no XLA FFI dtype")
    return row.mlir


@dataclass(frozen=True)
class TensorFacts:
    dtype: str  # XLA name: "f32", "u8", "pred", ...
    dims: tuple[int | None, ...]  # logical dims; None where dynamic
    minor_to_major: tuple[int, ...]

    @property
    def is_token(self) -> bool:
        return self.dtype == TOKEN_DTYPE

    @property
    def major_to_minor(self) -> tuple[int, ...]:
        return tuple(reversed(self.minor_to_major))

    def text(self) -> str:
        dims = ",".join("?" if d is None else str(d) for d in self.dims)
        layout = "{" + ",".join(map(str, self.minor_to_major)) + "}" if self.dims else ""
        return f"{self.dtype}[{dims}]{layout}"

    @classmethod
    def parse(cls, text: str) -> TensorFacts:
        if text == f"{TOKEN_DTYPE}[]":
            return cls(TOKEN_DTYPE, (), ())
        match = _SHAPE.fullmatch(text)
        if not match or match.group(1) not in BY_XLA:
            raise FactsError(f"'{text}' is not an XLA shape such as f32[3,3]{{1,0}}")
        dims = tuple(
            None if d == "?" else int(d) for d in match.group(2).split(",") if match.group(2)
        )
        layout = match.group(3)
        minor_to_major = (
            tuple(int(d) for d in layout.split(",") if d)
            if layout is not None
            else tuple(reversed(range(len(dims))))
        )
        if sorted(minor_to_major) != list(range(len(dims))):
            raise FactsError(f"'{text}' has a layout that is not a permutation of its dims")
        return cls(match.group(1), dims, minor_to_major)


# What an FFI handler receives for an attribute: the ``ffi`` column of ``attribute_kinds``.
AttributeKind = FfiKind


@dataclass(frozen=True)
class AttributeFacts:
    """One entry of the attribute tree."""

    name: str
    kind: AttributeKind
    dtype: str = ""  # scalars and arrays
    dims: tuple[int, ...] = ()  # arrays: the attribute's shape (passed flat)
    entries: tuple[AttributeFacts, ...] = ()  # dictionaries

    def value_text(self) -> str:
        if self.kind == AttributeKind.DICT:
            return dictionary((e.name, e.value_text()) for e in self.entries)
        if self.kind == AttributeKind.ARRAY:
            return f'"{self.dtype}[{",".join(map(str, self.dims))}]"'
        if self.kind == AttributeKind.STRING:
            return '"string"'
        return f'"{self.dtype}"'

    def leaves(self) -> list[AttributeFacts]:
        if self.kind != AttributeKind.DICT:
            return [self]
        return [leaf for entry in self.entries for leaf in entry.leaves()]


@dataclass(frozen=True, slots=True)
class ExternFacts:
    target: str
    operands: tuple[TensorFacts, ...]
    results: tuple[TensorFacts, ...]
    attributes: tuple[AttributeFacts, ...]
    shape_operands: tuple[int, ...] = ()  # operands that give result shapes (XLA drops them)

    def attribute_value(self) -> str:
        """The value of the ``rewriter.xla_ffi`` entry of the extern's attribute dictionary."""
        entries = _entries_but_target(
            self.attributes, self.operands, self.results, self.shape_operands
        )
        return dictionary([*entries, ("target", string_literal(self.target))])

    def leaves(self) -> list[AttributeFacts]:
        return [leaf for attribute in self.attributes for leaf in attribute.leaves()]

    def declared(self) -> tuple[tuple[TensorFacts, ...], tuple[TensorFacts, ...]]:
        """The operands and results the extern declares: all but the tokens, which the
        handler gets and the extern does not."""
        return (
            tuple(t for t in self.operands if not t.is_token),
            tuple(t for t in self.results if not t.is_token),
        )


@lru_cache(maxsize=1024)
def _entries_but_target(
    attributes: tuple[AttributeFacts, ...],
    operands: tuple[TensorFacts, ...],
    results: tuple[TensorFacts, ...],
    shape_operands: tuple[int, ...],
) -> tuple[tuple[str, str], ...]:
    """The entries of ``attribute_value`` before the target, by all they are written from:
    the externs of a file's targets differ in their targets alone, most of them."""
    entries = [
        ("attributes", dictionary((a.name, a.value_text()) for a in attributes)),
        ("operands", string_list(t.text() for t in operands)),
        ("results", string_list(t.text() for t in results)),
    ]
    if shape_operands:
        entries.append(("shape_operands", integer_list(shape_operands)))
    return tuple(entries)


# ---------------------------------------------------------------- from a call


def facts_of_call(
    call: model.CustomCall,
    attributes: Sequence[AttributeOperand],
    operand_perms: Sequence[tuple[int, ...]],
    result_perms: Sequence[tuple[int, ...]],
) -> ExternFacts:
    """The facts of one call, from the parsed call and the contract's view of it."""
    operands, results, shape_operands = signature_facts(call, operand_perms, result_perms)
    return ExternFacts(call.target, operands, results, attribute_facts(attributes), shape_operands)


def signature_facts(
    call: model.CustomCall,
    operand_perms: Sequence[tuple[int, ...]],
    result_perms: Sequence[tuple[int, ...]],
) -> tuple[tuple[TensorFacts, ...], tuple[TensorFacts, ...], tuple[int, ...]]:
    """The facts of a call's operands and results, and its shape operands."""
    return (
        tuple(_tensor(t, p) for t, p in zip(call.input_types, operand_perms, strict=True)),
        tuple(_tensor(t, p) for t, p in zip(call.result_types, result_perms, strict=True)),
        _shape_operands(call),
    )


def attribute_facts(attributes: Sequence[AttributeOperand]) -> tuple[AttributeFacts, ...]:
    """What FFI makes of a call's attribute operands (their nesting rebuilt)."""
    return _attribute_tree(attributes)


def _tensor(type_: model.Type, major_to_minor: tuple[int, ...]) -> TensorFacts:
    if type_.kind == model.TypeKind.TOKEN:
        return TensorFacts(TOKEN_DTYPE, (), ())
    return TensorFacts(xla_dtype(type_.element), type_.sizes, tuple(reversed(major_to_minor)))


def leaf_paths(
    attributes: Sequence[AttributeFacts], prefix: str = ""
) -> list[tuple[str, AttributeFacts]]:
    """Every non-dictionary attribute, depth first, with its dotted path."""
    found = []
    for attribute in attributes:
        path = f"{prefix}{attribute.name}"
        if attribute.kind == AttributeKind.DICT:
            found += leaf_paths(attribute.entries, path + ".")
        else:
            found.append((path, attribute))
    return found


def _shape_operands(call: model.CustomCall) -> tuple[int, ...]:
    indices = call.attributes.get("indices_of_shape_operands")
    values = dense_integers(indices) if indices is not None else None
    if not values:
        return ()
    count = len(call.result_types)
    return tuple(values * count if len(values) == 1 and count > 1 else values)  # a splat


def _attribute_tree(attributes: Sequence[AttributeOperand]) -> tuple[AttributeFacts, ...]:
    """Rebuild the nesting of the flattened attribute operands (depth first, sorted)."""
    root: dict[str, object] = {}
    for attribute in attributes:
        node = root
        for key in attribute.keys[:-1]:
            node = node.setdefault(key, {})  # type: ignore[assignment]
        node[attribute.keys[-1]] = attribute
    return _entries(root)


def _entries(node: dict[str, object]) -> tuple[AttributeFacts, ...]:
    return tuple(
        AttributeFacts(name, AttributeKind.DICT, entries=_entries(value))
        if isinstance(value, dict)
        else _leaf(name, value)  # type: ignore[arg-type]
        for name, value in node.items()
    )


def _leaf(name: str, attribute: AttributeOperand) -> AttributeFacts:
    """What FFI makes of one attribute operand: its kind's ``ffi`` (``attribute_kinds``),
    with the dtype and, for arrays, the shape."""
    row = attribute.kind
    if row.ffi == FfiKind.STRING:
        return AttributeFacts(name, AttributeKind.STRING)
    if row.kind == OperandKind.ARRAY:
        # The operand is tensor<Nx...>: N elements of the array's own element type.
        operand = parse_tensor(attribute.type)
        count = operand.dims[0] if operand and operand.dims else None
        element = xla_dtype(attribute.own_element or "")
        return AttributeFacts(name, AttributeKind.ARRAY, element, (count or 0,))
    if row.ffi == FfiKind.ARRAY:
        source = attribute.source_type
        tensor = parse_tensor(source)
        if tensor is None or not tensor.is_static:
            raise FactsError(f"attribute type {source} is not a static tensor")
        dims = tuple(d for d in tensor.dims if d is not None)
        return AttributeFacts(name, AttributeKind.ARRAY, xla_dtype(tensor.element), dims)
    return AttributeFacts(name, AttributeKind.SCALAR, xla_dtype(attribute.source_type))


# ---------------------------------------------------------------- from a declaration


def parse_facts(text: str) -> ExternFacts:
    """The facts from the dictionary text of a ``rewriter.xla_ffi`` attribute."""
    from lark.exceptions import UnexpectedInput

    from ..syntax.grammar import parser
    from ..syntax.to_model import ToModel

    try:
        tree = parser().parse(text, start="dictionary")
    except UnexpectedInput as error:  # the description is not an attribute dictionary
        offset = getattr(error, "pos_in_stream", None)
        raise FactsError(
            f"malformed {FACTS_ATTRIBUTE} attribute: {_unexpected(error)}", offset
        ) from None
    try:
        return _facts_from_model(ToModel(text, 0).transform(tree))
    except ValueError as error:  # a number that is not one, in a shape or shape_operands
        raise FactsError(f"malformed {FACTS_ATTRIBUTE} attribute: {error}") from None


def _unexpected(error: Exception) -> str:
    """Lark's error in one line, without its position in the description (the diagnostic
    shows where)."""
    from lark.exceptions import UnexpectedCharacters, UnexpectedToken

    if isinstance(error, UnexpectedToken):
        if error.token.type == "$END":
            return "it ends early"
        return f"unexpected '{error.token}'"
    if isinstance(error, UnexpectedCharacters):
        return f"unexpected character '{error.char}'"
    return "it ends early"


def _facts_from_model(dictionary: model.DictAttr) -> ExternFacts:
    target = dictionary.get("target")
    operands = dictionary.get("operands")
    results = dictionary.get("results")
    attributes = dictionary.get("attributes")
    shapes = dictionary.get("shape_operands")
    if not (
        isinstance(target, model.StringAttr)
        and isinstance(operands, model.ListAttr)
        and isinstance(results, model.ListAttr)
        and isinstance(attributes, model.DictAttr)
        and (shapes is None or isinstance(shapes, model.ListAttr))
    ):
        raise FactsError(
            f"{FACTS_ATTRIBUTE} needs target (a string), operands and results (lists of "
            "XLA shapes) and attributes (a dictionary)"
        )
    return ExternFacts(
        target.value.decode("utf-8"),
        tuple(TensorFacts.parse(_text(item)) for item in operands.items),
        tuple(TensorFacts.parse(_text(item)) for item in results.items),
        _attributes_from_model(attributes),
        tuple(int(item.text) for item in shapes.items) if shapes else (),
    )


def _text(item: model.Attr) -> str:
    if not isinstance(item, model.StringAttr):
        raise FactsError(f"expected a string in {FACTS_ATTRIBUTE}, found {item.text}")
    return item.value.decode("utf-8")


def _attributes_from_model(dictionary: model.DictAttr) -> tuple[AttributeFacts, ...]:
    out = []
    for name, value in dictionary.entries:
        if isinstance(value, model.DictAttr):
            entries = _attributes_from_model(value)
            out.append(AttributeFacts(name, AttributeKind.DICT, entries=entries))
            continue
        kind = _text(value)
        if kind == "string":
            out.append(AttributeFacts(name, AttributeKind.STRING))
        elif kind in BY_XLA:
            out.append(AttributeFacts(name, AttributeKind.SCALAR, kind))
        else:
            shape = TensorFacts.parse(kind)
            if None in shape.dims:
                raise FactsError(f"array attribute '{name}' has a dynamic size")
            dims = tuple(d for d in shape.dims if d is not None)
            out.append(AttributeFacts(name, AttributeKind.ARRAY, shape.dtype, dims))
    return tuple(out)
