"""``records.quick_init`` makes what the dataclass's own ``__init__`` makes, on every class
it is applied to: the same fields in the same order, equal, hashing alike, still frozen."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from rewriter.plan.attribute_operands import AttributeOperand
from rewriter.syntax import model
from rewriter.syntax.records import quick_init

QUICK = [
    model.Span,
    model.Type,
    model.Attr,
    model.NumberAttr,
    model.BoolAttr,
    model.StringAttr,
    model.DenseAttr,
    model.ArrayAttr,
    model.DictAttr,
    model.ListAttr,
    model.SymbolAttr,
    model.OtherAttr,
    model.UnitAttr,
    AttributeOperand,  # slotted
]


def _values(kind: type) -> list[object]:
    """A value for each field that has no default, distinct per field."""
    return [
        f"{kind.__name__}.{item.name}"
        for item in dataclasses.fields(kind)
        if item.default is dataclasses.MISSING
    ]


def _dataclass_made(kind: type, *values: object) -> object:
    """An instance made as ``dataclasses`` makes it: its generated ``__init__``, on a
    twin class declared alike."""
    slots = "__slots__" in kind.__dict__
    twin = dataclasses.dataclass(frozen=True, slots=slots)(
        type(kind.__name__, (), {"__annotations__": _annotations(kind), **_defaults(kind)})
    )
    return twin(*values)


def _field_values(made: object) -> dict[str, object]:
    """Its fields by name, in order: its ``__dict__``, or its slots."""
    if hasattr(made, "__dict__"):
        return dict(vars(made))
    return {name: getattr(made, name) for name in type(made).__slots__}


def _annotations(kind: type) -> dict[str, object]:
    return {item.name: item.type for item in dataclasses.fields(kind)}


def _defaults(kind: type) -> dict[str, object]:
    return {
        item.name: item.default
        for item in dataclasses.fields(kind)
        if item.default is not dataclasses.MISSING
    }


@pytest.mark.parametrize("kind", QUICK, ids=lambda kind: kind.__name__)
def test_quick_init_makes_what_the_dataclass_makes(kind):
    values = _values(kind)
    quick = kind(*values)
    reference = _dataclass_made(kind, *values)
    assert hasattr(quick, "__dict__") == hasattr(reference, "__dict__")
    assert _field_values(quick) == _field_values(reference)
    assert list(_field_values(quick)) == [item.name for item in dataclasses.fields(kind)]
    assert quick == kind(*values) and hash(quick) == hash(kind(*values))
    assert pickle.loads(pickle.dumps(quick)) == quick
    assert dataclasses.replace(quick) == quick
    name = dataclasses.fields(kind)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(quick, name, "changed")


def test_quick_init_takes_keywords_and_defaults():
    made = model.Type(text="tensor<2xf32>", kind=model.TypeKind.TENSOR)
    assert (made.element, made.dims, made.ranked) == ("", (), True)


def test_quick_init_refuses_what_it_cannot_make():
    @dataclasses.dataclass
    class Mutable:
        a: int

    @dataclasses.dataclass(frozen=True)
    class Factory:
        a: list[int] = dataclasses.field(default_factory=list)

    @dataclasses.dataclass(frozen=True)
    class Later:
        a: int

        def __post_init__(self) -> None:
            pass

    @dataclasses.dataclass(frozen=True, slots=True)
    class Slotted:
        a: int

    class MoreSlots(Slotted):  # a slot that is no field
        __slots__ = ("b",)

    @dataclasses.dataclass(frozen=True)
    class SlotsOfItsBase(Slotted):
        c: int = 0

    for kind in (Mutable, Factory, Later, dataclasses.dataclass(frozen=True)(MoreSlots)):
        with pytest.raises(TypeError):
            quick_init(kind)
    with pytest.raises(TypeError):
        quick_init(SlotsOfItsBase)
    quick_init(Slotted)  # its own slots are its fields
