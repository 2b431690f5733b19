"""The rewrite itself: decide about every custom call and turn the decisions into edits.

Nothing here touches the text; the edits are applied by ``edits.apply_edits``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..syntax import model
from ..syntax.diagnostics import Diagnostic, Severity
from ..syntax.holes import FoundShapes
from ..syntax.scan import Scan
from ..syntax.source import Source
from ..syntax.written_shapes import Written
from .attribute_operands import (
    AttributeOperand,
    UnsupportedAttribute,
    attribute_operands,
    is_legacy_call,
)
from .call_shapes import (
    LITERAL,
    CallShape,
    CallShapes,
    CallSyntaxError,
    Literal,
    PlacedCall,
)
from .calling_conventions import C_ABI, Abi
from .edits import Edit
from .ffi_facts import ExternFacts, FactsError, facts_of_call
from .layouts import (
    LayoutError,
    Permutation,
    Wrapper,
    is_identity,
    permutations,
    physical,
)
from .mlir_text import (
    dictionary,
    function_type,
    private_function,
    string_literal,
)
from .naming import SymbolNamer, ValueNamer
from .platforms import gpu_platform, gpu_target_message
from .replacement import ReplacementForm, operand_types, reorder, replacement_form
from .selection import API_WORDS, OptionWords, skip_reason
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


@dataclass
class Plan:
    edits: list[Edit] = field(default_factory=list)
    reports: list[CallReport] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)
    errors: list[Diagnostic] = field(default_factory=list)
    # With ``keep_written``: each call's replacement as written (``Written``), by where its
    # edit starts: a validation of the rewrite shapes the lines of one form once.
    written: dict[int, Written] | None = None


# Each selected call, None once its edit is made.
_Selected = list[PlacedCall | None]


def plan_rewrite(
    source: Source,
    scan: Scan,
    targets: Sequence[str] | None = None,
    skip: Sequence[str] | None = None,
    abi: Abi = C_ABI,
    *,
    reuse_shapes: bool = True,
    keep_written: bool = False,
    found: FoundShapes | None = None,
    words: OptionWords = API_WORDS,
) -> Plan:
    """Decide about every custom call the scan found and collect the edits.

    Two passes, so that naming (rule 5) knows all targets before it hands out names:
    ``_place_calls`` parses, judges and writes every call but its callee, then
    ``_name_callees`` names the callees and makes the edits in file order. ``abi`` says
    how externs are named, ordered and declared. Statements of one shape are parsed and
    judged once (``call_shapes``); ``reuse_shapes=False`` parses every one.
    ``keep_written`` keeps what each call's replacement was written from (``Plan.written``);
    ``found`` holds the statements' shapes a validation of the same text found; ``words``
    spell ``targets`` and ``skip`` in the reasons of the calls they leave alone.
    """
    plan = Plan(written={} if keep_written else None)
    shapes = _call_shapes(source, scan, targets, skip, abi, reuse_shapes, found, words)
    newline = _newline_of(source.text)
    selected = _place_calls(plan, shapes, scan)
    targets_called = [placed.target for placed in selected if placed is not None]
    externs = _Externs(SymbolNamer(scan.symbols, targets_called, abi.prefix), abi)
    _name_callees(plan, source, selected, externs, ValueNamer(scan.values), newline)
    for module_index, decls in externs.declarations.items():
        plan.edits.append(_declaration_edit(scan, module_index, list(decls.values()), newline))
    return plan


def _call_shapes(
    source: Source,
    scan: Scan,
    targets: Sequence[str] | None,
    skip: Sequence[str] | None,
    abi: Abi,
    reuse: bool,
    found: FoundShapes | None = None,
    words: OptionWords = API_WORDS,
) -> CallShapes:
    """The calls' statement shapes, with what decides about a call: rule 6 (``selection``)
    and the judgement of a selected call, its parameters in ``abi``'s order."""

    def judge(
        text: Source, call: model.CustomCall, reason: str | None
    ) -> tuple[CallReport, list[Diagnostic]]:
        errors: list[Diagnostic] = []
        report = _judge(text, call, reason, errors)
        if report.status == Status.REWRITTEN:
            report.parameter_order = abi.order(_contract_parameters(report))
        return report, errors

    def select(call: model.CustomCall, target: str) -> str | None:
        return skip_reason(call, targets, skip, target, words)

    return CallShapes(source, scan, judge, select, reuse=reuse, found=found)


def _newline_of(text: str) -> str:
    """The line ending of the file's first line: new lines end like it."""
    first_break = text.find("\n")
    return "\r\n" if first_break > 0 and text[first_break - 1] == "\r" else "\n"


