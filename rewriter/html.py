"""HTML views for notebooks: ``Result._repr_html_`` and ``CallReport._repr_html_``.

Self-contained HTML: inline styles only, no script, no stylesheet; every value from the
input (targets, types, attribute strings, diagnostics, text) is HTML-escaped. The rewrite is
shown as a unified diff built from the edits themselves, so only the changed lines and a few
lines of context are ever looked at, however large the module; the diff is capped, and the
cut is said. pygments highlights the diff when it is installed (``pip install
'stablehlo-ffi-rewriter[notebook]'``); without it the diff is a plain ``<pre>``.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from .edits import Edit

# Limits: exports can be megabytes, with kilobyte-long lines and thousands of calls.
MAX_TABLE_ROWS = 200
MAX_DIAGNOSTICS = 50
MAX_DIFF_LINES = 400
MAX_DIFF_CHARS = 100_000
MAX_LINE_CHARS = 400
CONTEXT_LINES = 3

_FONT = "font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace"
# Table borders and padding as attributes, so that each cell only needs its alignment
# (notebook front ends right-align table cells otherwise).
_TABLE = 'border="1" cellspacing="0" cellpadding="3" style="border-collapse: collapse"'
_CELL = "text-align: left; vertical-align: top"
_PRE = (
    # A light background with its own dark text: readable in light and dark notebook themes
    # (a dark theme would otherwise draw its light text on this light background).
    f"{_FONT}; font-size: 0.85em; background: #f8f8f8; color: #1f2328; border: 1px solid #ddd; "
    "padding: 4px 6px; margin: 0.3em 0; overflow-x: auto; white-space: pre"
)
_STATUS_COLOURS = {"rewritten": "#1a7f37", "left alone": "#6e7781", "error": "#cf222e"}
_COLUMNS = ("location", "target", "operand types", "result types", "attributes", "decision")


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _code(value: object) -> str:
    return f"<code>{_e(value)}</code>"


# ---------------------------------------------------------------- the call table


def decision(report: Any) -> str:
    """The decision about one call, in words (as ``--list`` says it)."""
    if report.status == "rewritten":
        text = f"rewritten as @{report.symbol}"
        if report.wrapper:
            text += f" (through @{report.wrapper})"
        return text
    if report.status == "error":
        return f"error: {report.reason}"
    return f"left alone: {report.reason}"


def _c_type(attribute: Any) -> str:
    from .header import attribute_c_type

    try:
        return attribute_c_type(attribute)
    except (KeyError, ValueError, IndexError):  # a type the header cannot express
        return "?"


def _types_cell(types: Sequence[str]) -> str:
    return "<br>".join(_code(t) for t in types) or "&mdash;"


def _row(report: Any) -> str:
    where = f"{report.filename}:{report.line}:{report.column}"
    attributes = "<br>".join(
        _code(f"{a.path}: {a.source_type} \u2192 {_c_type(a)}") for a in report.attributes
    )
    colour = _STATUS_COLOURS.get(report.status, "inherit")
    cells = [
        _code(where),
        _code(f"@{report.target}"),
        _types_cell(report.operand_types),
        _types_cell(report.result_types),
        attributes or "&mdash;",
        f'<span style="color: {colour}">{_e(decision(report))}</span>',
    ]
    return "<tr>" + "".join(f'<td style="{_CELL}">{cell}</td>' for cell in cells) + "</tr>"


def calls_table(reports: Sequence[Any], max_rows: int = MAX_TABLE_ROWS) -> str:
    """A table of custom calls: where, target, types, attributes with C types, decision.

    The first ``max_rows`` calls, in file order; a line after the table counts the others.
    """
    head = "".join(f'<th style="{_CELL}">{name}</th>' for name in _COLUMNS)
    rows = "".join(_row(report) for report in reports[:max_rows])
    table = f"<table {_TABLE}><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
    rest = reports[max_rows:]
    if rest:
        table += (
            f"<p><i>{len(rest)} more calls not shown ({_counts(rest)}): "
            "<code>result.calls</code> has them all.</i></p>"
        )
    return table


def _counts(reports: Iterable[Any]) -> str:
    counts: dict[str, int] = {}
    for report in reports:
        counts[report.status] = counts.get(report.status, 0) + 1
    return ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))


def render_call(report: Any) -> str:
    """``CallReport._repr_html_``: a one-row table."""
    return f'<div class="rewriter-call">{calls_table([report])}</div>'


# ---------------------------------------------------------------- the diff


@dataclass
class _Block:
    """Original lines [first, last) replaced by ``new`` lines."""

    first: int
    last: int
    new: list[str]


def _line_starts(text: str) -> list[int]:
    starts = [0]
    find = text.find
    position = find("\n")
    while position != -1:
        starts.append(position + 1)
        position = find("\n", position + 1)
    return starts


def _split(text: str) -> list[str]:
    """The lines of ``text`` without line ends (only \\n breaks a line, as in the scan)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _blocks(original: str, edits: Sequence[Edit]) -> list[_Block]:
    """The changed line blocks of ``original`` under ``edits`` (non-overlapping)."""
    starts = _line_starts(original)

    def line_of(offset: int) -> int:
        return bisect.bisect_right(starts, offset) - 1

    def offset_of(line: int) -> int:
        return starts[line] if line < len(starts) else len(original)

    # Each edit covers whole lines, from the line of its start through the line holding its
    # end (that line's own line end closes the new text, so what follows is untouched);
    # edits sharing a line are one block.
    spans: list[tuple[int, int, list[Edit]]] = []
    ordered = sorted(enumerate(edits), key=lambda item: (item[1].start, item[1].end, item[0]))
    for _, edit in ordered:
        if edit.start == edit.end and not edit.text:
            continue
        first, last = line_of(edit.start), line_of(edit.end) + 1
        if spans and first < spans[-1][1]:
            previous = spans[-1]
            spans[-1] = (previous[0], max(previous[1], last), [*previous[2], edit])
        else:
            spans.append((first, last, [edit]))
    old_lines = _split(original)
    blocks = []
    for first, last, members in spans:
        begin, end = offset_of(first), offset_of(last)
        pieces, position = [], begin
        for edit in members:
            pieces.append(original[position : edit.start])
            pieces.append(edit.text)
            position = edit.end
        pieces.append(original[position:end])
        new = _split("".join(pieces))
        last = min(last, len(old_lines))
        # Lines the block leaves as they were are context, not changes.
        while first < last and new and old_lines[first] == new[0]:
            first, new = first + 1, new[1:]
        while first < last and new and old_lines[last - 1] == new[-1]:
            last, new = last - 1, new[:-1]
        if first < last or new:
            blocks.append(_Block(first, last, new))
    return blocks


