"""The argument and result types of a public function, from the declaration IREE keeps.

IREE stores each exported function's signature as text in its reflection
(``iree.abi.declaration``: ``sync func @main(%input0: tensor<3xi8> {iree.abi.encoding =
tensor<3xui8>}) -> (%output0: tensor<f32>)``); the encoding, when there is one, is the
caller's type. ``load`` reads it once, to check the arguments of every call and to know
the dtype of every result without asking IREE on each call.
"""

from __future__ import annotations

import json
import re

import numpy as np

from ..compile.arguments import Parameter
from ..syntax.element_types import BY_MLIR, parse_tensor
from ..syntax.typetext import closing_bracket, split_types
from .build import ARGUMENT_NAMES_KEY

_ENCODING = re.compile(r"iree\.abi\.encoding = (tensor<[^{}]*>)")


def _declared(program, name: str) -> tuple[list[str], list[str]] | None:
    """The argument and result types of ``name`` (the caller's), None when its
    declaration cannot be read."""
    function = program.lookup_function(name)
    reflection = function.reflection if function else {}
    declaration = reflection.get("iree.abi.declaration", "")
    start = declaration.find("(")
    if start < 0:
        return None
    end = start + 1 + closing_bracket(declaration[start + 1 :])
    arguments = _types(declaration[start + 1 : end])
    rest = declaration[end + 1 :].strip()
    if not rest:
        return arguments, []
    if not rest.startswith("->"):
        return None
    rest = rest[2:].strip()
    if rest.startswith("("):
        rest = rest[1 : 1 + closing_bracket(rest[1:])]
    return arguments, _types(rest)


def _types(inside: str) -> list[str]:
    """``%input0: tensor<i8> {iree.abi.encoding = tensor<ui8>}, ...`` -> ``["tensor<ui8>"]``."""
    found = []
    for item in split_types(inside) if inside.strip() else []:
        type_ = item.split(":", 1)[-1].strip()
        encoding = _ENCODING.search(type_)
        found.append(encoding.group(1) if encoding else type_.split(" {", 1)[0])
    return found


def parameters(program, name: str) -> list[Parameter | None] | None:
    """Each argument of a public function as a tensor ``Parameter`` (None for one that is
    no tensor: a scalar or a list, passed on as it is), with JAX's argument names when
    ``compile_module`` recorded them; None when the declaration cannot be read."""
    declared = _declared(program, name)
    if declared is None:
        return None
    types = declared[0]
    reflection = program.lookup_function(name).reflection
    try:
        names = json.loads(reflection.get(ARGUMENT_NAMES_KEY, "[]"))
    except ValueError:
        names = []
    names = [n if isinstance(n, str) else None for n in names][: len(types)]
    names += [None] * (len(types) - len(names))
    found: list[Parameter | None] = []
    for index, (type_, argument_name) in enumerate(zip(types, names, strict=True)):
        tensor = parse_tensor(type_)
        if tensor is None or tensor.element not in BY_MLIR:
            found.append(None)
            continue
        shape = tuple(-1 if d is None else d for d in tensor.dims)
        dtype = BY_MLIR[tensor.element].dtype
        found.append(Parameter(name, index, argument_name, tensor.element, shape, dtype))
    return found


def result_types(program, name: str) -> list[tuple[np.dtype, tuple[int, ...] | None]] | None:
    """The dtype and shape (None when a dimension is dynamic) of each result of a public
    function; None when its declaration cannot be read or a result is no tensor of a
    numpy type."""
    declared = _declared(program, name)
    if declared is None:
        return None
    found: list[tuple[np.dtype, tuple[int, ...] | None]] = []
    for type_ in declared[1]:
        tensor = parse_tensor(type_)
        if tensor is None or tensor.element not in BY_MLIR:
            return None
        static = [d for d in tensor.dims if d is not None]
        shape = tuple(static) if len(static) == len(tensor.dims) else None
        found.append((BY_MLIR[tensor.element].dtype, shape))
    return found