def _place_calls(plan: Plan, shapes: CallShapes, scan: Scan) -> _Selected:
    """The first pass: every call parsed and judged (its report and errors go to ``plan``);
    the selected ones are kept for the second, which writes them once every target is
    known. A call keeps only its hole texts, no text of its replacement: 70k calls of
    those would not fit."""
    selected: _Selected = []
    for site in scan.calls:
        try:
            placed, errors = shapes.place(site)
        except CallSyntaxError as error:
            plan.errors.append(error.diagnostic)
            continue
        if errors:
            plan.errors.extend(errors)
        plan.reports.append(placed.report)
        if placed.report.status == Status.REWRITTEN:
            selected.append(placed)
    return selected


def _name_callees(
    plan: Plan,
    source: Source,
    selected: _Selected,
    externs: _Externs,
    values: ValueNamer,
    newline: str,
) -> None:
    """The second pass, in file order: each selected call's extern (and layout wrapper) is
    named, its constants too, and its edit made; renames and externs shared by calls that
    differ are warnings. Each call is freed once its edit is made."""
    on_gpu: set[str] = set()  # GPU targets warned about (platforms.py), once each
    for index, placed in enumerate(selected):
        assert placed is not None
        selected[index] = None
        renamed, differs = externs.decide(placed)
        report = placed.report
        if renamed:
            plan.warnings.append(_renamed_warning(source, placed, externs.abi, renamed))
        if differs:
            plan.warnings.append(_shared_extern_warning(source, placed))
        platform = gpu_platform(placed.target)
        if platform and placed.target not in on_gpu:
            on_gpu.add(placed.target)
            message = gpu_target_message(placed.target, platform, report.symbol or "")
            plan.warnings.append(warning_at(source, placed, placed.target_start, message))
        replacement = _replacement_of(placed, newline)
        fields = replacement.fields(placed.holes, values, report.wrapper or report.symbol)
        text = replacement.text(fields)
        plan.edits.append(Edit(placed.start, placed.end, text))
        if plan.written is not None and placed.shape is not None:  # a form calls share
            plan.written[placed.start] = Written(replacement.positional, fields, text)


def _renamed_warning(source: Source, placed: PlacedCall, abi: Abi, why: str) -> Diagnostic:
    """Rule 5: the extern is not named after the call's target."""
    symbol = placed.report.symbol
    message = (
        f"custom call target '{placed.target}' becomes extern @{symbol} "
        f"({abi.describe(symbol)}): {why}"
    )
    return warning_at(source, placed, placed.target_start, message)


def _shared_extern_warning(source: Source, placed: PlacedCall) -> Diagnostic:
    """The call goes to the extern of an earlier call that an FFI handler sees differently."""
    message = (
        f"this call of @{placed.target} shares extern @{placed.report.symbol} with an earlier "
        "call but differs from it in what an XLA FFI handler sees (attribute names, "
        "signedness, layouts or shapes); FFI adapters follow the first call"
    )
    return warning_at(source, placed, placed.target_start, message)


def warning_at(source: Source, placed: PlacedCall, offset: int, message: str) -> Diagnostic:
    """``Diagnostic.at(source, offset, message, Severity.WARNING)``, told from the call's
    report when ``offset`` lies on the line where the call starts: the report has that
    line's number and the call's column, so the line's start is the call's start less the
    column, and the line ends at the next line break, as ``Source.line_text`` cuts it.
    ``Diagnostic.at`` would make the table of every line start of the file (about 3M
    instructions for a 260 KB export) for the warnings of a target called with several
    signatures, one per signature."""
    report, text = placed.report, source.text
    line_start = placed.start - (report.column - 1)
    line_end = text.find("\n", line_start)
    line_end = len(text) if line_end == -1 else line_end
    if not line_start <= offset <= line_end:
        return Diagnostic.at(source, offset, message, Severity.WARNING)
    line = text[line_start:line_end].rstrip("\r")
    column = offset - line_start + 1
    return Diagnostic(
        source.filename, report.line, column, message, line, severity=Severity.WARNING
    )


def _replacement_of(placed: PlacedCall, newline: str) -> ReplacementForm:
    """The replacement pattern of a selected call, made once per shape (a shape's calls
    share their judgement, so their parameter order and layouts)."""
    shape = placed.shape
    if shape is None:
        return _new_replacement(placed.call, placed.report, LITERAL, {}, newline)
    memo = shape.memo
    form = memo.get("replacement")
    if form is None:
        if shape.apart is not None:
            form = memo["replacement"] = _sized_replacement(shape, newline)
        else:
            form = memo["replacement"] = _new_replacement(
                shape.call, placed.report, shape, memo, newline
            )
    return form


