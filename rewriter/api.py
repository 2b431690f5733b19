"""The Python API: ``rewrite`` a module's text and get a ``Result`` back."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .collector import collector_paused
from .emit.ffi_adapters import adapters_source, externs_of_rewrite
from .emit.header import Prototype, header_of, prototypes_of
from .inputs import jax_inputs
from .plan.calling_conventions import DEFAULT_IREE_MODULE, Abi
from .plan.edits import Edit, apply_edits
from .plan.kept_arguments import kept_argument_edits
from .plan.planner import CallReport, plan_rewrite, show_call_reports_with
from .plan.platform_choice import check_platforms, choose_platform, normalized, platform_value
from .plan.platforms import chosen_platform_message, platforms_message
from .plan.selection import API_WORDS, OptionWords, exact_pattern, patterns
from .plan.status import Status
from .syntax.diagnostics import Diagnostic, RewriteError, Severity
from .syntax.scan import scan
from .syntax.source import Source

if TYPE_CHECKING:
    from jax.export import Exported

    from .inputs.jax_inputs import ExportedArguments
    from .syntax.rewrite_validation import Validated


@dataclass(init=False, eq=False)
class Result:
    """A rewritten module: its text, what happened to each custom call, and the warnings.

    ``text`` is joined from ``original`` and ``edits`` when it is first read, unless it was
    given (a Result built by hand): ``--list`` and the emitters read the calls alone, and
    the join is a copy of the whole module with its edits (80 MB for a 38 MB export whose
    every call has long attributes). Equality compares ``text`` like the other fields;
    ``repr`` leaves it out.
    """

    original: str
    calls: list[CallReport]
    warnings: list[Diagnostic]
    edits: list[Edit]
    errors: list[Diagnostic]
    # The jax.export.Exported the module came from, when made by ``rewriter.export``.
    exported: Any = field(default=None, repr=False)

    def __init__(
        self,
        text: str | None,
        original: str,
        calls: list[CallReport] | None = None,
        warnings: list[Diagnostic] | None = None,
        edits: list[Edit] | None = None,
        errors: list[Diagnostic] | None = None,
        exported: Any = None,
    ) -> None:
        """``text`` None: the edits applied to ``original``, joined when first read."""
        self._text = text
        self.original = original
        self.calls = [] if calls is None else calls
        self.warnings = [] if warnings is None else warnings
        self.edits = [] if edits is None else edits
        self.errors = [] if errors is None else errors
        self.exported = exported

    @property
    def text(self) -> str:
        """The rewritten module."""
        if self._text is None:
            with collector_paused():  # a key per edit, in its sort (rewriter/collector.py)
                self._text = apply_edits(self.original, self.edits) if self.edits else self.original
        return self._text

    @text.setter
    def text(self, text: str) -> None:
        self._text = text

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Result):
            return NotImplemented
        return _compared(self) == _compared(other)

    @property
    def changed(self) -> bool:
        return self.text != self.original

    def _repr_html_(self) -> str:
        """Jupyter's view: the calls as a table, the diagnostics, the rewrite as a diff."""
        from .emit.notebook import render_result

        return render_result(self)


def _compared(result: Result) -> tuple[object, ...]:
    """What makes two Results equal: all but ``exported``."""
    return (
        result.text,
        result.original,
        result.calls,
        result.warnings,
        result.edits,
        result.errors,
    )


def _call_report_html(report: CallReport) -> str:
    from .emit.notebook import render_call

    return render_call(report)


show_call_reports_with(_call_report_html)


TEXT_NAME = "<mlir text>"
_BINARY_NAMES = {"bytecode": "<mlir bytecode>", "exported": "<serialized jax.export>"}


def decode(data: bytes, filename: str = TEXT_NAME) -> Source:
    """UTF-8 bytes to a Source; invalid bytes give a diagnostic at their line and column."""
    try:
        return Source(data.decode("utf-8"), filename)
    except UnicodeDecodeError as error:
        prefix = Source(data[: error.start].decode("utf-8"), filename)
        line, column = prefix.line_col(len(prefix.text))
        shown = Source(data.decode("utf-8", "replace")).line_text(line)
        message = f"invalid UTF-8 (byte 0x{data[error.start]:02X}): MLIR text must be UTF-8"
        raise RewriteError([Diagnostic(filename, line, column, message, shown)]) from None