def _range(start: int, length: int) -> str:
    """A unified diff hunk range (``start`` 0-based), as difflib writes it."""
    if length == 1:
        return f"{start + 1}"
    if length == 0:
        return f"{start},0"
    return f"{start + 1},{length}"


def diff_lines(
    original: str, edits: Sequence[Edit], context: int = CONTEXT_LINES
) -> tuple[list[str], int]:
    """The unified diff of the edits, as lines without line ends, and its hunk count."""
    blocks = _blocks(original, edits)
    if not blocks:
        return [], 0
    old_lines = _split(original)
    # Group blocks whose context would touch into hunks.
    hunks: list[list[_Block]] = [[blocks[0]]]
    for block in blocks[1:]:
        if block.first - hunks[-1][-1].last <= 2 * context:
            hunks[-1].append(block)
        else:
            hunks.append([block])
    lines: list[str] = []
    delta = 0  # new line number minus old line number before the current hunk
    for hunk in hunks:
        start = max(0, hunk[0].first - context)
        stop = min(len(old_lines), hunk[-1].last + context)
        body: list[str] = []
        position = start
        new_count = 0
        for block in hunk:
            body += [" " + line for line in old_lines[position : block.first]]
            body += ["-" + line for line in old_lines[block.first : block.last]]
            body += ["+" + line for line in block.new]
            new_count += (block.first - position) + len(block.new)
            position = block.last
        body += [" " + line for line in old_lines[position:stop]]
        new_count += stop - position
        old_count = stop - start
        lines.append(f"@@ -{_range(start, old_count)} +{_range(start + delta, new_count)} @@")
        lines += body
        delta += new_count - old_count
    return lines, len(hunks)


