"""The judgement of one call, in parts that the plain path and statement shapes share.

The plain path (``judge``) runs them on each call's own model. ``call_shapes`` runs the
same parts on the same inputs and remembers each by everything it reads: selection by the
statement shape and the target, the signature by the shape (both are handed
``judged_view``, which holds nothing else that differs between a shape's calls), each
attribute operand by its names and text (``attribute_operands.operand_of``), and the
extern (FFI facts, parameter order) by the attribute operands without their values
(``valueless``), the facts' target written in per target (``of_target``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..syntax import model
from ..syntax.diagnostics import Diagnostic
from ..syntax.source import Source
from ..syntax.terminals import VALUE_NAME
from .attribute_operands import (
    AttributeOperand,
    UnsupportedAttribute,
    attribute_operands,
    is_legacy_call,
)
from .attribute_operands import valueless as valueless_operand
from .calling_conventions import Abi
from .ffi_facts import ExternFacts, FactsError, attribute_facts, signature_facts
from .layouts import LayoutError, Permutation, permutations, physical
from .mlir_text import is_token
from .status import Status


@dataclass(slots=True)
class CallReport:
    """What happened to one custom call: shown by ``--list`` and in notebooks."""

    filename: str
    line: int
    column: int
    target: str
    operand_types: tuple[str, ...]
    result_types: tuple[str, ...]
    attributes: tuple[AttributeOperand, ...]
    symbol: str | None  # the extern's name when rewritten
    reason: str | None  # why it was left alone, or the error that stops it
    status: Status
    # Per operand and result: logical dims from major to minor as the kernel sees them
    # (the identity unless operand_layouts/result_layouts say otherwise).
    operand_perms: tuple[Permutation, ...] = ()
    result_perms: tuple[Permutation, ...] = ()
    extern_operand_types: tuple[str, ...] = ()  # the kernel's view (layouts applied)
    extern_result_types: tuple[str, ...] = ()
    wrapper: str | None = None  # private function applying the layouts, if any
    # What an XLA FFI handler needs (rewriter.xla_ffi on the extern); None for calls that
    # are no FFI calls (a legacy string backend_config) or have types FFI cannot name.
    ffi_facts: ExternFacts | None = None
    # For each extern parameter, its index in contract order (operands, then attributes):
    # the identity, except for IREE imports (rewriter/plan/calling_conventions.py).
    parameter_order: tuple[int, ...] = ()

    def _repr_html_(self) -> str:
        """Jupyter's view of one call, a one-row table. Planning draws nothing: the view
        lives with the other writers of text and ``rewriter.api`` hands it in
        (``show_call_reports_with``), so this module imports no display code."""
        if _call_report_view is None:
            raise RuntimeError("no view of call reports: import rewriter.api first")
        return _call_report_view(self)


_call_report_view: Callable[[CallReport], str] | None = None


def show_call_reports_with(view: Callable[[CallReport], str]) -> None:
    """Set how notebooks draw a CallReport (the caller owns the HTML)."""
    global _call_report_view
    _call_report_view = view


class Problem(Exception):
    """Why a selected call cannot be rewritten, and where in the file (rule 7, layouts,
    attributes the contract cannot pass)."""

    def __init__(self, offset: int, message: str):
        super().__init__(message)
        self.offset = offset
        self.message = message


@dataclass(frozen=True, slots=True)
class Signature:
    """What the judge makes of a call's ``judged_view``: everything of its report but its
    attribute operands, what they decide, and where it is."""

    operand_types: tuple[str, ...]
    result_types: tuple[str, ...]
    operand_perms: tuple[Permutation, ...]
    result_perms: tuple[Permutation, ...]
    extern_operand_types: tuple[str, ...]
    extern_result_types: tuple[str, ...]
    # Its operands', results' and shape operands' FFI facts; None when it is no FFI call
    # (a legacy string backend_config) or FFI cannot name its types.
    tensor_facts: tuple[Any, ...] | None


_FFI_CONFIGS = ("mhlo.backend_config", "backend_config")
_NAME = re.compile(f"%{VALUE_NAME}")  # the grammar's VALUE_ID


def written_view(call: model.CustomCall) -> model.CustomCall:
    """The call as its replacement is written from (``replacement.replacement_form``):
    without the values of its FFI attributes (a dictionary config kept as an empty
    dictionary, a legacy string whole), which reach the replacement as attribute operands
    only."""
    entries = call.attributes.entries
    if not any(name in _FFI_CONFIGS and isinstance(v, model.DictAttr) for name, v in entries):
        return call
    attributes = replace(
        call.attributes,
        text="",
        entries=tuple(
            (name, _EMPTY_CONFIG if name in _FFI_CONFIGS and isinstance(v, model.DictAttr) else v)
            for name, v in entries
        ),
    )
    return replace(call, attributes=attributes)


# The target of a ``judged_view``: selection is told the target apart, and the signature's
# rules name it in their messages with this, which ``judge`` replaces with the call's own.
TARGET = "\0target\0"


def judged_view(
    call: model.CustomCall, written: model.CustomCall | None = None
) -> model.CustomCall:
    """The call as selection and the signature's rules see it: its ``written_view``
    without its target (``TARGET``), value names (each ``%`` and the count of its results
    kept), location, indentation and module. What the rules make of it is the same for
    every call of a statement shape (``call_shapes``), on every path. ``written``: the
    call's ``written_view``, when the caller has made it."""
    return replace(
        written_view(call) if written is None else written,
        target=TARGET,
        indent="",
        results=_NAME.sub("%", call.results),
        operands=tuple("%" for _ in call.operands),
        location="",
        module=-1,
        notes=[],
    )


