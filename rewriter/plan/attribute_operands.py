"""Contract rules 2 and 3: FFI attributes of a custom call become constant operands.

Each attribute becomes one extra operand of the call, in dictionary order (sorted by
name, as XLA hands attributes to a handler); nested dictionaries are flattened depth
first. Integers become signless (`ui8` -> `i8`, same bits): `arith.constant` accepts no
signedness. f16/bf16 values are written as `arith.constant` in their own type and then
bitcast to `i16`, so that C receives them as `uint16_t` bits: LLVM passes `half` in SSE
registers on x86-64, which a C `uint16_t` parameter would not read (see abi/README.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ..syntax import model
from ..syntax.integers import range_error
from ..syntax.records import quick_init
from .attribute_kinds import KindRow, kind_of, own_element
from .mlir_text import dense_list, dense_string, tensor_type

_INT_TYPE = re.compile(r"(?:[su]?i)([0-9]+)")
_FLOAT_TYPES = ("f16", "bf16", "f32", "f64")
_DENSE_ELEMENT = re.compile(r"(?:[su]?i[0-9]+|f16|bf16|f32|f64|complex<(?:f32|f64)>)")
_ARRAY_ELEMENT = re.compile(r"(?:[su]?i[0-9]+|f16|bf16|f32|f64)")


class UnsupportedAttribute(Exception):
    """An attribute the contract cannot pass; carries the attribute for the diagnostic."""

    def __init__(self, attr: model.Attr, message: str):
        super().__init__(message)
        self.attr = attr
        self.message = message
        self.offset = attr.span.start  # where in the file (``operand_of`` moves it)


@quick_init
@dataclass(frozen=True, slots=True)
class AttributeOperand:
    """One extra operand of the call: the constant ops that make it and the type passed."""

    path: str  # attribute name; nested entries joined with "."
    source_type: str  # the attribute's own type, e.g. "ui8", "bf16", "tensor<3xi64>", "string"
    type: str  # the operand type of the call and of the extern
    value: str  # arith.constant value text
    constant_type: str  # type of the arith.constant (differs from `type` for f16/bf16)
    keys: tuple[str, ...] = ()  # the names on the way to the attribute, outermost first

    @property
    def kind(self) -> KindRow:
        """The row of ``attribute_kinds.KINDS`` for this operand, read from ``source_type``
        (which the rule that made the operand wrote)."""
        return kind_of(self.source_type)

    @property
    def own_element(self) -> str | None:
        """The element type of an array or dense attribute as the attribute has it
        (``ui8`` of ``array<ui8>`` or ``tensor<2xui8>``: the signedness ``type`` drops);
        None for scalars, strings, and a tensor type the parser does not read."""
        return own_element(self.source_type)


def ffi_attributes(call: model.CustomCall) -> tuple[list[tuple[str, model.Attr]], str | None]:
    """The FFI attributes of a call (rule 2), and the legacy string config if there is one."""
    for key in ("mhlo.backend_config", "backend_config"):
        config = call.attributes.get(key)
        if isinstance(config, model.DictAttr):
            return _sorted_entries(config), None
    config = call.attributes.get("backend_config")
    if isinstance(config, model.StringAttr) and config.value:
        return [], "backend_config"
    return [], None


def is_legacy_call(call: model.CustomCall) -> bool:
    """A custom call of the legacy API: a string backend_config (even an empty one) and no
    dictionary config. Its handler is no XLA FFI handler."""
    configs = [call.attributes.get(key) for key in ("mhlo.backend_config", "backend_config")]
    return not any(isinstance(c, model.DictAttr) for c in configs) and isinstance(
        configs[1], model.StringAttr
    )


def attribute_operands(call: model.CustomCall) -> list[AttributeOperand]:
    """Every extra operand of ``call``, in contract order (rules 2 and 3)."""
    return [operand_of(keys, attr) for keys, attr in ffi_leaves(call)]


def ffi_leaves(call: model.CustomCall) -> list[tuple[tuple[str, ...], model.Attr]]:
    """The attributes that become operands, in contract order, each with the names on the
    way to it: the FFI dictionary flattened depth first in dictionary order, or the legacy
    string config. The order is decided by names and nesting alone, never by a value."""
    entries, legacy = ffi_attributes(call)
    if legacy is not None:
        config = call.attributes.get("backend_config")
        assert isinstance(config, model.StringAttr)
        return [((legacy,), config)]
    leaves: list[tuple[tuple[str, ...], model.Attr]] = []
    for name, value in entries:
        _flatten((name,), value, leaves)
    return leaves


def _sorted_entries(dictionary: model.DictAttr) -> list[tuple[str, model.Attr]]:
    """Entries in MLIR's dictionary order (bytewise by name), whatever order the text has."""
    return sorted(dictionary.entries, key=lambda entry: entry[0].encode("utf-8"))


