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
from ..syntax.element_types import parse_tensor
from ..syntax.integers import range_error
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
    def own_element(self) -> str | None:
        """The element type of an array or dense attribute as the attribute has it
        (``ui8`` of ``array<ui8>`` or ``tensor<2xui8>``: the signedness ``type`` drops);
        None for scalars, strings, and a tensor type the parser does not read."""
        source = self.source_type
        if source.startswith("array<"):
            return source[len("array<") : -1]
        tensor = parse_tensor(source) if source.startswith("tensor<") else None
        return tensor.element if tensor else None


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
    entries, legacy = ffi_attributes(call)
    if legacy is not None:
        config = call.attributes.get("backend_config")
        assert isinstance(config, model.StringAttr)
        return [replace(_string_operand(legacy, config.value), keys=(legacy,))]
    operands: list[AttributeOperand] = []
    for name, value in entries:
        operands.extend(_operands((name,), value))
    return operands


def _sorted_entries(dictionary: model.DictAttr) -> list[tuple[str, model.Attr]]:
    """Entries in MLIR's dictionary order (bytewise by name), whatever order the text has."""
    return sorted(dictionary.entries, key=lambda entry: entry[0].encode("utf-8"))


def _operands(keys: tuple[str, ...], attr: model.Attr) -> list[AttributeOperand]:
    if isinstance(attr, model.DictAttr):
        found: list[AttributeOperand] = []
        for name, value in _sorted_entries(attr):
            found.extend(_operands((*keys, name), value))
        return found
    return [replace(_operand(".".join(keys), attr), keys=keys)]


def _operand(path: str, attr: model.Attr) -> AttributeOperand:
    if isinstance(attr, model.NumberAttr):
        return _number(path, attr)
    if isinstance(attr, model.BoolAttr):
        # `arith.constant true` takes no type: the boolean literal is already i1.
        return AttributeOperand(path, "i1", "i1", attr.text, "")
    if isinstance(attr, model.StringAttr):
        return _string_operand(path, attr.value)
    if isinstance(attr, model.DenseAttr):
        return _dense(path, attr)
    if isinstance(attr, model.ArrayAttr):
        return _array(path, attr)
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


def _number(path: str, attr: model.NumberAttr) -> AttributeOperand:
    type_ = attr.type or ("f64" if attr.is_float else "i64")
    if attr.is_float:
        if type_ not in _FLOAT_TYPES:
            raise UnsupportedAttribute(
                attr,
                f"attribute '{path}' has type {type_}; the calling contract "
                "passes floats of type f16, bf16, f32 and f64",
            )
        passed = "i16" if type_ in ("f16", "bf16") else type_
        return AttributeOperand(path, type_, passed, attr.literal, type_)
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
    return AttributeOperand(path, type_, signless, attr.literal, signless)


def _string_operand(path: str, value: bytes) -> AttributeOperand:
    type_ = tensor_type([len(value)], "i8")
    return AttributeOperand(path, "string", type_, dense_string(value), type_)


def signless_tensor(type_: model.Type) -> str:
    """``tensor<2x3xui8>`` -> ``tensor<2x3xi8>``."""
    element = _INT_TYPE.sub(lambda m: f"i{m.group(1)}", type_.element)
    return tensor_type(type_.dims, element)


def _dense(path: str, attr: model.DenseAttr) -> AttributeOperand:
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
    return AttributeOperand(path, type_.text, signless, attr.body, signless)


def _array(path: str, attr: model.ArrayAttr) -> AttributeOperand:
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
    return AttributeOperand(path, f"array<{element}>", type_, dense_list(attr.elements), type_)


_ELEMENT = re.compile(r"[-+]?(?:0x[0-9a-fA-F]+|[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)")


def _array_element(attr: model.ArrayAttr, index: int) -> model.NumberAttr:
    """Element ``index`` of ``array<T: a, b, ...>`` as a number with its own place, so that
    a diagnostic points at it rather than at ``array``."""
    colon = attr.text.index(":", attr.text.index(attr.element_type) + len(attr.element_type))
    elements = list(_ELEMENT.finditer(attr.text, colon + 1))
    start = attr.span.start + elements[index].start()
    literal = attr.elements[index]
    return model.NumberAttr(literal, model.Span(start, start + len(literal)), literal, "", False)