def _fallback_diff(original: str, text: str, context: int) -> list[str]:
    import difflib

    diff = difflib.unified_diff(original.splitlines(), text.splitlines(), n=context, lineterm="")
    return [line for line in diff if not line.startswith(("---", "+++"))]


def _capped(lines: list[str], max_lines: int, max_chars: int) -> tuple[list[str], bool]:
    shown: list[str] = []
    total = 0
    for line in lines:
        if len(line) > MAX_LINE_CHARS:
            cut = len(line) - MAX_LINE_CHARS
            line = line[:MAX_LINE_CHARS] + f" \u2026 [{cut} more characters]"
        if len(shown) >= max_lines or total + len(line) > max_chars:
            return shown, True
        shown.append(line)
        total += len(line) + 1
    return shown, False


def _highlighted(diff: str) -> str:
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import DiffLexer
    except ImportError:
        return f'<pre style="{_PRE}">{_e(diff)}</pre>'
    formatter = HtmlFormatter(noclasses=True, nobackground=True, prestyles=_PRE)
    return highlight(diff, DiffLexer(), formatter)


def diff_section(
    result: Any,
    *,
    context: int = CONTEXT_LINES,
    max_lines: int = MAX_DIFF_LINES,
    max_chars: int = MAX_DIFF_CHARS,
) -> str:
    """The rewrite as a unified diff of the changed hunks, capped, highlighted if possible."""
    if not result.changed:
        return "<p>No change: the output is the input, byte for byte.</p>"
    if result.edits:
        lines, hunk_count = diff_lines(result.original, result.edits, context)
    else:  # a Result built by hand: diff the texts
        lines = _fallback_diff(result.original, result.text, context)
        hunk_count = sum(line.startswith("@@") for line in lines)
    shown, cut = _capped(lines, max_lines, max_chars)
    name = result.calls[0].filename if result.calls else "original"
    header = [f"--- {name}", "+++ rewritten"]
    parts = [
        f"<p><b>Rewrite</b>: {hunk_count} changed {'hunk' if hunk_count == 1 else 'hunks'} "
        f"(unified diff, {context} lines of context)</p>",
        _highlighted("\n".join(header + shown) + "\n"),
    ]
    if cut:
        parts.append(
            f"<p><i>Diff cut: {len(shown)} of {len(lines)} lines shown; "
            "the whole rewritten module is <code>result.text</code>.</i></p>"
        )
    return "".join(parts)


# ---------------------------------------------------------------- the whole result


def _diagnostics(title: str, diagnostics: Sequence[Any], colour: str) -> str:
    if not diagnostics:
        return ""
    shown = diagnostics[:MAX_DIAGNOSTICS]
    body = "\n".join(d.format() for d in shown)
    more = len(diagnostics) - len(shown)
    if more:
        body += f"\n... and {more} more"
    return f'<p style="color: {colour}"><b>{title}</b></p><pre style="{_PRE}">{_e(body)}</pre>'


def _summary(result: Any) -> str:
    total = len(result.calls)
    parts = _counts(result.calls)
    calls = f"{total} custom call{'' if total == 1 else 's'}" + (f": {parts}" if parts else "")
    filename = result.calls[0].filename if result.calls else None
    where = f" in {_code(filename)}" if filename else ""
    changed = "changed" if result.changed else "unchanged"
    return f"<p><b>rewriter.Result</b>{where}: {_e(calls)}; module {changed}.</p>"


def render_result(result: Any, **diff_options: Any) -> str:
    """``Result._repr_html_``: summary, call table, warnings and errors, the diff."""
    parts = [
        '<div class="rewriter-result">',
        _summary(result),
        calls_table(result.calls) if result.calls else "",
        _diagnostics("Errors", result.errors, _STATUS_COLOURS["error"]),
        _diagnostics("Warnings", result.warnings, "#9a6700"),
        diff_section(result, **diff_options),
        "</div>",
    ]
    return "".join(parts)
