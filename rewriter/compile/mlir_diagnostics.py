"""MLIR's own diagnostics about a module, as ours: ``file:line:col: error: ...``, the
source line and a caret.

Both runners parse the module with IREE's MLIR bindings (``ir.Module.parse``), which raise
``MLIRError`` for text MLIR rejects. Its diagnostics locate a parse error in the parsed
buffer, ``loc("-":LINE:COL)``: that is a place in the user's file, shown as every other
diagnostic is. A verifier's error carries the op's own location (jax's ``loc("x")``, a
callsite), which is no place in the file: it is reported at the file with MLIR's location
text in the message.
"""

from __future__ import annotations

import re
from typing import Any

from ..syntax.diagnostics import Diagnostic, RewriteError, Severity
from ..syntax.source import Source

_BUFFER_POSITION = re.compile(r'"-":(\d+):(\d+)')


def parse_error(error: Any, text: str, filename: str) -> RewriteError:
    """The RewriteError for ``error``, an ``ir.MLIRError`` raised parsing ``text``."""
    source = Source(text, filename)
    found = [
        diagnostic
        for reported in getattr(error, "error_diagnostics", ())
        for diagnostic in _diagnostics(reported, source, Severity.ERROR)
    ]
    if not found:
        message = f"MLIR cannot parse the module: {getattr(error, 'message', error)}"
        found = [Diagnostic(filename, 1, 1, message, _first_line(source))]
    return RewriteError(found)


def _diagnostics(reported: Any, source: Source, severity: Severity) -> list[Diagnostic]:
    """One reported diagnostic and its notes."""
    location = str(reported.location)
    message = str(reported.message)
    position = _BUFFER_POSITION.search(location)
    lines = len(source.line_starts())
    if position and 1 <= int(position[1]) <= lines:
        line, text = int(position[1]), source.line_text(int(position[1]))
        # MLIR counts columns in bytes, a Diagnostic in characters
        column = len(text.encode("utf-8")[: int(position[2]) - 1].decode("utf-8", "ignore")) + 1
        shown: Diagnostic = Diagnostic(source.filename, line, column, message, text, severity)
    else:
        shown = Diagnostic(source.filename, 1, 1, f"{message} (at {location})", None, severity)
    notes = getattr(reported, "notes", ())
    return [shown, *(d for note in notes for d in _diagnostics(note, source, Severity.NOTE))]


def _first_line(source: Source) -> str | None:
    return source.line_text(1) if source.text else None
