"""Diagnostics in MLIR's own format: ``file:line:col: error: message``, source line, caret."""

from __future__ import annotations

import re
from dataclasses import dataclass

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
        """The message as MLIR tools print it; ``color`` adds ANSI colours for terminals."""
        head = f"{self.filename}:{self.line}:{self.column}: "
        label = f"{self.severity}:"
        if color:
            shade = "\033[1;31m" if self.severity == Severity.ERROR else "\033[1;35m"
            head = f"\033[1m{head}\033[0m"
            label = f"{shade}{label}\033[0m"
        text = f"{head}{label} {self.message}"
        if self.source_line is not None:
            printable = _CONTROL.sub("?", self.source_line.expandtabs(1))
            shown, caret_column = _excerpt(printable, self.column)
            caret = " " * (caret_column - 1) + "^"
            if color:
                caret = f"\033[1;32m{caret}\033[0m"
            text += f"\n{shown}\n{caret}"
        return text

    def __str__(self) -> str:
        return self.format()


_EXCERPT = 120
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")  # never echo control bytes to a terminal


def _excerpt(line: str, column: int) -> tuple[str, int]:
    """A window of a long source line around ``column`` (exported ops can be kilobytes)."""
    if len(line) <= _EXCERPT:
        return line, column
    start = max(0, min(column - 1 - _EXCERPT // 2, len(line) - _EXCERPT))
    end = start + _EXCERPT
    shown = ("..." if start else "") + line[start:end] + ("..." if end < len(line) else "")
    return shown, column - start + (3 if start else 0)


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