def _sized_replacement(shape: CallShape, newline: str) -> ReplacementForm:
    """The replacement pattern of a shape judged apart from its sizes: its sentinel parse's,
    made once for all the shapes that share it, with the shape's sizes written in. The
    pattern writes the call's texts (operands, types, results, location) and its attribute
    operands as they are, in an order the parameters' types decide by their kind only
    (``calling_conventions``), and whether a wrapper is called is decided by layouts:
    each size is copied, so the shape's pattern is its sentinel parse's with each sentinel
    its size (``call_shapes._SizedOutcome``)."""
    assert shape.apart is not None
    base = shape.apart[0]
    memo = base.memo
    form = memo.get(("replacement", newline))
    if form is None:
        form = memo["replacement", newline] = _new_replacement(
            base.call, base.report, base, memo, newline
        )
    return ReplacementForm(shape.sized_text(form.pattern), shape.holes, form.hints)


def _new_replacement(
    call: model.CustomCall,
    report: CallReport,
    fields: CallShape | Literal,
    memo: dict[object, Any],
    newline: str,
) -> ReplacementForm:
    """A call whose operands or results need a layout wrapper calls it with the arguments
    in contract order; the wrapper reorders for the extern itself."""
    wrapped = not _once(memo, "identity", _keeps_layouts, report)
    order = () if wrapped else report.parameter_order
    return replacement_form(call, report.attributes, newline, order, fields)


class _Externs:
    """The externs and layout wrappers of one file, and which one each call goes to.

    A shape's calls of one target in one module go to the same extern and wrapper: decided
    for the first, remembered for the others."""

    def __init__(self, symbols: SymbolNamer, abi: Abi):
        self.symbols = symbols
        self.abi = abi
        # module -> {symbol: declaration line or layout wrapper}
        self.declarations: dict[int, dict[str, str | Wrapper]] = {}
        self.wrappers: dict[tuple[object, ...], str] = {}
        self.first_facts: dict[tuple[int, str], ExternFacts | None] = {}
        self.decided: dict[tuple[int, str, int], tuple[str, str | None, bool]] = {}

    def decide(self, placed: PlacedCall) -> tuple[str | None, bool]:
        """Set the call's ``symbol`` and ``wrapper``; say why its extern is not named after
        its target (the first time only), and whether it differs from the first call of
        its extern in what an FFI handler sees."""
        report = placed.report
        key = (id(placed.shape), placed.target, placed.module)
        decided = self.decided.get(key) if placed.shape is not None else None
        if decided is not None:
            report.symbol, report.wrapper, differs = decided
            return None, differs
        renamed, differs = self._first(placed)
        if placed.shape is not None:
            self.decided[key] = (report.symbol, report.wrapper, differs)
        return renamed, differs

    def _first(self, placed: PlacedCall) -> tuple[str | None, bool]:
        report, abi = placed.report, self.abi
        # What the shape alone decides is worked out once per shape.
        memo: dict[object, Any] = placed.shape.memo if placed.shape is not None else {}
        extern_type = _once(memo, "extern_type", _extern_type, report)
        symbol, renamed = self.symbols.name(placed.target, extern_type)
        report.symbol = symbol
        module_declarations = self.declarations.setdefault(placed.module, {})
        if symbol not in module_declarations:
            module_declarations[symbol] = _declaration(report, symbol, abi)
        first = self.first_facts.setdefault((placed.module, symbol), report.ffi_facts)
        differs = first is not report.ffi_facts and first != report.ffi_facts
        if not _once(memo, "identity", _keeps_layouts, report):
            call = placed.call
            key = (
                placed.module,
                symbol,
                extern_type,
                _once(memo, "logical_type", _logical_type, call, report),
                report.operand_perms,
                report.result_perms,
            )
            if key not in self.wrappers:
                wrapper = self.wrappers[key] = self.symbols.fresh(
                    f"{symbol[len(abi.prefix) :]}_layout"
                )
                module_declarations[wrapper] = Wrapper(
                    wrapper,
                    symbol,
                    call.input_types,
                    report.operand_perms,
                    tuple(a.type for a in report.attributes),
                    call.result_types,
                    report.result_perms,
                    report.parameter_order,
                )
            report.wrapper = self.wrappers[key]
        return renamed, differs


def _once(memo: dict[object, Any], key: object, compute: Callable[..., Any], *args: Any) -> Any:
    """``memo[key]``, computed as ``compute(*args)`` the first time it is asked for."""
    if key not in memo:
        memo[key] = compute(*args)
    return memo[key]


