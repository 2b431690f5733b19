"""``records.quick_init`` makes what the dataclass's own ``__init__`` makes, on every class
it is applied to: the same fields in the same order, equal, hashing alike, still frozen."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

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
    twin = dataclasses.dataclass(frozen=True)(
        type(kind.__name__, (), {"__annotations__": _annotations(kind), **_defaults(kind)})
    )
    return twin(*values)


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
    assert vars(quick) == vars(reference)
    assert list(vars(quick)) == [item.name for item in dataclasses.fields(kind)]
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

    for kind in (Mutable, Factory, Later):
        with pytest.raises(TypeError):
            quick_init(kind)