def _flatten(
    keys: tuple[str, ...], attr: model.Attr, leaves: list[tuple[tuple[str, ...], model.Attr]]
) -> None:
    if isinstance(attr, model.DictAttr):
        for name, value in _sorted_entries(attr):
            _flatten((*keys, name), value, leaves)
    else:
        leaves.append((keys, attr))


def operand_of(
    keys: tuple[str, ...], attr: model.Attr, path: str | None = None
) -> AttributeOperand:
    """The operand of the attribute at ``keys`` (rules 2 and 3): the rules are handed the
    attribute moved to offset 0 (``at_start``), so that what they make of it is a function
    of its names and its text alone, on every path (``call_shapes`` remembers it by
    those); an ``UnsupportedAttribute`` says where in the file (``offset``). ``path``:
    ``keys`` joined with ".", when the caller has it (a shape's leaf, once per value)."""
    start = attr.span.start
    try:
        # ``keys`` is written into the operand as it is made: made once, not copied (one
        # is made per call whose attribute value is its own); the rules read ``path``.
        return _operand(
            ".".join(keys) if path is None else path,
            _moved(attr, start) if start else attr,  # ``at_start``, without its call
            keys,
        )
    except UnsupportedAttribute as error:
        error.offset = start + error.attr.span.start
        raise


def valueless(operand: AttributeOperand) -> AttributeOperand:
    """The operand without its value: all that FFI facts, the parameter order and the
    extern are decided by (``judging``)."""
    return AttributeOperand(
        operand.path, operand.source_type, operand.type, "", operand.constant_type, operand.keys
    )


def but_value(operand: AttributeOperand) -> tuple[object, ...]:
    """The fields of ``valueless(operand)`` but its empty value: equal exactly when the
    valueless operands are, and cheaper to make and compare."""
    return (operand.path, operand.source_type, operand.type, operand.constant_type, operand.keys)


# The three above and the tests of ``but_value`` spell every field out:
assert AttributeOperand.__slots__ == (
    "path",
    "source_type",
    "type",
    "value",
    "constant_type",
    "keys",
), "a new field of AttributeOperand: add it to operand_of, valueless and but_value"


def at_start(attr: model.Attr) -> model.Attr:
    """``attr`` as the model of its text parsed at offset 0: every span moved back by its
    start (its parts' spans too: a list's items)."""
    return _moved(attr, attr.span.start) if attr.span.start else attr


def _moved(attr: model.Attr, by: int) -> model.Attr:
    span = model.Span(attr.span.start - by, attr.span.end - by)
    if isinstance(attr, model.ListAttr):
        return replace(attr, span=span, items=tuple(_moved(item, by) for item in attr.items))
    if isinstance(attr, model.DictAttr):
        entries = tuple((name, _moved(value, by)) for name, value in attr.entries)
        return replace(attr, span=span, entries=entries)
    return replace(attr, span=span)


def _operand(path: str, attr: model.Attr, keys: tuple[str, ...]) -> AttributeOperand:
    if isinstance(attr, model.NumberAttr):
        return _number(path, attr, keys)
    if isinstance(attr, model.BoolAttr):
        return _bool(path, attr, keys)
    if isinstance(attr, model.StringAttr):
        return _string_operand(path, attr.value, keys)
    if isinstance(attr, model.DenseAttr):
        return _dense(path, attr, keys)
    if isinstance(attr, model.ArrayAttr):
        return _array(path, attr, keys)
    raise UnsupportedAttribute(
        attr,
        f"attribute '{path}' is {_describe(attr)}, which the calling "
        "contract cannot pass (numbers, booleans, strings, dense and array "
        "attributes and dictionaries of these)",
    )


