"""Diagnostics in MLIR's own format: ``file:line:col: error: message``, source line, caret."""

from __future__ import annotations

from dataclasses import dataclass

from .printable import printable
from .source import Source
from .text_enum import TextEnum


class Severity(TextEnum):
    """How much a diagnostic matters, in MLIR's words."""

    ERROR = "error"  # the file is not rewritten
    WARNING = "warning"  # rewritten, but look (a renamed extern, a call that differs)
    NOTE = "note"  # more about another diagnostic


@dataclass(frozen=True)
class Diagnostic:
    """One message about a place in the input."""

    filename: str
    line: int
    column: int
    message: str
    source_line: str | None = None  # None when there is no source line to show
    severity: Severity = Severity.ERROR

    @classmethod
    def at(
        cls, source: Source, offset: int, message: str, severity: Severity = Severity.ERROR
    ) -> Diagnostic:
        line, column = source.line_col(offset)
        return cls(source.filename, line, column, message, source.line_text(line), severity)

    def format(self, color: bool = False) -> str:
        """The message as MLIR tools print it; ``color`` adds ANSI colours for terminals.
        Input text (file name, message, source line) is ``printable``: it cannot forge a
        line or a terminal escape, and the caret stays under its character."""
        head = f"{printable(self.filename)}:{self.line}:{self.column}: "
        label = f"{self.severity}:"
        if color:
            shade = "\033[1;31m" if self.severity == Severity.ERROR else "\033[1;35m"
            head = f"\033[1m{head}\033[0m"
            label = f"{shade}{label}\033[0m"
        text = f"{head}{label} {printable(self.message)}"
        if self.source_line is not None:
            shown, caret_column = _excerpt(self.source_line.expandtabs(1), self.column)
            caret = " " * (caret_column - 1) + "^"
            if color:
                caret = f"\033[1;32m{caret}\033[0m"
            text += f"\n{shown}\n{caret}"
        return text

    def __str__(self) -> str:
        return self.format()


_EXCERPT = 120


def _excerpt(line: str, column: int) -> tuple[str, int]:
    """A window of a long source line around ``column`` (exported ops can be kilobytes),
    ``printable``, and the caret's column in it. The window is cut from the line itself
    and escaped in two pieces, before and from the column, so an escape (``\\1B`` for one
    character) never hides the caret's character or moves the caret off it."""
    start, end = 0, len(line)
    if len(line) > _EXCERPT:
        start = max(0, min(column - 1 - _EXCERPT // 2, len(line) - _EXCERPT))
        end = start + _EXCERPT
    before = ("..." if start else "") + printable(line[start : column - 1])
    shown = before + printable(line[column - 1 : end]) + ("..." if end < len(line) else "")
    return shown, len(before) + 1


class RewriteError(Exception):
    """The input cannot be rewritten. Carries every diagnostic found, the first one first."""

    def __init__(self, diagnostics: list[Diagnostic]):
        super().__init__("\n".join(d.format() for d in diagnostics))
        self.diagnostics = diagnostics

    @property
    def line(self) -> int:
        return self.diagnostics[0].line

    @property
    def column(self) -> int:
        return self.diagnostics[0].column

    @property
    def message(self) -> str:
        return self.diagnostics[0].message
