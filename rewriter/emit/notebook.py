"""HTML views for notebooks: ``Result._repr_html_`` and ``CallReport._repr_html_``.

Self-contained HTML: inline styles only, no script, no stylesheet; every value from the
input (targets, types, attribute strings, diagnostics, text) is HTML-escaped. The rewrite is
shown as a unified diff built from the edits themselves, so only the changed lines and a few
lines of context are ever looked at, however large the module; the diff is capped, made
only as far as it is shown (so a view of 70k calls costs what a view of 40 does), and the
cut is said. pygments highlights the diff when it is installed (``pip install
'stablehlo-ffi-rewriter[notebook]'``); without it the diff is a plain ``<pre>``.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from html import escape
from operator import attrgetter
from typing import Any

from ..plan.edits import Edit
from ..plan.status import Status

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
    # Long lines wrap (anywhere: an extern's rewriter.xla_ffi description is one word of
    # hundreds of characters), never behind a scrollbar that an exported page cannot scroll.
    f"{_FONT}; font-size: 0.85em; background: #f8f8f8; color: #1f2328; border: 1px solid #ddd; "
    "padding: 4px 6px; margin: 0.3em 0; white-space: pre-wrap; overflow-wrap: anywhere"
)
_STATUS_COLOURS = {
    Status.REWRITTEN: "#1a7f37",
    Status.LEFT_ALONE: "#6e7781",
    Status.ERROR: "#cf222e",
}
_COLUMNS = ("location", "target", "operand types", "result types", "attributes", "decision")


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _code(value: object) -> str:
    return f"<code>{_e(value)}</code>"


# ---------------------------------------------------------------- the call table


def decision(report: Any) -> str:
    """The decision about one call, in words (as ``--list`` says it)."""
    if report.status == Status.REWRITTEN:
        text = f"rewritten as @{report.symbol}"
        if report.wrapper:
            text += f" (through @{report.wrapper})"
        return text
    if report.status == Status.ERROR:
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


def _split(text: str) -> list[str]:
    """The lines of ``text`` without line ends (only \\n breaks a line, as in the scan)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


class _Lines:
    """The lines of a text, found only as far as they are asked for: the first hunks of a
    diff read the start of a module, not all of it."""

    def __init__(self, text: str):
        self.text = text
        self.starts = [0]  # offsets where the lines found so far start
        self.complete = False  # every line start found

    def _find_until(self, done: Callable[[], bool]) -> None:
        starts, find = self.starts, self.text.find
        while not self.complete and not done():
            position = find("\n", starts[-1])
            if position == -1:
                self.complete = True
            else:
                starts.append(position + 1)

    def line_of(self, offset: int) -> int:
        self._find_until(lambda: self.starts[-1] > offset)
        return bisect.bisect_right(self.starts, offset) - 1

    def offset_of(self, line: int) -> int:
        self._find_until(lambda: len(self.starts) > line)
        return self.starts[line] if line < len(self.starts) else len(self.text)

    def count_up_to(self, count: int) -> int:
        """``min(count, number of lines)``, as ``_split`` counts them."""
        self._find_until(lambda: len(self.starts) > count + 1)
        if len(self.starts) > count + 1:
            return count
        ends_with_break = self.text.endswith("\n") or not self.text
        return min(count, len(self.starts) - 1 if ends_with_break else len(self.starts))

    def lines(self, first: int, last: int) -> list[str]:
        """Lines [first, last) without line ends (``last`` at most the line count)."""
        if first >= last:
            return []
        return _split(self.text[self.offset_of(first) : self.offset_of(last)])


def _blocks(lines: _Lines, edits: Sequence[Edit]) -> Iterator[_Block]:
    """The changed line blocks under ``edits`` (non-overlapping), in order."""
    # Each edit covers whole lines, from the line of its start through the line holding its
    # end (that line's own line end closes the new text, so what follows is untouched);
    # edits sharing a line are one block. The sort is C-speed and stable.
    pending: tuple[int, int, list[Edit]] | None = None
    for edit in sorted(edits, key=attrgetter("start", "end")):
        if edit.start == edit.end and not edit.text:
            continue
        first, last = lines.line_of(edit.start), lines.line_of(edit.end) + 1
        if pending is not None and first < pending[1]:
            pending = (pending[0], max(pending[1], last), [*pending[2], edit])
            continue
        if pending is not None:
            yield from _block(lines, *pending)
        pending = (first, last, [edit])
    if pending is not None:
        yield from _block(lines, *pending)


def _block(lines: _Lines, first: int, last: int, members: list[Edit]) -> Iterator[_Block]:
    """The block of lines [first, last) under ``members``, if it changes any line."""
    original = lines.text
    begin, end = lines.offset_of(first), lines.offset_of(last)
    pieces, position = [], begin
    for edit in members:
        pieces.append(original[position : edit.start])
        pieces.append(edit.text)
        position = edit.end
    pieces.append(original[position:end])
    new = _split("".join(pieces))
    last = lines.count_up_to(last)
    old = lines.lines(first, last)
    # Lines the block leaves as they were are context, not changes.
    while old and new and old[0] == new[0]:
        first, old, new = first + 1, old[1:], new[1:]
    while old and new and old[-1] == new[-1]:
        last, old, new = last - 1, old[:-1], new[:-1]
    if first < last or new:
        yield _Block(first, last, new)