def input_name(text: object, filename: str | None = None) -> str:
    """The name that diagnostics and call reports give an input: ``filename`` when given
    (the API's ``filename=``, the command line's path), else one that says what the input
    is: ``<mlir text>`` (a str, or UTF-8 bytes), ``<mlir bytecode>``, ``<serialized
    jax.export>``, and ``<jax.export of F>`` for a ``jax.export.Exported`` of ``F``, the
    name ``rewriter.export`` gives its own."""
    if filename is not None:
        return filename
    if jax_inputs.is_exported(text):
        return f"<jax.export of {getattr(text, 'fun_name', '?')}>"
    if isinstance(text, (bytes, bytearray, memoryview)):
        data = text if isinstance(text, bytes) else bytes(text)
        return _BINARY_NAMES.get(jax_inputs.input_kind(data), TEXT_NAME)
    return TEXT_NAME


def read_source(
    text: str | bytes | bytearray | memoryview | Exported, filename: str | None = None
) -> Source:
    """What ``rewrite`` and ``analyze`` read, as a Source of MLIR text.

    ``text`` is MLIR text (str, or UTF-8 bytes), MLIR bytecode (bytes starting with
    ``ML\\xefR``: plain, or a StableHLO portable artifact), the bytes of
    ``jax.export.Exported.serialize()``, or a ``jax.export.Exported``; only the last three
    import jax (``rewriter.inputs.jax_inputs``). Raises ``RewriteError``: an ``InputError`` when a
    binary input cannot be converted. ``filename`` names the input (``input_name``).
    """
    return _read(text, filename)[0]


def _read(
    text: str | bytes | bytearray | memoryview | Exported, filename: str | None = None
) -> tuple[Source, tuple[str, ...] | None]:
    """``read_source``'s Source, and the platforms the input says it was exported for: an
    ``Exported``'s and a serialized one's (``Exported.platforms``); None for MLIR text and
    bytecode, which do not say (``rewriter/plan/platforms.py``)."""
    source, exported = _read_exported(text, filename)
    return source, None if exported is None else tuple(getattr(exported, "platforms", ()))


def _read_exported(
    text: str | bytes | bytearray | memoryview | Exported, filename: str | None = None
) -> tuple[Source, Any]:
    """``read_source``'s Source, and the ``jax.export.Exported`` the input is (the object,
    or read from its ``serialize()`` bytes); None for MLIR text and bytecode."""
    filename = input_name(text, filename)
    if isinstance(text, str):
        return Source(text, filename), None
    if isinstance(text, (bytes, bytearray, memoryview)):
        data = bytes(text)
        kind = jax_inputs.input_kind(data)
        if kind == "text":
            return decode(data, filename), None
        if kind == "exported":
            exported = jax_inputs.deserialize_exported(data, filename)
            text_of = jax_inputs.exported_text(exported, filename)
            return Source(text_of, filename), exported
        return Source(jax_inputs.binary_text(data, kind, filename), filename), None
    if jax_inputs.is_exported(text):
        return Source(jax_inputs.exported_text(text, filename), filename), text
    raise TypeError(
        "expected MLIR text (str or bytes), MLIR bytecode, Exported.serialize() bytes or a "
        f"jax.export.Exported, not {type(text).__name__}"
    )


def rewrite(
    text: str | bytes | bytearray | memoryview | Exported,
    *,
    targets: Sequence[str] | None = None,
    skip: Sequence[str] | None = None,
    filename: str | None = None,
    abi: str = "c",
    iree_module: str = DEFAULT_IREE_MODULE,
    plain: bool | None = None,
    platform: str | None = None,
    platforms: Sequence[str] | str | None = None,
) -> Result:
    """Rewrite every selected custom call of ``text`` into a ``func.call`` to an extern.

    ``text`` is MLIR text, MLIR bytecode, ``Exported.serialize()`` bytes or a
    ``jax.export.Exported`` (see ``read_source``). ``targets`` and ``skip`` are glob patterns
    on call target names: a string is one pattern, an iterable of strings several.
    ``abi="iree"`` declares the externs as imports of the IREE runtime module
    ``iree_module`` instead of C functions (``rewriter/plan/calling_conventions.py``). Raises
    ``RewriteError`` (with line, column and message) when the input cannot be rewritten,
    ``ValueError`` for an unknown ``abi`` or a module name that is not an identifier.
    ``plain=True`` (or ``REWRITER_PLAIN=1``) runs the reference path (``plain_path``).
    A module exported for several platforms keeps ``platform``'s code alone (default:
    ``"cpu"``), and its ``main`` loses the platform index argument; ``platforms`` is the
    list it was exported for (``Exported.platforms``; an ``Exported`` says it itself),
    which its text does not say (``rewriter/plan/platform_choice.py``).
    """
    result = analyze(
        text,
        targets=targets,
        skip=skip,
        filename=filename,
        abi=abi,
        iree_module=iree_module,
        plain=plain,
        platform=platform,
        platforms=platforms,
    )
    if result.errors:
        raise RewriteError(result.errors + skip_notes(result, lambda glob: f"skip=[{glob!r}]"))
    return result


