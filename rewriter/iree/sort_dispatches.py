"""The sorts of the IREE path as dispatches that call the stable sort of ``abi/sort_calls.c``.

A sort that ``sorts.py`` routes away from IREE's bubble sort is otherwise an import of the
VM module ``rw_sort``, served in Python with numpy: about 120 us a call on top of the sort
(an argsort of 1,000 keys took 0.17 ms against 0.05 on the compiled path, whose code calls
the stable sort directly). When ``load`` can serve it (a HAL driver with the executable
plugin, and a C compiler), the sort is instead the body of ``@rw_sort.S``: one
``flow.dispatch`` of a hand-written executable (one workgroup) whose code passes the sort's
description and its bindings' base pointers and offsets to the executable import
``rw_iree_sort_S``, which the plugin resolves to ``abi/iree_sorts.c`` (``sort_library.py``):
the same stable sort, and the same selection of the first K for ``lax.top_k``, as
the compiled path's. No Python runs during the call, and IREE schedules the dispatch as its
own.

Only what a binding can carry is routed (``why_not``): static shapes with elements, real
numbers of 1 to 8 bytes (not ``i1``, not complex), at most 16 operands (two bindings
each; IREE's runtime takes 32 a dispatch) of rank 16 at most; the others stay imports.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..compile.sorts import SortKey
from ..syntax.element_types import BY_MLIR, parse_tensor
from .dispatches import binding_base, executable_lines

# The executable import of the sort S, IMPORT_PREFIX + S: one name a signature (IREE links
# a module's executables together), all served by abi/iree_sorts.c's ``rw_iree_sort``, which
# the plugin offers under ``IMPORT_PREFIX + "*"``.
IMPORT_PREFIX = "rw_iree_sort_"
EXECUTABLE_PREFIX = "rw_sort_"
MAX_OPERANDS = 16  # as abi/iree_sorts.c
MAX_RANK = 16
_SIGNLESS = re.compile(r"^[su]i(\d+)$")


def why_not(types: Sequence[str]) -> str | None:
    """Why a sort of operands of ``types`` cannot be a dispatch, or None when it can."""
    if len(types) > MAX_OPERANDS:
        return f"{len(types)} operands: a dispatch binds at most {MAX_OPERANDS} and their results"
    for type_ in types:
        tensor = parse_tensor(type_)
        if tensor is None or not tensor.is_static:
            return f"{type_} is not a static tensor"
        if not tensor.dims or len(tensor.dims) > MAX_RANK or 0 in tensor.dims:
            return f"{type_} has no elements or a rank beyond {MAX_RANK}"
        row = BY_MLIR.get(tensor.element)
        if row is None or row.is_complex or tensor.element == "i1":
            return f"a binding of {tensor.element} is not supported here"
    return None


def definitions(
    symbol: str,
    types: Sequence[str],
    results: Sequence[str],
    dimension: int,
    keys: Sequence[SortKey],
    wanted: int | None,
) -> str:
    """The executable that sorts, and the private function ``@rw_sort.SYMBOL`` that
    dispatches it (taking ``types``, returning ``results``), as MLIR text."""
    name = EXECUTABLE_PREFIX + symbol
    shape = parse_tensor(types[0])
    assert shape is not None and shape.is_static
    sizes = [int(d) for d in shape.dims if d is not None]
    constants = [len(types), len(sizes), dimension, len(keys), wanted or 0]
    constants += [number for key in keys for number in (key.operand, key.code)]
    constants += sizes
    constants += [_element(t).size for t in types]
    body = ["%c0 = arith.constant 0 : index"]
    values: list[str] = []
    call_types: list[str] = []
    for index, constant in enumerate(constants):
        body.append(f"%k{index} = arith.constant {constant} : i64")
        values.append(f"%k{index}")
        call_types.append("i64")
    bindings = [(f"p{i}", t) for i, t in enumerate(types)]
    bindings += [(f"q{i}", t) for i, t in enumerate(results)]
    for binding, type_ in bindings:
        tensor = parse_tensor(type_)
        assert tensor is not None
        element = _SIGNLESS.sub(r"i\1", _element(type_).mlir)  # IREE's code is signless
        count = 1
        for dim in tensor.dims:
            count *= dim or 1
        body.extend(binding_base(binding, count, element))
        values += [f"%b{binding}", f"%o{binding}"]
        call_types += [f"memref<{element}>", "index"]
    signature = ", ".join(call_types)
    symbol_of_import = IMPORT_PREFIX + symbol
    body.append(f"func.call @{symbol_of_import}({', '.join(values)}) : ({signature}) -> ()")
    arguments = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    # IREE legalizes no unsigned tensor of a flow.dispatch: the bits go as signless ones.
    converted = [
        f"  %u{i} = stablehlo.bitcast_convert %a{i} : ({t}) -> {_signless(t)}"
        for i, t in enumerate(types)
        if _signless(t) != t
    ]
    operands = ", ".join(f"%u{i}" if _signless(t) != t else f"%a{i}" for i, t in enumerate(types))
    signless = [_signless(t) for t in results]
    dispatched = ["%r"] if len(results) == 1 else [f"%r#{i}" for i in range(len(results))]
    returned: list[str] = []
    back: list[str] = []
    for i, (value, type_) in enumerate(zip(dispatched, results, strict=True)):
        if signless[i] != type_:
            converted_back = f"%v{i}"
            back.append(
                f"  {converted_back} = stablehlo.bitcast_convert {value} : "
                f"({signless[i]}) -> {type_}"
            )
            value = converted_back
        returned.append(value)
    result_list = ", ".join(results)
    count_suffix = "" if len(results) == 1 else f":{len(results)}"
    inner = ", ".join(f"%{binding}: !stream.binding" for binding, _ in bindings)
    return "\n".join(
        [
            *executable_lines(name, {symbol_of_import: signature}, inner, body),
            f"func.func private @rw_sort.{symbol}({arguments}) -> ({result_list}) {{",
            *converted,
            f"  %r{count_suffix} = flow.dispatch @{name}::@{name}({operands}) : "
            f"({', '.join(map(_signless, types))}) -> ({', '.join(signless)})",
            *back,
            f"  return {', '.join(returned)} : {result_list}",
            "}",
        ]
    )


def _signless(type_: str) -> str:
    """``type_`` with signless elements: ``tensor<8xui32>`` is ``tensor<8xi32>``."""
    tensor = parse_tensor(type_)
    assert tensor is not None
    element = _SIGNLESS.sub(r"i\1", tensor.element)
    return type_ if element == tensor.element else type_[: -len(tensor.element) - 1] + element + ">"


def _element(type_: str):
    tensor = parse_tensor(type_)
    assert tensor is not None
    return BY_MLIR[tensor.element]
