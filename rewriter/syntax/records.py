"""Frozen dataclasses made in less than half the instructions: the model's values
(spans, attributes, types) are made per call and per statement.

A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__`` (its own
``__setattr__`` refuses), about 1,400 instructions a field in CPython 3.11: a
``NumberAttr`` of five fields cost about 9,300. ``quick_init`` gives a frozen dataclass
without slots an ``__init__`` that writes the fields into the instance's ``__dict__``
instead (about 3,900 in all). What it makes is what the dataclass's own ``__init__``
makes: the same fields, in the same order, in the same dictionary, with the same
defaults; equality, hashing, ``repr``, ``dataclasses.replace`` and pickling read that
dictionary and are unchanged, and the instance stays frozen (its ``__setattr__`` still
refuses). Only plain fields qualify (no ``default_factory``, ``init=False``,
``InitVar`` or ``__post_init__``): for any other class it refuses at import. Classes
with slots keep them (``AttributeOperand``: a dictionary an instance, kept by every
call's report, took a long-attribute export's peak memory past its limit): their
``__init__`` sets each field through its slot's own descriptor (``__set__``, what
``object.__setattr__`` finds by the field's name and calls), in a little more than half
the instructions (an ``AttributeOperand`` is made per attribute of a call whose value is
its own). A slotted class qualifies when its own slots are exactly its fields.
``tests/test_records.py`` compares both ``__init__``s on every class it is applied to.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


def quick_init(cls: type[T]) -> type[T]:
    """``cls`` (a frozen dataclass, its fields in its own slots or none) with the quicker
    ``__init__``."""
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    if not (params.frozen and params.init):
        raise TypeError(f"quick_init: {cls.__name__} is no frozen dataclass")
    slots = cls.__dict__.get("__slots__")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"quick_init: {cls.__name__} has a __post_init__")
    names: list[str] = []
    parameters: list[str] = []
    defaults: dict[str, Any] = {}
    for item in dataclasses.fields(cls):  # type: ignore[arg-type]
        if not item.init or item.kw_only or item.default_factory is not dataclasses.MISSING:
            raise TypeError(f"quick_init: {cls.__name__}.{item.name} is no plain field")
        names.append(item.name)
        if item.default is dataclasses.MISSING:
            parameters.append(item.name)
        else:
            defaults[f"_default_{item.name}"] = item.default
            parameters.append(f"{item.name}=_default_{item.name}")
    if any(name.startswith("_") for name in names):
        raise TypeError(f"quick_init: {cls.__name__} has a field whose name starts with _")
    if slots is None and hasattr(cls, "__slots__"):
        raise TypeError(f"quick_init: {cls.__name__} has slots of a base class")
    if slots is None:
        body = "".join(f"    _fields[{name!r}] = {name}\n" for name in names)
        body = f"    _fields = self.__dict__\n{body}"
    elif tuple(slots) == tuple(names) and all(hasattr(c, "__slots__") for c in cls.__mro__[:-1]):
        for name in names:  # each slot's member descriptor sets it
            defaults[f"_set_{name}"] = cls.__dict__[name].__set__
        body = "".join(f"    _set_{name}(self, {name})\n" for name in names)
    else:
        raise TypeError(f"quick_init: {cls.__name__}'s own slots are not its fields")
    source = f"def __init__(self, {', '.join(parameters)}):\n{body}"
    namespace: dict[str, Any] = {}
    exec(source, dict(defaults), namespace)  # as dataclasses makes its own
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__annotations__ = dict(cls.__init__.__annotations__)
    cls.__init__ = init  # type: ignore[method-assign]
    return cls