def skip_notes(result: Result, how: Callable[[str], str]) -> list[Diagnostic]:
    """One note per target that could not be rewritten: how to rewrite the other calls and
    leave that target alone (``how`` spells the option for the API or the command line)."""
    notes: list[Diagnostic] = []
    seen: set[str] = set()
    for report in result.calls:
        if report.status == Status.ERROR and report.target not in seen:
            seen.add(report.target)
            message = (
                f"to rewrite the other calls and leave @{report.target} as it is, "
                f"pass {how(exact_pattern(report.target))}"
            )
            notes.append(
                Diagnostic(
                    report.filename, report.line, report.column, message, severity=Severity.NOTE
                )
            )
    return notes


def analyze(
    text: str | bytes | bytearray | memoryview | Exported,
    *,
    targets: Sequence[str] | None = None,
    skip: Sequence[str] | None = None,
    filename: str | None = None,
    abi: str = "c",
    iree_module: str = DEFAULT_IREE_MODULE,
    validated: Validated | None = None,
    words: OptionWords = API_WORDS,
    plain: bool | None = None,
    platform: str | None = None,
    platforms: Sequence[str] | str | None = None,
    arguments: ExportedArguments | None = None,
) -> Result:
    """The rewrite that reports instead of raising: the same arguments, work and ``Result``
    as ``rewrite``, which is this followed by a raise when ``Result.errors`` is not empty.
    ``validated``, ``validate_input``'s of the same text, makes the rewrite take the call
    shapes that validation found.
    A call that cannot be rewritten is an error in ``Result.errors``, and ``Result.text``
    holds the other calls' rewrites. It is no dry run; the name stays as public API
    (docs/architecture.md, "Where things stay").
    Raises ``RewriteError`` only when the file as a whole is unusable (not text,
    unbalanced, ...), ``ValueError``/``TypeError`` for arguments ``rewrite`` refuses too.
    ``words`` spell ``targets`` and ``skip`` where a call's reason names them
    (``targets=``, ``skip=``; the command line passes ``--target``, ``--skip``).
    ``plain=True`` (or ``REWRITER_PLAIN=1``) runs the reference path (``plain_path``).
    ``platform`` and ``platforms``: as for ``rewrite``; an export whose platforms leave
    out the CPU, with no ``platform`` chosen, raises ``RewriteError``.
    ``arguments``: for the text of an ``Exported``, what it says of ``main``'s arguments
    (``jax_inputs.exported_arguments``), so that ``main`` declares again those jax left out
    (``rewriter/plan/kept_arguments.py``); an ``Exported`` input says it itself.
    """
    plain = plain_path(plain)
    conventions = Abi(abi, iree_module)  # checked before any work is done
    targets, skip = patterns(targets, "targets"), patterns(skip, "skip")
    given = normalized(platforms)
    if platform is not None and not isinstance(platform, str):
        raise TypeError(f"platform: expected a platform name, not {type(platform).__name__}")
    source, exported = _read_exported(text, filename)
    own = None if exported is None else tuple(getattr(exported, "platforms", ()))
    if own is not None and given is not None and normalized(own) != given:
        raise ValueError(
            f"platforms={list(given)!r}: the jax.export.Exported was exported for "
            f"{list(own)!r}; leave platforms out"
        )
    known = normalized(own) if own is not None else given
    chosen = check_platforms(source.filename, known, platform, words)
    # The scan, the plan and the edits make a few objects per call (rewriter/collector.py).
    with collector_paused():
        found = scan(source)
        if found.diagnostics:
            raise RewriteError(_bracket_error_placed(source, found.diagnostics))
        choice = choose_platform(source, known, chosen, words)
        if choice is not None and choice.dropped:  # their calls are gone: not rewritten
            found.calls = [call for call in found.calls if choice.keeps(call.keyword)]
        # the arguments jax left out of main, declared again (before the planner names
        # its constants, apart from these names)
        restored = _left_out_arguments(source, exported, arguments, found.values)
        # the statement shapes a validation of this very text found
        taken = None
        if validated is not None and validated.text == source.text and not plain:
            taken = validated.calls
        plan = plan_rewrite(
            source,
            found,
            targets,
            skip,
            conventions,
            reuse_shapes=not plain,
            found=taken,
            words=words,
        )
        del found  # its call sites freed now: the collector, when it runs again, walks the rest
    warnings = plan.warnings
    if known is not None and chosen is not None:  # the CPU's code, or a warning
        warnings = _platform_warnings(known, chosen, words, source.filename) + warnings
    edits = plan.edits if choice is None else plan.edits + choice.edits
    edits = edits + restored if restored else edits
    # The text is joined when first read (``Result.text``), once what only planning
    # needed is gone: it is as large as the edits and the rest of the original together.
    return Result(None, source.text, plan.reports, warnings, edits, plan.errors)