_EMPTY_CONFIG = model.DictAttr("{}", model.Span(0, 2), ())


def judge_signature(view: model.CustomCall) -> Signature:
    """Rule 7, the layouts and the FFI facts of a selected call's ``judged_view``; raises
    ``Problem``, whose message names the target as ``TARGET``."""
    problem = _arity_error(view) or _unsupported(view)
    if problem is not None:
        raise Problem(*problem)
    try:
        operand_perms, result_perms = permutations(view)
    except LayoutError as error:
        raise Problem(error.attr.span.start, error.message) from None
    tensor_facts = None
    if not is_legacy_call(view):
        try:
            tensor_facts = signature_facts(view, operand_perms, result_perms)
        except (FactsError, ValueError):  # no XLA dtype, or an odd indices_of_shape_operands
            tensor_facts = None
    return Signature(
        tuple(t.text for t in view.input_types),
        tuple(t.text for t in view.result_types),
        tuple(operand_perms),
        tuple(result_perms),
        # A token is no parameter or result of the extern (replacement.py threads it).
        tuple(
            physical(t, p)
            for t, p in zip(view.input_types, operand_perms, strict=True)
            if not is_token(t)
        ),
        tuple(
            physical(t, p)
            for t, p in zip(view.result_types, result_perms, strict=True)
            if not is_token(t)
        ),
        tensor_facts,
    )


def valueless(attributes: Sequence[AttributeOperand]) -> tuple[AttributeOperand, ...]:
    """The attribute operands without their values: all that FFI facts, the parameter
    order and the extern are decided by."""
    return tuple([valueless_operand(attribute) for attribute in attributes])


# What ``decide_extern`` decides: the FFI facts but their target (None: no FFI call, or
# types FFI cannot name), and the parameter order.
Extern = tuple["ExternFacts | None", tuple[int, ...]]


def decide_extern(abi: Abi, signature: Signature, attributes: Sequence[AttributeOperand]) -> Extern:
    """The FFI facts (their target empty) and parameter order of a call with this
    signature and these attribute operands (``valueless``)."""
    parameters = [*signature.extern_operand_types, *(a.type for a in attributes)]
    facts = None
    if signature.tensor_facts is not None:
        try:
            operands, results, shape_operands = signature.tensor_facts
            facts = ExternFacts("", operands, results, attribute_facts(attributes), shape_operands)
        except (FactsError, ValueError):
            facts = None
    return facts, abi.order(parameters)


def of_target(extern: Extern, target: str) -> Extern:
    """``extern`` with ``target`` in its FFI facts."""
    facts, order = extern
    return (None if facts is None else replace(facts, target=target)), order


def left_alone_report(
    filename: str, line: int, column: int, view: model.CustomCall, target: str, reason: str
) -> CallReport:
    return CallReport(
        filename,
        line,
        column,
        target,
        tuple(t.text for t in view.input_types),
        tuple(t.text for t in view.result_types),
        (),
        None,
        reason,
        Status.LEFT_ALONE,
    )


