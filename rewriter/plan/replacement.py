"""The text that replaces one custom call: its attributes' constants and the ``func.call``.

Made once per statement shape (``call_shapes``) and filled in for each of its calls, so
the per-call step is what costs: a ``str.format`` of the pattern parses it again every
time (about 15k instructions for a 200-character call). The pattern is therefore parsed
once, into its literal pieces and the order its fields come in; a call's text is then one
``itemgetter`` over its field values and those pieces, and one join (about half of that).
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter
from string import Formatter

from ..syntax import model
from .attribute_operands import AttributeOperand
from .call_shapes import LITERAL, CallShape, Literal, escape_format
from .mlir_text import (
    after_all,
    arith_bitcast,
    arith_constant,
    func_call,
    function_type,
    is_token,
    optimization_barrier,
    results_text,
)
from .naming import ValueNamer, ssa_base

CALLEE = "callee"  # the field of the callee's name, which is known last


class ReplacementForm:
    """The text that replaces a call, written as a ``str.format`` pattern: everything a
    statement shape fixes is written in, what each call has of its own is a field: the
    statement's holes first (``call_shapes``), then the fresh names of the constants, in
    ``hints`` order, as positional fields, and the name of its callee as ``{callee}``."""

    def __init__(self, pattern: str, holes: int, hints: tuple[str, ...]):
        self.pattern = pattern
        self.hints = hints  # what each fresh name is named after, in the order asked
        self._bases = [ssa_base(hint) for hint in hints]
        callee = holes + len(hints)  # its place among a call's field values
        pieces: list[str] = []
        picks: list[int] = []  # the join's items: field values, then the pieces
        for literal, name, _, _ in Formatter().parse(pattern):
            if literal:
                picks.append(callee + 1 + len(pieces))
                pieces.append(literal)
            if name is not None:
                picks.append(callee if name == CALLEE else int(name))
        assert len(picks) > 1  # `func.call @`, the callee, ...: itemgetter gives a tuple
        self._pieces = tuple(pieces)
        self._pick = itemgetter(*picks)

    def fields(self, holes: tuple[str, ...], values: ValueNamer, callee: str) -> tuple[str, ...]:
        """The values of a call's fields: its holes, its constants' fresh names and its
        callee (named once every call has been seen); then the pattern's literal pieces,
        which ``text`` joins them with."""
        return (*holes, *values.fresh_from(self._bases), callee, *self._pieces)

    def text(self, fields: tuple[str, ...]) -> str:
        """The replacement of a call with these ``fields``; equal to
        ``pattern.format(*holes, *fresh, callee=callee)``."""
        return "".join(self._pick(fields))


def replacement_form(
    call: model.CustomCall,
    attributes: Sequence[AttributeOperand],
    newline: str = "\n",
    order: Sequence[int] = (),
    fields: CallShape | Literal | None = None,
) -> ReplacementForm:
    """The replacement of a call of this shape: one constant (and a bitcast for f16/bf16)
    per attribute, then the ``func.call`` with the arguments in ``order``. ``fields``
    writes the call's own texts (``call_shapes``: holes of a shape as fields)."""
    fields = fields or LITERAL
    location = f" {fields.text(call.location)}" if call.location else ""
    lines: list[str] = []
    names: list[str] = []
    hints: list[str] = []
    for index, attribute in enumerate(attributes):
        name = f"{{{fields.holes + len(hints)}}}"
        hints.append(attribute.path)
        value = fields.value(index, attribute.value)
        constant_type = escape_format(attribute.constant_type)
        lines.append(arith_constant(name, value, constant_type) + location)
        if attribute.constant_type and attribute.constant_type != attribute.type:
            bits = f"{{{fields.holes + len(hints)}}}"
            hints.append(attribute.path + "_bits")
            cast = arith_bitcast(bits, name, constant_type, escape_format(attribute.type))
            lines.append(cast + location)
            name = bits
        names.append(name)
    operands = [
        fields.text(operand)
        for operand, type_ in zip(call.operands, call.input_types, strict=True)
        if not is_token(type_)
    ]
    arguments = reorder([*operands, *names], order)
    types = [escape_format(t) for t in reorder(operand_types(call, attributes), order)]
    callee_type = function_type(types, escape_format(call_results_text(call)))
    binding = f"{fields.text(call.results)} = " if call.results else ""
    tokens = _token_results(call, fields, hints, location, lines)
    if tokens is not None:  # the results are rebound below, tokens among them
        binding = tokens[0]
    lines.append(binding + func_call(f"{{{CALLEE}}}", arguments, callee_type) + location)
    if tokens is not None:
        lines.append(tokens[1] + location)
    pattern = escape_format(newline + call.indent).join(lines)
    return ReplacementForm(pattern, fields.holes, tuple(hints))


def _token_results(
    call: model.CustomCall,
    fields: CallShape | Literal,
    hints: list[str],
    location: str,
    lines: list[str],
) -> tuple[str, str] | None:
    """For a call with token results that are bound: the binding of the extern's call (a
    fresh name, or none) and the ``stablehlo.optimization_barrier`` that binds the call's
    own results: the extern's results, and for each token result the call's token operand
    (``after_all`` of its token operands when it has several, ``create_token`` when none;
    written into ``lines``). The extern takes and gives no token: the calls stay in
    order as calls of externs, which no pass reorders or drops."""
    if not call.results or not any(is_token(t) for t in call.result_types):
        return None
    kept = [t for t in call.result_types if not is_token(t)]
    extern_binding = ""
    values: list[str] = []
    if kept:
        fresh = f"{{{fields.holes + len(hints)}}}"
        hints.append("ffi_results")
        extern_binding = f"{fresh}:{len(kept)} = " if len(kept) > 1 else f"{fresh} = "
        values = [f"{fresh}#{i}" for i in range(len(kept))] if len(kept) > 1 else [fresh]
    token_operands = [
        fields.text(operand)
        for operand, type_ in zip(call.operands, call.input_types, strict=True)
        if is_token(type_)
    ]
    if len(token_operands) == 1:
        token = token_operands[0]
    else:
        token = f"{{{fields.holes + len(hints)}}}"
        hints.append("token")
        lines.append(after_all(token, token_operands) + location)
    taken = iter(values)
    rebound = [token if is_token(t) else next(taken) for t in call.result_types]
    types = [escape_format(t.text) for t in call.result_types]
    return extern_binding, optimization_barrier(fields.text(call.results), rebound, types)


def call_results_text(call: model.CustomCall) -> str:
    """The result part of the extern's function type: the call's, its tokens left out."""
    if not any(is_token(t) for t in call.result_types):
        return call.results_text
    return results_text([t.text for t in call.result_types if not is_token(t)])


def operand_types(call: model.CustomCall, attributes: Sequence[AttributeOperand]) -> list[str]:
    """The call's operand types but tokens, then its attributes' (contract order)."""
    return [t.text for t in call.input_types if not is_token(t)] + [a.type for a in attributes]


def reorder(items: Sequence[str], order: Sequence[int]) -> list[str]:
    """``items`` (in contract order) in extern parameter order; no ``order``: unchanged."""
    return [items[index] for index in order] if order else list(items)
