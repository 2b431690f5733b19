"""``Status``: what happened to a custom call (``CallReport.status``).

Its own module, so that the command line can name the statuses without importing the
planner (and lark) before it has parsed its arguments.
"""

from __future__ import annotations

from ..syntax.text_enum import TextEnum


class Status(TextEnum):
    """What happened to a custom call. Each member is also its word as a ``str``:
    ``report.status == "rewritten"`` holds, and ``--list`` and JSON write the word."""

    REWRITTEN = "rewritten"  # replaced by a func.call of an extern
    LEFT_ALONE = "left alone"  # not selected (rule 6, --target, --skip); ``reason`` says why
    ERROR = "error"  # selected, but the contract cannot express it; ``reason`` says why