def error_report(
    filename: str, line: int, column: int, view: model.CustomCall, target: str, problem: Problem
) -> CallReport:
    report = left_alone_report(filename, line, column, view, target, problem.message)
    report.status = Status.ERROR
    return report


_REWRITTEN = Status.REWRITTEN  # a member read from its class costs a lookup each time


def rewritten_report(
    filename: str,
    line: int,
    column: int,
    target: str,
    signature: Signature,
    attributes: tuple[AttributeOperand, ...],
    decided: Extern,
) -> CallReport:
    """The report of a rewritten call; ``decided`` is its FFI facts and parameter order
    (``of_target(decide_extern(...), target)``)."""
    ffi_facts, order = decided
    return CallReport(
        filename,
        line,
        column,
        target,
        signature.operand_types,
        signature.result_types,
        attributes,
        None,
        None,
        _REWRITTEN,
        signature.operand_perms,
        signature.result_perms,
        signature.extern_operand_types,
        signature.extern_result_types,
        None,
        ffi_facts,
        order,
    )


def judge(
    source: Source,
    call: model.CustomCall,
    select: Callable[[model.CustomCall, str], str | None],
    abi: Abi,
) -> tuple[CallReport, list[Diagnostic]]:
    """The plain path's judgement of one call: rule 6 (``select``, None: the call is
    rewritten), then the signature, the attribute operands and the extern, each on the
    call's own model. ``call_shapes`` runs the same parts on the same inputs, remembering
    each by what it reads."""
    line, column = source.line_col(call.span.start)
    view = judged_view(call)
    reason = select(view, call.target)
    if reason:
        return left_alone_report(source.filename, line, column, view, call.target, reason), []
    signature = None
    try:
        try:
            signature = judge_signature(view)
            attributes = tuple(attribute_operands(call))
        except UnsupportedAttribute as error:
            raise Problem(error.offset, error.message) from None
        except RecursionError:
            message = f"custom call @{call.target} nests too deeply to rewrite"
            raise Problem(call.span.start, message) from None
    except Problem as problem:
        problem.message = problem.message.replace(TARGET, call.target)
        report = error_report(source.filename, line, column, view, call.target, problem)
        if signature is not None:  # the attributes are in error
            report.operand_perms = signature.operand_perms
            report.result_perms = signature.result_perms
        return report, [Diagnostic.at(source, problem.offset, problem.message)]
    decided = of_target(decide_extern(abi, signature, valueless(attributes)), call.target)
    report = rewritten_report(
        source.filename, line, column, call.target, signature, attributes, decided
    )
    return report, []


def _arity_error(call: model.CustomCall) -> tuple[int, str] | None:
    """Operands or results that the call's function type does not list. MLIR rejects such
    an op; its rewrite would be a ``func.call`` whose arguments and types disagree."""
    operands, types = len(call.operands), len(call.input_types)
    if operands != types:
        return call.span.start, (
            f"custom call @{call.target} has {_count(operands, 'operand')} but its type lists "
            f"{_count(types, 'operand type')}"
        )
    results, types = _bound_results(call.results), len(call.result_types)
    if call.results and results != types:  # an op may leave its results unbound
        return call.span.start, (
            f"custom call @{call.target} binds {_count(results, 'result')} but its type lists "
            f"{_count(types, 'result type')}"
        )
    return None


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _bound_results(binding: str) -> int:
    """How many values a result binding names: ``%0`` one, ``%0:2`` two, ``%a, %b`` two."""
    groups = [group.strip() for group in binding.split(",")]
    return sum(int(group.partition(":")[2] or 1) for group in groups)


def _unsupported(call: model.CustomCall) -> tuple[int, str] | None:
    """Rule 7: constructs a selected call may have that the contract cannot express yet.
    Tokens can be expressed: the extern leaves them out, and the call's token results are
    its token operands (``replacement.replacement_form``)."""
    for type_ in (*call.input_types, *call.result_types):
        if type_.kind == model.TypeKind.TOKEN:
            continue
        if type_.kind == model.TypeKind.TUPLE:
            what = str(type_.kind)
            return call.span.start, (
                f"custom call @{call.target} has a {what} type ({type_.text}); "
                f"{what} operands and results are not supported yet"
            )
        if type_.kind != model.TypeKind.TENSOR:
            return call.span.start, (
                f"custom call @{call.target} has an operand or result of type {type_.text}; "
                "only tensors are supported"
            )
    return None