def _keeps_layouts(report: CallReport) -> bool:
    """Whether every operand and result is in the kernel's layout (no wrapper needed)."""
    return all(map(is_identity, (*report.operand_perms, *report.result_perms)))


def _judge(
    source: Source,
    call: model.CustomCall,
    reason: str | None,
    errors: list[Diagnostic],
) -> CallReport:
    """Rule 7 and the attribute conversion for one call that rule 6 selected (``reason``
    None), or the report of one it leaves alone; errors go to ``errors``."""
    line, column = source.line_col(call.span.start)
    report = CallReport(
        source.filename,
        line,
        column,
        call.target,
        tuple(t.text for t in call.input_types),
        tuple(t.text for t in call.result_types),
        (),
        None,
        reason,
        Status.LEFT_ALONE,
    )
    if report.reason:
        return report
    problem = _arity_error(call) or _unsupported(call)
    if problem is None:
        try:
            operand_perms, result_perms = permutations(call)
            report.operand_perms, report.result_perms = tuple(operand_perms), tuple(result_perms)
            report.attributes = tuple(attribute_operands(call))
        except (UnsupportedAttribute, LayoutError) as error:
            problem = (error.attr.span.start, error.message)
        except RecursionError:
            problem = (call.span.start, f"custom call @{call.target} nests too deeply to rewrite")
    if problem is not None:
        offset, message = problem
        report.status, report.reason = Status.ERROR, message
        errors.append(Diagnostic.at(source, offset, message))
    else:
        report.status = Status.REWRITTEN
        report.extern_operand_types = tuple(
            physical(t, p) for t, p in zip(call.input_types, report.operand_perms, strict=True)
        )
        report.extern_result_types = tuple(
            physical(t, p) for t, p in zip(call.result_types, report.result_perms, strict=True)
        )
        report.ffi_facts = _ffi_facts(call, report)
    return report


def _ffi_facts(call: model.CustomCall, report: CallReport) -> ExternFacts | None:
    if is_legacy_call(call):
        return None
    try:
        return facts_of_call(call, report.attributes, report.operand_perms, report.result_perms)
    except (FactsError, ValueError):  # no XLA dtype, or an odd indices_of_shape_operands
        return None


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
    """Rule 7: constructs a selected call may have that the contract cannot express yet."""
    for type_ in (*call.input_types, *call.result_types):
        if type_.kind in (model.TypeKind.TUPLE, model.TypeKind.TOKEN):
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


def _contract_parameters(report: CallReport) -> list[str]:
    """The extern's parameter types in contract order: operands (as the kernel sees them),
    then attributes."""
    return [*report.extern_operand_types, *(a.type for a in report.attributes)]


def _extern_parameters(report: CallReport) -> list[str]:
    return reorder(_contract_parameters(report), report.parameter_order)


def _extern_type(report: CallReport) -> str:
    """The extern's function type: the kernel's view of the operands, then attributes."""
    return function_type(_extern_parameters(report), report.extern_result_types)


def _logical_type(call: model.CustomCall, report: CallReport) -> str:
    return function_type(operand_types(call, report.attributes), call.results_text)


# Input descriptors are the caller's own buffers, read only (abi/README.md).
_READ_ONLY = dictionary([("bufferization.access", string_literal("read"))])


def _declaration(report: CallReport, symbol: str, abi: Abi) -> str:
    parameters = [
        f"{text} {_READ_ONLY}" if text.startswith("tensor<") else text
        for text in _extern_parameters(report)
    ]
    facts = report.ffi_facts.attribute_value() if report.ffi_facts else None
    attributes = abi.declaration_attributes(
        report.parameter_order, [a.source_type for a in report.attributes], facts
    )
    return private_function(symbol, parameters, report.extern_result_types, attributes)


def _declaration_edit(
    scan: Scan, module_index: int, declarations: list[str | Wrapper], newline: str = "\n"
) -> Edit:
    if module_index >= 0:
        body = scan.modules[module_index]
        offset, indent, opens_line = body.insert_at, body.indent, body.needs_newline
    else:
        offset, indent, opens_line = scan.top_level_insert, scan.top_level_indent, False
    lines = "".join(
        (item.text(indent, newline) if isinstance(item, Wrapper) else f"{indent}{item}") + newline
        for item in declarations
    )
    if opens_line:
        closing_indent = indent[:-2]
        return Edit.insert(offset, newline + lines + closing_indent)
    return Edit.insert(offset, lines)