def _left_out_arguments(
    source: Source,
    exported: Any,
    arguments: ExportedArguments | None,
    names_taken: set[str],
) -> list[Edit]:
    """The edits that declare in ``main`` the arguments ``exported`` (or the export
    ``arguments`` describe) left out (``rewriter/plan/kept_arguments.py``); none for MLIR
    text and bytecode on their own."""
    if exported is not None:
        arguments = jax_inputs.exported_arguments(exported)
    if arguments is None:
        return []
    return kept_argument_edits(source, arguments.types, arguments.kept, names_taken)


def _platform_warnings(
    platforms: Sequence[str], chosen: str, words: OptionWords, filename: str
) -> list[Diagnostic]:
    """A warning when the code kept is not the CPU's: a module exported for platforms that
    leave out the CPU (its platform chosen all the same), or another platform's code
    chosen in a module exported for several."""
    message = platforms_message(platforms)
    if message is None and len(platforms) > 1:
        message = chosen_platform_message(chosen, platform_value(words, chosen))
    return [] if message is None else [Diagnostic(filename, 1, 1, message, None, Severity.WARNING)]


def _bracket_error_placed(source: Source, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """The scan's bracket error, or where the mistake more likely is.

    The scan matches brackets over the whole file, so an extra one (``= {{eps = ...``) is
    reported at the bracket that ends up unmatched: the module's, lines away. MLIR puts one
    op on a line; the grammar, reading line by line, stops at the extra bracket itself.
    When it stops on a line whose brackets do not balance, that error comes first and the
    scan's follows as a note.
    """
    scanned = diagnostics[0]
    if not ("is never closed" in scanned.message or scanned.message.startswith("unbalanced")):
        return diagnostics
    from .syntax.validation import first_error

    parsed = first_error(source)
    if parsed is None or parsed.source_line is None or parsed == scanned:
        return diagnostics
    line = parsed.source_line
    if all(line.count(o) == line.count(c) for o, c in ("{}", "()", "[]")):
        return diagnostics
    note = replace(scanned, severity=Severity.NOTE)
    return [parsed, note, *diagnostics[1:]]


def plain_path(plain: bool | None = None) -> bool:
    """Whether to run the reference path: ``plain`` when given, else whether the
    environment sets ``REWRITER_PLAIN`` (to anything but ``0``).

    The reference path decides every call on its own and validates by lark's parse of the
    whole module: lark parses every custom call statement (no statement shape is reused,
    no part of a judgement remembered) and every op at once (no line shape remembered). It is
    what the default path must equal, byte for byte; CI runs the goldens, FileCheck cases,
    jax's exports and the call-shape properties both ways (``tests/test_plain_path.py``).
    """
    if plain is not None:
        return plain
    return os.environ.get("REWRITER_PLAIN", "") not in ("", "0")


def validate(
    text: str | bytes | bytearray | memoryview | Exported,
    *,
    filename: str | None = None,
    plain: bool | None = None,
) -> None:
    """Parse every line of the module with the grammar; raise RewriteError where it first fails.

    ``text`` is anything ``rewrite`` takes (see ``read_source``). ``plain=True`` (or
    ``REWRITER_PLAIN=1``): lark's parse of the whole module (``plain_path``).
    """
    from .syntax.plain_validation import first_error_plain
    from .syntax.validation import first_error

    source = read_source(text, filename)
    error = first_error_plain(source) if plain_path(plain) else first_error(source)
    if error is not None:
        raise RewriteError([error])


def validate_input(
    text: str, *, filename: str | None = None, plain: bool | None = None
) -> Validated:
    """``validate`` for a text about to be rewritten: what it returns makes the validation
    of the rewrite (``validate_rewrite``) parse only the lines the rewrite changed (on the
    reference path, ``plain``, it remembers nothing and the rewrite is parsed whole)."""
    from .syntax.plain_validation import first_error_plain
    from .syntax.rewrite_validation import Validated, validated

    source = read_source(text, filename)
    if plain_path(plain):
        error = first_error_plain(source)
        if error is not None:
            raise RewriteError([error])
        return Validated(source.text, [], plain=True)
    # An object or more per line; outcomes remembered by parser state may refer to each
    # other in cycles, which the collector's next run frees.
    with collector_paused():
        outcome = validated(source)
    if isinstance(outcome, Diagnostic):
        raise RewriteError([outcome])
    return outcome


def validate_rewrite(result: Result, input_: Validated, *, filename: str | None = None) -> None:
    """``validate(result.text)``, at the cost of the lines the edits touched when ``input_``
    is ``validate_input``'s of ``result.original``."""
    from .syntax.plain_validation import first_error_plain
    from .syntax.rewrite_validation import first_error_of_rewrite
    from .syntax.validation import first_error

    rewritten = Source(result.text, f"{TEXT_NAME} (rewritten)" if filename is None else filename)
    if input_.plain:
        error = first_error_plain(rewritten)
    elif input_.text == result.original:
        with collector_paused():
            error = first_error_of_rewrite(rewritten, input_, result.edits)
    else:
        error = first_error(rewritten)
    if error is not None:
        raise RewriteError([error])


def prototypes(
    text: str | bytes | bytearray | memoryview | Exported,
    *,
    targets: Sequence[str] | None = None,
    skip: Sequence[str] | None = None,
    filename: str | None = None,
    abi: str = "c",
    iree_module: str = DEFAULT_IREE_MODULE,
    platform: str | None = None,
    platforms: Sequence[str] | str | None = None,
) -> list[Prototype]:
    """One C prototype per extern, from a rewrite of ``text`` and from its existing externs
    (``rewriter.emit.header.prototypes_of``)."""
    filename = input_name(text, filename)
    result = analyze(
        text,
        targets=targets,
        skip=skip,
        filename=filename,
        abi=abi,
        iree_module=iree_module,
        platform=platform,
        platforms=platforms,
    )
    return prototypes_of(result, filename=filename, abi=abi, iree_module=iree_module)


def emit_header(
    text: str | bytes | bytearray | memoryview | Exported,
    *,
    targets: Sequence[str] | None = None,
    skip: Sequence[str] | None = None,
    filename: str | None = None,
    abi: str = "c",
    iree_module: str = DEFAULT_IREE_MODULE,
    platform: str | None = None,
    platforms: Sequence[str] | str | None = None,
) -> str:
    """The C header for every extern of the rewrite of ``text`` (original or rewritten)."""
    filename = input_name(text, filename)
    result = analyze(
        text,
        targets=targets,
        skip=skip,
        filename=filename,
        abi=abi,
        iree_module=iree_module,
        platform=platform,
        platforms=platforms,
    )
    return header_of(result, filename=filename, abi=abi, iree_module=iree_module)


def emit_ffi_adapters(
    text: str | bytes | bytearray | memoryview | Exported,
    *,
    targets: Sequence[str] | None = None,
    skip: Sequence[str] | None = None,
    filename: str | None = None,
    platform: str | None = None,
    platforms: Sequence[str] | str | None = None,
) -> str:
    """The C adapters for every extern of the rewrite of ``text`` (original or rewritten):
    each ``_mlir_ciface_S`` calls the XLA FFI handler registered for its target."""
    filename = input_name(text, filename)
    result = rewrite(
        text,
        targets=targets,
        skip=skip,
        filename=filename,
        platform=platform,
        platforms=platforms,
    )
    return adapters_source(externs_of_rewrite(result.calls, result.original, filename), filename)


def export(
    fn: Any,
    *args: Any,
    targets: Sequence[str] | None = None,
    skip: Sequence[str] | None = None,
    platforms: Sequence[str] | None = None,
    platform: str | None = None,
    **jit_kwargs: Any,
) -> Result:
    """Export ``fn`` at ``args`` with ``jax.export`` and rewrite the module in one step.

    ``args`` are arrays or ``jax.ShapeDtypeStruct``s; ``jit_kwargs`` go to ``jax.jit`` (a
    function that is already jitted is used as it is when there are none); ``platforms`` to
    ``jax.export.export`` (None: jax's default backend). The custom call safety check is
    disabled for the FFI targets the export meets. ``targets`` and ``skip`` select calls as
    in ``rewrite``. Exported for several platforms, the module keeps ``platform``'s code
    (default: ``"cpu"``), as ``rewrite`` does. Returns the ``Result`` of ``rewrite``, with
    the ``jax.export.Exported`` as ``result.exported``; raises ``RewriteError`` like
    ``rewrite``.
    """
    exported = jax_inputs.export_exported(fn, *args, platforms=platforms, **jit_kwargs)
    filename = f"<jax.export of {exported.fun_name}>"
    result = rewrite(exported, targets=targets, skip=skip, filename=filename, platform=platform)
    result.exported = exported
    return result