def _range(start: int, length: int) -> str:
    """A unified diff hunk range (``start`` 0-based), as difflib writes it."""
    if length == 1:
        return f"{start + 1}"
    if length == 0:
        return f"{start},0"
    return f"{start + 1},{length}"


def _hunks(
    blocks: Iterable[_Block], context: int, max_lines: int | None = None
) -> Iterator[list[_Block]]:
    """Blocks grouped into hunks: those whose context would touch share one. A hunk that
    grows past ``max_lines`` lines ends there (a diff of its start: the view shows no more,
    and an export whose calls are a few lines apart is one hunk from top to bottom)."""
    hunk: list[_Block] = []
    size = 0  # the hunk's lines so far: its header, context before and between, changes
    for block in blocks:
        touches = hunk and block.first - hunk[-1].last <= 2 * context
        if hunk and not (touches and (max_lines is None or size <= max_lines)):
            yield hunk  # (once past max_lines, its context after comes after the cut)
            hunk, size = [], 0
        before = block.first - hunk[-1].last if hunk else 1 + min(context, block.first)
        size += before + block.last - block.first + len(block.new)
        hunk.append(block)
    if hunk:
        yield hunk


def _diff(
    original: str, edits: Sequence[Edit], context: int, max_lines: int | None = None
) -> Iterator[list[str]]:
    """The unified diff of the edits, hunk by hunk, as lines without line ends; made as
    far as it is read."""
    lines = _Lines(original)
    delta = 0  # new line number minus old line number before the current hunk
    for hunk in _hunks(_blocks(lines, edits), context, max_lines):
        start = max(0, hunk[0].first - context)
        stop = lines.count_up_to(hunk[-1].last + context)
        body: list[str] = []
        position = start
        new_count = 0
        for block in hunk:
            body += [" " + line for line in lines.lines(position, block.first)]
            body += ["-" + line for line in lines.lines(block.first, block.last)]
            body += ["+" + line for line in block.new]
            new_count += (block.first - position) + len(block.new)
            position = block.last
        body += [" " + line for line in lines.lines(position, stop)]
        new_count += stop - position
        old_count = stop - start
        yield [f"@@ -{_range(start, old_count)} +{_range(start + delta, new_count)} @@", *body]
        delta += new_count - old_count


def diff_lines(
    original: str, edits: Sequence[Edit], context: int = CONTEXT_LINES
) -> tuple[list[str], int]:
    """The whole unified diff of the edits, as lines without line ends, and its hunk count."""
    lines: list[str] = []
    hunk_count = 0
    for hunk in _diff(original, edits, context):
        lines += hunk
        hunk_count += 1
    return lines, hunk_count


def _fallback_diff(original: str, text: str, context: int) -> list[str]:
    import difflib

    diff = difflib.unified_diff(original.splitlines(), text.splitlines(), n=context, lineterm="")
    return [line for line in diff if not line.startswith(("---", "+++"))]


def _capped(
    hunks: Iterable[list[str]], max_lines: int, max_chars: int
) -> tuple[list[str], int, bool]:
    """The first lines of the diff within the caps (long lines shortened), how many hunks
    they start, and whether lines were left out. Stops reading ``hunks`` at the cut."""
    shown: list[str] = []
    total = hunk_count = 0
    for hunk in hunks:
        hunk_count += 1
        for line in hunk:
            if len(line) > MAX_LINE_CHARS:
                cut = len(line) - MAX_LINE_CHARS
                line = line[:MAX_LINE_CHARS] + f" \u2026 [{cut} more characters]"
            if len(shown) >= max_lines or total + len(line) > max_chars:
                return shown, hunk_count, True
            shown.append(line)
            total += len(line) + 1
    return shown, hunk_count, False


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
        hunks: Iterable[list[str]] = _diff(result.original, result.edits, context, max_lines)
    else:  # a Result built by hand: diff the texts
        hunks = _split_hunks(_fallback_diff(result.original, result.text, context))
    shown, hunk_count, cut = _capped(hunks, max_lines, max_chars)
    name = result.calls[0].filename if result.calls else "original"
    header = [f"--- {name}", "+++ rewritten"]
    if cut:  # the rest of the diff is never made: its size is not known
        what = f"the first {hunk_count} changed {'hunk' if hunk_count == 1 else 'hunks'}"
        what += f" of {len(result.edits)} edits" if result.edits else ""
    else:
        what = f"{hunk_count} changed {'hunk' if hunk_count == 1 else 'hunks'}"
    parts = [
        f"<p><b>Rewrite</b>: {what} (unified diff, {context} lines of context)</p>",
        _highlighted("\n".join(header + shown) + "\n"),
    ]
    if cut:
        parts.append(
            f"<p><i>Diff cut after {len(shown)} lines; "
            "the whole rewritten module is <code>result.text</code>.</i></p>"
        )
    return "".join(parts)


def _split_hunks(lines: list[str]) -> list[list[str]]:
    """difflib's diff lines, hunk by hunk."""
    hunks: list[list[str]] = []
    for line in lines:
        if line.startswith("@@") or not hunks:
            hunks.append([])
        hunks[-1].append(line)
    return hunks


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
        _diagnostics("Errors", result.errors, _STATUS_COLOURS[Status.ERROR]),
        _diagnostics("Warnings", result.warnings, "#9a6700"),
        diff_section(result, **diff_options),
        "</div>",
    ]
    return "".join(parts)
