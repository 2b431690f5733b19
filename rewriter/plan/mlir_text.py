"""The one writer of the MLIR text the rewrite adds: types, ops, declarations, attributes.

Planning decides *what* to write (names, types, values, the order of arguments); this
module decides *how* it reads, so every ``func.call``, ``func.func`` and ``arith.constant``
the rewrite makes is spelled in one place. Each function joins texts it is handed and adds
nothing of its own beyond MLIR's punctuation, so callers may hand it ``str.format``
patterns (``call_shapes``: fields in braces) as well as plain text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ..syntax.strings import encode_string

_BARE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")

# ---------------------------------------------------------------- types

TOKEN_TYPES = ("!stablehlo.token", "!mhlo.token")


def is_token(type_: object) -> bool:
    """Whether a parsed type (``model.Type``) or a type's text is a token."""
    return getattr(type_, "text", type_) in TOKEN_TYPES


def tensor_type(dims: Iterable[object], element: str) -> str:
    """``tensor<2x?x3xf32>`` from dims (sizes, or ``"?"``) and an element type."""
    return f"tensor<{''.join(f'{d}x' for d in dims)}{element}>"


def results_text(types: Sequence[str]) -> str:
    """A function type's result part: ``T``, ``(A, B)`` or ``()``."""
    return types[0] if len(types) == 1 else f"({', '.join(types)})"


def function_type(parameters: Iterable[str], results: str | Sequence[str]) -> str:
    """``(A, B) -> R``; ``results`` is a result part as written, or the result types."""
    if not isinstance(results, str):
        results = results_text(results)
    return f"({', '.join(parameters)}) -> {results}"


# ---------------------------------------------------------------- ops


def func_call(callee: str, arguments: Iterable[str], callee_type: str) -> str:
    """``func.call @callee(%a, %b) : (A, B) -> R``."""
    return f"func.call @{callee}({', '.join(arguments)}) : {callee_type}"


def optimization_barrier(results: str, values: Sequence[str], types: Sequence[str]) -> str:
    """``%r:2 = stablehlo.optimization_barrier %a, %b : A, B``."""
    return f"{results} = stablehlo.optimization_barrier {', '.join(values)} : {', '.join(types)}"


def after_all(result: str, tokens: Sequence[str]) -> str:
    """``%t = stablehlo.after_all %a, %b : !stablehlo.token``; no tokens:
    ``stablehlo.create_token``."""
    if not tokens:
        return f"{result} = stablehlo.create_token : !stablehlo.token"
    return f"{result} = stablehlo.after_all {', '.join(tokens)} : !stablehlo.token"


def arith_constant(result: str, value: str, type_: str = "") -> str:
    """``%c = arith.constant 1 : i32``; no type for literals that carry their own (``true``)."""
    typed = f" : {type_}" if type_ else ""
    return f"{result} = arith.constant {value}{typed}"


def arith_bitcast(result: str, value: str, from_type: str, to_type: str) -> str:
    """``%b = arith.bitcast %c : f16 to i16``."""
    return f"{result} = arith.bitcast {value} : {from_type} to {to_type}"


def transpose(result: str, value: str, perm: Iterable[int], from_type: str, to_type: str) -> str:
    """``%t = stablehlo.transpose %v, dims = [1, 0] : (A) -> B``."""
    dims = ", ".join(map(str, perm))
    return f"{result} = stablehlo.transpose {value}, dims = [{dims}] : ({from_type}) -> {to_type}"


def func_return(values: Sequence[str], types: Sequence[str]) -> str:
    """``return %a, %b : A, B``; ``return`` alone when nothing is returned."""
    if not values:
        return "return"
    return f"return {', '.join(values)} : {', '.join(types)}"


def private_function(
    symbol: str, parameters: Iterable[str], results: Sequence[str], attributes: str = ""
) -> str:
    """``func.func private @S(A, B) -> R attributes {...}``: a declaration, or the head of a
    definition when ``parameters`` name their arguments (``%arg0: A``). No results: no
    arrow."""
    arrow = f" -> {results_text(results)}" if results else ""
    suffix = f" {attributes}" if attributes else ""
    return f"func.func private @{symbol}({', '.join(parameters)}){arrow}{suffix}"


# ---------------------------------------------------------------- attributes


def attribute_key(name: str) -> str:
    """A dictionary key: bare when MLIR allows it, else a quoted string."""
    return name if _BARE_KEY.fullmatch(name) else string_literal(name)


def dictionary(entries: Iterable[tuple[str, str | None]]) -> str:
    """``{a = 1, b = "x", unit}`` from (key, value text) pairs; a None value is a unit entry.
    The entries are written in the order given (callers sort them as MLIR prints them)."""
    written = (
        attribute_key(key) if value is None else f"{attribute_key(key)} = {value}"
        for key, value in entries
    )
    return "{" + ", ".join(written) + "}"


def function_attributes(entries: Iterable[tuple[str, str | None]]) -> str:
    """``attributes {...}`` of a ``func.func``."""
    return f"attributes {dictionary(entries)}"


def string_literal(text: str) -> str:
    """``"text"``, escaped as MLIR reads it back."""
    return encode_string(text)


def string_list(items: Iterable[str]) -> str:
    """``["a", "b"]``: an array attribute of strings."""
    return "[" + ", ".join(map(string_literal, items)) + "]"


def integer_list(items: Iterable[int]) -> str:
    """``[1, 2]``: an array attribute of (i64) integers."""
    return "[" + ", ".join(map(str, items)) + "]"


def i64_array(items: Sequence[int]) -> str:
    """``array<i64: 1, 2>``; ``array<i64>`` when empty."""
    return f"array<i64{': ' + ', '.join(map(str, items)) if items else ''}>"


def dense_string(value: bytes) -> str:
    """The ``dense<...>`` of a ``tensor<Nxi8>`` holding ``value``'s bytes."""
    return f'dense<"0x{value.hex().upper()}">' if value else "dense<>"


def dense_list(elements: Sequence[str]) -> str:
    """``dense<[a, b]>`` of a rank-1 tensor; ``dense<>`` when empty."""
    return f"dense<[{', '.join(elements)}]>" if elements else "dense<>"
