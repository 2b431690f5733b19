"""The rewrite itself: decide about every custom call and turn the decisions into edits.

Nothing here touches the text; the edits are applied by ``edits.apply_edits``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..syntax import model
from ..syntax.diagnostics import Diagnostic, Severity
from ..syntax.holes import FoundShapes
from ..syntax.scan import Scan
from ..syntax.source import Source
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
from .ffi_facts import ExternFacts
from .judging import CallReport, written_view
from .judging import show_call_reports_with as show_call_reports_with
from .layouts import Wrapper, is_identity
from .mlir_text import (
    dictionary,
    function_type,
    is_token,
    private_function,
    string_literal,
)
from .naming import SymbolNamer, ValueNamer
from .platforms import gpu_platform, gpu_target_message
from .replacement import (
    ReplacementForm,
    call_results_text,
    operand_types,
    reorder,
    replacement_form,
)
from .selection import API_WORDS, OptionWords, skip_reason
from .status import Status


@dataclass
class Plan:
    edits: list[Edit] = field(default_factory=list)
    reports: list[CallReport] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)
    errors: list[Diagnostic] = field(default_factory=list)


# ``Edit(start, end, text)`` without the named tuple's ``__new__`` in Python (an edit a call).
_new_edit = tuple.__new__

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
    found: FoundShapes | None = None,
    words: OptionWords = API_WORDS,
) -> Plan:
    """Decide about every custom call the scan found and collect the edits.

    Two passes, so that naming (rule 5) knows all targets before it hands out names:
    ``_place_calls`` parses, judges and writes every call but its callee, then
    ``_name_callees`` names the callees and makes the edits in file order. ``abi`` says
    how externs are named, ordered and declared. Statements of one shape are parsed once,
    and what each part of a judgement reads is remembered by all it reads (``call_shapes``);
    ``reuse_shapes=False`` parses and judges every statement on its own.
    ``found`` holds the statements' shapes a validation of the same text found; ``words``
    spell ``targets`` and ``skip`` in the reasons of the calls they leave alone.
    """
    plan = Plan()
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
    and ``abi``, the order of an extern's parameters."""

    def select(view: model.CustomCall, target: str) -> str | None:
        return skip_reason(view, targets, skip, target, words)

    return CallShapes(source, scan, select, abi, reuse=reuse, found=found)


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
    rewritten = Status.REWRITTEN  # read once: a member read from its class is a lookup
    place, report, select = shapes.place, plan.reports.append, selected.append
    for site in scan.calls:
        try:
            placed, errors = place(site)
        except CallSyntaxError as error:
            plan.errors.append(error.diagnostic)
            continue
        if errors:
            plan.errors.extend(errors)
        report(placed.report)
        if placed.report.status == rewritten:
            select(placed)
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
    differ are warnings. Each call is freed once its edit is made.

    A shape's calls of one target and valueless attribute operands (``PlacedCall.key``) in
    one module go to the same extern and wrapper, and are written from the same pattern
    (``_replacement_of``: by the shape and the key): decided for the first, remembered
    under all of that for the others (``PlacedCall.named``, by the module)."""
    # Targets asked of ``gpu_platform`` (a function of the target alone), once each: a GPU
    # target is warned about once (platforms.py). A call whose key is decided has its
    # target asked already (the key holds it).
    asked: set[str] = set()
    edits = plan.edits.append
    for index, placed in enumerate(selected):
        assert placed is not None
        selected[index] = None
        report = placed.report
        named = placed.named  # None: a call parsed on its own
        known = named.get(placed.module) if named is not None else None
        if known is not None:
            report.symbol, report.wrapper, differs, replacement = known
            if differs:
                plan.warnings.append(_shared_extern_warning(source, placed))
        else:
            renamed, differs = externs.decide(placed)
            if renamed:
                plan.warnings.append(_renamed_warning(source, placed, externs.abi, renamed))
            if differs:
                plan.warnings.append(_shared_extern_warning(source, placed))
            replacement = _replacement_of(placed, newline)
            if named is not None:
                named[placed.module] = (report.symbol, report.wrapper, differs, replacement)
            if placed.target not in asked:
                asked.add(placed.target)
                platform = gpu_platform(placed.target)
                if platform:
                    message = gpu_target_message(placed.target, platform, report.symbol or "")
                    plan.warnings.append(warning_at(source, placed, placed.target_start, message))
        callee = report.wrapper or report.symbol
        assert callee is not None  # named by ``externs.decide``
        fields = replacement.fields(placed.holes, values, callee)
        edits(_new_edit(Edit, (placed.start, placed.end, replacement.text(fields))))


def _renamed_warning(source: Source, placed: PlacedCall, abi: Abi, why: str) -> Diagnostic:
    """Rule 5: the extern is not named after the call's target."""
    symbol = placed.report.symbol
    assert symbol is not None
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
    """The replacement pattern of a selected call, made once per shape and valueless
    attribute operands (``call_shapes``: what the pattern is written from)."""
    shape = placed.shape
    if shape is None:
        return _new_replacement(written_view(placed.call), placed.report, LITERAL, newline)
    key = ("replacement", placed.key, newline)
    form = shape.memo.get(key)
    if form is None:
        form = shape.memo[key] = _new_replacement(shape.written, placed.report, shape, newline)
    return form