def _describe(attr: model.Attr) -> str:
    if isinstance(attr, model.ListAttr):
        return "a list"
    if isinstance(attr, model.SymbolAttr):
        return "a symbol reference"
    if isinstance(attr, model.UnitAttr):
        return "a unit attribute"
    if isinstance(attr, model.OtherAttr):
        return attr.description
    return "of an unsupported kind"


def _number(path: str, attr: model.NumberAttr, keys: tuple[str, ...]) -> AttributeOperand:
    type_ = attr.type or ("f64" if attr.is_float else "i64")
    if attr.is_float:
        if type_ not in _FLOAT_TYPES:
            raise UnsupportedAttribute(
                attr,
                f"attribute '{path}' has type {type_}; the calling contract "
                "passes floats of type f16, bf16, f32 and f64",
            )
        passed = "i16" if type_ in ("f16", "bf16") else type_
        return AttributeOperand(path, type_, passed, attr.literal, type_, keys)
    width = _INT_TYPE.fullmatch(type_)
    if not width:
        raise UnsupportedAttribute(
            attr,
            f"attribute '{path}' has type {type_}; the calling contract "
            "passes integers of type iN, siN and uiN",
        )
    problem = range_error(attr.literal, type_)
    if problem:
        raise UnsupportedAttribute(attr, f"attribute '{path}': {problem}")
    signless = f"i{width.group(1)}"
    return AttributeOperand(path, type_, signless, attr.literal, signless, keys)


def _bool(path: str, attr: model.BoolAttr, keys: tuple[str, ...]) -> AttributeOperand:
    # `arith.constant true` takes no type: the boolean literal is already i1.
    return AttributeOperand(path, "i1", "i1", attr.text, "", keys)


def _string_operand(path: str, value: bytes, keys: tuple[str, ...]) -> AttributeOperand:
    type_ = tensor_type([len(value)], "i8")
    return AttributeOperand(path, "string", type_, dense_string(value), type_, keys)


def signless_tensor(type_: model.Type) -> str:
    """``tensor<2x3xui8>`` -> ``tensor<2x3xi8>``."""
    element = _INT_TYPE.sub(lambda m: f"i{m.group(1)}", type_.element)
    return tensor_type(type_.dims, element)


def _dense(path: str, attr: model.DenseAttr, keys: tuple[str, ...]) -> AttributeOperand:
    type_ = attr.type
    ok = (
        attr.keyword != "sparse"
        and type_.kind == model.TypeKind.TENSOR
        and type_.ranked
        and "?" not in type_.dims
        and _DENSE_ELEMENT.fullmatch(type_.element)
    )
    if not ok:
        raise UnsupportedAttribute(
            attr,
            f"attribute '{path}' is {attr.keyword}<...> : {type_.text}; "
            "the calling contract passes static tensors of integers, floats "
            "and complex numbers",
        )
    signless = signless_tensor(type_)
    return AttributeOperand(path, type_.text, signless, attr.body, signless, keys)


def _array(path: str, attr: model.ArrayAttr, keys: tuple[str, ...]) -> AttributeOperand:
    element = attr.element_type
    if not _ARRAY_ELEMENT.fullmatch(element):
        raise UnsupportedAttribute(
            attr,
            f"attribute '{path}' is an array of {element}; the calling "
            "contract passes arrays of integers and floats",
        )
    for index, literal in enumerate(attr.elements):
        problem = range_error(literal, element)
        if problem:
            raise UnsupportedAttribute(
                _array_element(attr, index), f"attribute '{path}' element {index}: {problem}"
            )
    signless = _INT_TYPE.sub(lambda m: f"i{m.group(1)}", element)
    type_ = tensor_type([len(attr.elements)], signless)
    return AttributeOperand(
        path, f"array<{element}>", type_, dense_list(attr.elements), type_, keys
    )


_ELEMENT = re.compile(r"[-+]?(?:0x[0-9a-fA-F]+|[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)")


def _array_element(attr: model.ArrayAttr, index: int) -> model.NumberAttr:
    """Element ``index`` of ``array<T: a, b, ...>`` as a number with its own place, so that
    a diagnostic points at it rather than at ``array``."""
    colon = attr.text.index(":", attr.text.index(attr.element_type) + len(attr.element_type))
    elements = list(_ELEMENT.finditer(attr.text, colon + 1))
    start = attr.span.start + elements[index].start()
    literal = attr.elements[index]
    return model.NumberAttr(literal, model.Span(start, start + len(literal)), literal, "", False)
