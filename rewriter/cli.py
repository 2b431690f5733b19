"""Command line: argument handling and output only; the work is done by ``rewriter.api``."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING

from .collector import collector_paused
from .emit import json_text
from .inputs.streams import run_command
from .plan.calling_conventions import DEFAULT_IREE_MODULE, Abi
from .plan.status import Status
from .syntax.printable import printable

if TYPE_CHECKING:
    from .api import Result
    from .inputs.jax_inputs import ExportedArguments
    from .syntax.diagnostics import Diagnostic

EXAMPLES = """\
examples:
  {prog} model.mlir > model.rewritten.mlir
  {prog} model.mlir -o out.mlir --target 'rms_*'
  {prog} --in-place exports/*.mlir
  {prog} --check exports/*.mlir     # exit 1 if a file would change
  {prog} --list model.mlir           # what would happen to each custom call
  {prog} --emit-header kernels.h model.mlir   # the C prototypes to implement
  {prog} --emit-ffi-adapters adapters.c model.mlir  # call FFI handlers instead
  {prog} --abi iree model.mlir -o model.iree.mlir  # imports of IREE module ffi
  {prog} --platforms cpu,cuda model.mlir  # exported for two platforms: keep cpu's code

exit status: 0 ok, 1 error in the input or (with --check) a file would change, 2 usage error
"""


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Rewrite XLA FFI custom calls (stablehlo.custom_call) in exported StableHLO "
        "into func.call to extern functions with the C interface.",
        epilog=EXAMPLES.format(prog=prog),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "files", nargs="*", metavar="FILE", help="input .mlir files; - or none: stdin"
    )
    parser.add_argument(
        "-o", "--output", metavar="OUT", help="write the result to OUT (atomically)"
    )
    parser.add_argument("--in-place", action="store_true", help="rewrite each FILE in place")
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 when a file would change"
    )
    parser.add_argument(
        "--list",
        action="store_true",
        help="print one line per custom call: where, target, types, decision",
    )
    parser.add_argument(
        "--target",
        action="append",
        metavar="GLOB",
        help="rewrite only targets matching GLOB (repeatable)",
    )
    parser.add_argument(
        "--skip",
        action="append",
        metavar="GLOB",
        help="leave targets matching GLOB alone (repeatable)",
    )
    parser.add_argument(
        "--validate", action="store_true", help="also parse every op with the full grammar"
    )
    parser.add_argument(
        "--emit-header",
        metavar="OUT.h",
        help="write the C prototypes of every extern to OUT.h (the module itself is then "
        "written only with -o)",
    )
    parser.add_argument(
        "--emit-ffi-adapters",
        metavar="OUT.c",
        help="write C adapters to OUT.c that serve every extern by its XLA FFI handler "
        "through abi/xla_ffi_bridge.c (the module itself is then written only with -o)",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="with --list: one line per call (text) or one JSON document (json, schema in README)",
    )
    parser.add_argument(
        "--abi",
        choices=("c", "iree"),
        default="c",
        help="c: externs with MLIR's C interface (default); iree: imports of an IREE runtime "
        "module, @NAME.S (see README)",
    )
    parser.add_argument(
        "--iree-module",
        metavar="NAME",
        help="with --abi iree: the runtime module that provides the imports (default: ffi)",
    )
    parser.add_argument(
        "--platform",
        metavar="NAME",
        help="for a module exported for several platforms: keep NAME's code and drop the "
        "others' (default: cpu when the export has it)",
    )
    parser.add_argument(
        "--platforms",
        metavar="LIST",
        help="the platforms the module was exported for, in order, as Exported.platforms "
        "lists them (cpu,cuda): MLIR text does not say them; a serialized Exported does",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    return parser


def _version() -> str:
    from . import __version__

    return __version__


def _use_color(stream) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """The command line; ``prog`` is how the user invoked it (``python -m rewriter`` passes
    that), by default the name of the running script (``stablehlo-rewrite``). Signals and
    write errors of stdout and stderr end it as ``inputs/streams.py`` says."""
    return run_command(lambda: _main(argv, prog))


def _main(argv: Sequence[str] | None, prog: str | None) -> int:
    parser = _parser(prog or os.path.basename(sys.argv[0]) or "stablehlo-rewrite")
    args = parser.parse_args(argv)
    files = args.files or ["-"]
    modes = sum(bool(flag) for flag in (args.in_place, args.check, args.list, args.output))
    if modes > 1:
        parser.error("--output, --in-place, --check and --list exclude each other")
    if len(files) > 1 and not (args.in_place or args.check or args.list):
        parser.error("several files need --in-place, --check or --list")
    if args.in_place and "-" in files:
        parser.error("--in-place needs files, not standard input")
    if args.format == "json" and not args.list:
        parser.error("--format json goes with --list")
    for flag, value in (
        ("--emit-header", args.emit_header),
        ("--emit-ffi-adapters", args.emit_ffi_adapters),
    ):
        if not value:
            continue
        if len(files) > 1:
            parser.error(f"{flag} takes one input file (and optionally -o)")
        for mode in ("in_place", "check", "list"):
            if getattr(args, mode):
                option = "--" + mode.replace("_", "-")
                parser.error(f"{flag} writes a file, {option} writes none: use one of them")
    clash = _output_clash(args, files)
    if clash:
        parser.error(f"{clash}; nothing was written")
    if args.iree_module is not None and args.abi != "iree":
        parser.error("--iree-module goes with --abi iree")
    if args.platforms is not None:
        from .plan.platform_choice import normalized

        try:
            args.platforms = normalized(args.platforms)
        except ValueError as error:
            parser.error(f"--{error}")
    args.iree_module = args.iree_module or DEFAULT_IREE_MODULE
    try:
        Abi(args.abi, args.iree_module)
    except ValueError as error:
        parser.error(f"--iree-module: {error}")
    return _run(args, files)


def _skip_option(glob: str) -> str:
    import shlex

    return f"--skip {shlex.quote(glob)}"


def _output_clash(args: argparse.Namespace, files: list[str]) -> str | None:
    """Why an output path must not be written: it is an input or another output."""
    from .inputs.files import same_file

    outputs = [
        (flag, path)
        for flag, path in (
            ("-o", args.output),
            ("--emit-header", args.emit_header),
            ("--emit-ffi-adapters", args.emit_ffi_adapters),
        )
        if path
    ]
    for index, (flag, path) in enumerate(outputs):
        for other in files:
            if other != "-" and same_file(path, other):
                return f"{flag} {path} is the input file {other}"
        for other_flag, other in outputs[:index]:
            if same_file(path, other):
                return f"{flag} {path} is also the file of {other_flag} {other}"
    return None


@dataclass
class _Tally:
    """What the files of one run came to: the exit status and what the summary says."""

    status: int = 0
    changed: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)  # --list: calls by status
    listing: list[dict] = field(default_factory=list)  # --list --format json
    failed: int = 0  # files that could not be read or used at all

    def refuse(self, name: str, diagnostics: Sequence[Diagnostic]) -> None:
        """A file that could not be used: listed with its diagnostics, counted as failed."""
        self.listing.append(_json_file(name, [], diagnostics, []))
        self.failed += 1
        self.status = 1


def _run(args: argparse.Namespace, files: list[str]) -> int:
    from .api import decode
    from .inputs.files import read_input
    from .syntax.diagnostics import Diagnostic, RewriteError

    color = _use_color(sys.stderr)
    tally = _Tally()
    for path in files:
        name = "<stdin>" if path == "-" else path
        try:
            data = read_input(path)
        except OSError as error:
            message = f"cannot read: {error.strerror or error}"
            print(f"{printable(name)}: error: {message}", file=sys.stderr)
            tally.refuse(name, [Diagnostic(name, 1, 1, message)])
            continue
        read = _text_input(args, data, name, tally)
        del data  # a binary input's bytes are not kept while its text is rewritten
        if read is None:
            continue
        text, platforms, arguments = read
        del read
        try:
            if isinstance(text, bytes):
                text = decode(text, name).text  # rebinding frees the bytes: memory stays ~3x
            result = _analyze(args, text, name, platforms, arguments)
        except RewriteError as error:
            for diagnostic in error.diagnostics:
                print(diagnostic.format(color), file=sys.stderr)
            tally.refuse(name, error.diagnostics)
            continue
        for warning in result.warnings:
            print(warning.format(color), file=sys.stderr)
        if args.emit_header or args.emit_ffi_adapters:
            try:  # both texts before either file: a bad description writes neither
                header = _header(args, result, name) if args.emit_header else None
                adapters = _adapters(result, name) if args.emit_ffi_adapters else None
            except RewriteError as error:
                for diagnostic in error.diagnostics:
                    print(diagnostic.format(color), file=sys.stderr)
                tally.refuse(name, error.diagnostics)
                continue
            if header is not None and not _write_text(args.emit_header, header):
                return 1
            if adapters is not None and not _write_text(args.emit_ffi_adapters, adapters):
                return 1
            if not args.output:
                continue
        if args.list:
            _list_calls(args, name, result, tally)
            continue
        if result.changed:
            tally.changed.append(name)
        if args.check:
            _check_calls(name, result, color)
            tally.status = 1 if result.errors else tally.status
            continue
        if not _write_result(args, path, name, result):
            tally.status = 1
    _summarize(args, files, tally)
    return tally.status


def _text_input(
    args: argparse.Namespace, data: bytes, name: str, tally: _Tally
) -> tuple[bytes | str, Sequence[str] | None, ExportedArguments | None] | None:
    """The input as the rewrite takes it, the platforms it says it was exported for and
    what it says of ``main``'s arguments: MLIR bytecode and serialized jax.export.Exported
    files become text through jax (an Exported names its platforms and the arguments jax
    left out of ``main``); text files are passed on as they are (and never import jax).
    None when the file cannot be used (said on stderr)."""
    from .inputs.jax_inputs import (
        KIND_NAMES,
        InputError,
        binary_text,
        deserialize_exported,
        exported_arguments,
        exported_text,
        input_kind,
    )

    kind = input_kind(data)
    if kind == "text":
        return data, None, None
    if args.in_place:
        print(
            f"{printable(name)}: error: --in-place would replace {KIND_NAMES[kind]} with MLIR "
            "text; write the rewrite with -o instead",
            file=sys.stderr,
        )
        tally.status = 1
        return None
    try:
        if kind == "exported":
            exported = deserialize_exported(data, name)
            text = exported_text(exported, name)
            return text, tuple(exported.platforms), exported_arguments(exported)
        return binary_text(data, kind, name), None, None
    except InputError as error:
        print(str(error), file=sys.stderr)
        tally.refuse(name, error.diagnostics)
        return None


def _analyze(
    args: argparse.Namespace,
    text: str,
    name: str,
    platforms: Sequence[str] | None = None,
    arguments: ExportedArguments | None = None,
) -> Result:
    """The rewrite of one file as the options ask; raises RewriteError. Without --list or
    --check, errors stop the file (with a note per target: how to rewrite the others).
    ``platforms``: those a serialized Exported names (None: --platforms, if given);
    ``arguments``: what it says of ``main``'s arguments."""
    from .api import analyze, skip_notes, validate_input, validate_rewrite
    from .plan.selection import CLI_WORDS
    from .syntax.diagnostics import Diagnostic, RewriteError

    if platforms is not None and args.platforms is not None:
        if tuple(platforms) != tuple(args.platforms):
            message = (
                f"--platforms {','.join(args.platforms)}: the serialized jax.export.Exported "
                f"was exported for {','.join(platforms)}; leave --platforms out"
            )
            raise RewriteError([Diagnostic(name, 1, 1, message)])
    options = {
        "targets": args.target,
        "skip": args.skip,
        "filename": name,
        "abi": args.abi,
        "iree_module": args.iree_module,
        "words": CLI_WORDS,  # a call --skip leaves alone is "matched by --skip"
        "platform": args.platform,
        "platforms": args.platforms if platforms is None else platforms,
        "arguments": arguments,
    }
    if args.list or args.check:
        return analyze(text, **options)
    # --validate: the input first, so that diagnostics point into the user's file
    validated = validate_input(text, filename=name) if args.validate else None
    result = analyze(text, **options, validated=validated)
    if result.errors:
        raise RewriteError(result.errors + skip_notes(result, _skip_option))
    if validated is not None:  # and what we wrote: an error here would be ours
        validate_rewrite(result, validated, filename=f"{name} (rewritten)")
    return result


def _list_calls(args: argparse.Namespace, name: str, result: Result, tally: _Tally) -> None:
    """--list: a line per call (text) or the file's entry (json), counted for the summary."""
    for report in result.calls:
        if args.format == "text":
            print(_list_line(report))
        tally.counts[report.status] = tally.counts.get(report.status, 0) + 1
    if args.format == "json":  # the listing is for JSON alone; a text listing is printed
        with collector_paused():  # a dict per call, and the rewrite's objects alive
            tally.listing.append(_json_file(name, result.calls, result.errors, result.warnings))
    tally.status = 1 if result.errors else tally.status


def _check_calls(name: str, result: Result, color: bool) -> None:
    """--check is read-only: say what would happen to every call that would change or
    cannot."""
    for diagnostic in result.errors:
        print(diagnostic.format(color), file=sys.stderr)
    for report in result.calls:
        if report.status == Status.REWRITTEN:
            line = f"{name}:{report.line}: @{report.target}: would be rewritten as @{report.symbol}"
        elif report.status == Status.ERROR:
            line = f"{name}:{report.line}: @{report.target}: cannot be rewritten: {report.reason}"
        else:
            continue
        print(printable(line))


def _write_result(args: argparse.Namespace, path: str, name: str, result: Result) -> bool:
    """The rewrite to the file (--in-place), to -o, or to stdout; False when refused or
    failed (said on stderr)."""
    from .inputs.files import OutputRefused, cannot_write, write_encoded, write_output

    output = result.text
    try:
        if args.in_place:
            if result.changed:
                write_output(path, output)
        elif args.output:
            write_output(args.output, output)
        else:
            write_encoded(sys.stdout.buffer, output)
            sys.stdout.flush()
    except OutputRefused as error:
        target = args.output or name
        verb = "rewritten" if args.in_place else "written"
        print(f"{printable(target)}: error: {error}; not {verb}", file=sys.stderr)
        return False
    except OSError as error:
        target = args.output or path
        print(f"{printable(target)}: error: {cannot_write(target, error)}", file=sys.stderr)
        return False
    return True


def _summarize(args: argparse.Namespace, files: list[str], tally: _Tally) -> None:
    """What --check would change (and its exit status), the JSON listing, and the line
    that sums up a run of several files (or any --list)."""
    from .inputs.files import write_encoded

    if args.check and tally.changed:
        for name in tally.changed:
            print(f"{printable(name)}: would rewrite", file=sys.stderr)
        tally.status = 1
    if args.list and args.format == "json":
        document = {"schema": JSON_SCHEMA_VERSION, "files": tally.listing}
        sys.stdout.flush()  # what was printed before goes first
        for chunk in json_text.chunks(document):  # never the whole document at once
            write_encoded(sys.stdout.buffer, chunk)
        write_encoded(sys.stdout.buffer, "\n")
    if args.list:
        total = sum(tally.counts.values())
        parts = ", ".join(f"{n} {status_}" for status_, n in sorted(tally.counts.items()))
        summary = f"{_plural(total, 'custom call')} in {_plural(len(files), 'file')}"
        summary += f": {parts}" if parts else ""
        if tally.failed:
            summary += f"; {_plural(tally.failed, 'file')} could not be read"
        print(summary, file=sys.stderr)
    elif len(files) > 1:
        verb = "would be rewritten" if args.check else "rewritten"
        summary = f"{len(tally.changed)} of {len(files)} files {verb}"
        with_errors = ", with errors" if tally.status and not args.check else ""
        print(summary + with_errors, file=sys.stderr)


JSON_SCHEMA_VERSION = 1


def _json_diagnostic(diagnostic) -> dict:
    return {
        "line": diagnostic.line,
        "column": diagnostic.column,
        "severity": diagnostic.severity,
        "message": diagnostic.message,
    }


def _json_file(name: str, reports, errors, warnings) -> dict:
    """One file of ``--list --format json``; the schema is documented in README.md."""
    from .emit.header import attribute_c_type

    calls = []
    # The attributes of calls of one shape differ in their values only, which this leaves out.
    entries: dict[tuple[str, str, str], dict[str, str]] = {}

    def attribute_entry(attribute) -> dict[str, str]:
        key = (attribute.path, attribute.source_type, attribute.type)
        entry = entries.get(key)
        if entry is None:
            entry = entries[key] = {
                "name": attribute.path,
                "type": attribute.source_type,
                "mlir_type": attribute.type,
                "c_type": attribute_c_type(attribute),
            }
        return entry

    # A shape's calls share their lists of attribute entries too: the writer writes a list
    # it has seen once (emit/json_text.py). Looked up by what the entries show, taken in C.
    attribute_lists: dict[tuple[tuple[str, str, str], ...], list[dict[str, str]]] = {}
    shown = attrgetter("path", "source_type", "type")

    def attribute_list(attributes) -> list[dict[str, str]]:
        key = tuple(map(shown, attributes))
        listed = attribute_lists.get(key)
        if listed is None:
            listed = attribute_lists[key] = [attribute_entry(a) for a in attributes]
        return listed

    words = {status: str(status) for status in Status}
    for report in reports:
        calls.append(
            {
                "line": report.line,
                "column": report.column,
                "target": report.target,
                "operand_types": report.operand_types,  # a shape's calls share them
                "result_types": report.result_types,
                "attributes": attribute_list(report.attributes),
                "status": words[report.status],  # the word itself: a plain str is written fastest
                "symbol": report.symbol,
                "wrapper": report.wrapper,
                "reason": report.reason,
            }
        )
    return {
        "file": name,
        "calls": calls,
        "errors": [_json_diagnostic(d) for d in errors],
        "warnings": [_json_diagnostic(d) for d in warnings],
    }


def _header(args: argparse.Namespace, result: Result, name: str) -> str:
    """The --emit-header text (RewriteError when an extern's description is unreadable)."""
    from .emit.header import header_of

    return header_of(result, filename=name, abi=args.abi, iree_module=args.iree_module)


def _adapters(result: Result, name: str) -> str:
    """The adapters of the externs the rewrite reports (the same ones its text declares)."""
    from .emit.ffi_adapters import adapters_source, externs_of_rewrite

    return adapters_source(externs_of_rewrite(result.calls, result.original, name), name)


def _write_text(path: str, text: str) -> bool:
    """Write a generated file (see ``files.write_output``); False (after saying why) when
    that fails."""
    from .inputs.files import OutputRefused, cannot_write, write_output

    try:
        write_output(path, text.encode("utf-8"))
    except OutputRefused as error:
        print(f"{printable(path)}: error: {error}; not written", file=sys.stderr)
        return False
    except OSError as error:
        print(f"{printable(path)}: error: {cannot_write(path, error)}", file=sys.stderr)
        return False
    return True


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _list_line(report) -> str:
    attributes = ", ".join(f"{a.path}: {a.source_type}" for a in report.attributes)
    operands = ", ".join(report.operand_types)
    results = ", ".join(report.result_types)
    where = f"{report.filename}:{report.line}:{report.column}"
    signature = f"@{report.target}({operands}) -> ({results})"
    if attributes:
        signature += f" {{{attributes}}}"
    if report.status == Status.REWRITTEN:
        decision = f"rewritten as @{report.symbol}"
        if report.wrapper:
            decision += f" (through @{report.wrapper})"
    elif report.status == Status.ERROR:
        decision = f"error: {report.reason}"
    else:
        decision = f"left alone: {report.reason}"
    return printable(f"{where}: {signature}: {decision}")