def _new_replacement(
    call: model.CustomCall,
    report: CallReport,
    fields: CallShape | Literal,
    newline: str,
) -> ReplacementForm:
    """A call whose operands or results need a layout wrapper calls it with the arguments
    in contract order; the wrapper reorders for the extern itself."""
    order = report.parameter_order if _keeps_layouts(report) else ()
    return replacement_form(call, report.attributes, newline, order, fields)


class _Externs:
    """The externs and layout wrappers of one file, and which one each call goes to."""

    def __init__(self, symbols: SymbolNamer, abi: Abi):
        self.symbols = symbols
        self.abi = abi
        # module -> {symbol: declaration line or layout wrapper}
        self.declarations: dict[int, dict[str, str | Wrapper]] = {}
        self.wrappers: dict[tuple[object, ...], str] = {}
        self.first_facts: dict[tuple[int, str], ExternFacts | None] = {}
        # The first call of each extern, which its declaration is made from.
        self.first_reports: dict[tuple[int, str], CallReport] = {}

    def decide(self, placed: PlacedCall) -> tuple[str | None, bool]:
        """Set the call's ``symbol`` and ``wrapper``; say why its extern is not named after
        its target (the first time only), and whether it differs from the first call of
        its extern in what an FFI handler sees."""
        report, abi = placed.report, self.abi
        extern_type = _extern_type(report)
        symbol, renamed = self.symbols.name(placed.target, extern_type)
        report.symbol = symbol
        module_declarations = self.declarations.setdefault(placed.module, {})
        first_report = self.first_reports.setdefault((placed.module, symbol), report)
        if symbol not in module_declarations:
            module_declarations[symbol] = _declaration(report, symbol, abi)
        if _kept_for_its_effect(placed.call):
            # Any call of the extern with the effect makes the import one with the effect.
            module_declarations[symbol] = _declaration(first_report, symbol, abi, True)
        first = self.first_facts.setdefault((placed.module, symbol), report.ffi_facts)
        differs = first is not report.ffi_facts and first != report.ffi_facts
        if not _keeps_layouts(report):
            call = placed.call
            key = (
                placed.module,
                symbol,
                extern_type,
                _logical_type(call, report),
                report.operand_perms,
                report.result_perms,
            )
            if key not in self.wrappers:
                wrapper = self.wrappers[key] = self.symbols.fresh(
                    f"{symbol[len(abi.prefix) :]}_layout"
                )
                inputs = _without_tokens(call.input_types, report.operand_perms)
                results = _without_tokens(call.result_types, report.result_perms)
                module_declarations[wrapper] = Wrapper(
                    wrapper,
                    symbol,
                    inputs[0],
                    inputs[1],
                    tuple(a.type for a in report.attributes),
                    results[0],
                    results[1],
                    report.parameter_order,
                )
            report.wrapper = self.wrappers[key]
        return renamed, differs


def _without_tokens(
    types: Sequence[model.Type], perms: Sequence[tuple[int, ...]]
) -> tuple[tuple[model.Type, ...], tuple[tuple[int, ...], ...]]:
    """The types and their permutations, tokens left out (the extern takes none)."""
    kept = [(t, p) for t, p in zip(types, perms, strict=True) if not is_token(t)]
    return tuple(t for t, _ in kept), tuple(p for _, p in kept)


def _keeps_layouts(report: CallReport) -> bool:
    """Whether every operand and result is in the kernel's layout (no wrapper needed)."""
    return all(map(is_identity, (*report.operand_perms, *report.result_perms)))


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
    return function_type(operand_types(call, report.attributes), call_results_text(call))


# Input descriptors are the caller's own buffers, read only (abi/README.md).
_READ_ONLY = dictionary([("bufferization.access", string_literal("read"))])


def _kept_for_its_effect(call: model.CustomCall) -> bool:
    """A call with results that XLA keeps even when nobody reads them
    (``has_side_effect = true``); a call without results is kept by every path anyway."""
    effect = call.attributes.get("has_side_effect")
    results = [t for t in call.result_types if not is_token(t)]
    return isinstance(effect, model.BoolAttr) and effect.value and bool(results)


def _declaration(report: CallReport, symbol: str, abi: Abi, side_effect: bool = False) -> str:
    parameters = [
        f"{text} {_READ_ONLY}" if text.startswith("tensor<") else text
        for text in _extern_parameters(report)
    ]
    facts = report.ffi_facts.attribute_value() if report.ffi_facts else None
    attributes = abi.declaration_attributes(
        report.parameter_order, [a.source_type for a in report.attributes], facts, side_effect
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
