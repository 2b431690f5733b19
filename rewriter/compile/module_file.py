"""Reading the rewritten module a runner was given: both command lines (``python -m
rewriter.compile`` and ``python -m rewriter.iree``) and ``rewriter.iree.compile_module`` read
it here, so that a file they cannot read is one ``cannot read: ...`` message, the same in
both, in the caller's own error (``ToolchainError``, ``BuildError``), never a traceback."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path


def read_module_file(path: str | os.PathLike[str], error: Callable[[str], Exception]) -> str:
    """The UTF-8 text of ``path``; raises ``error(message)`` when it cannot be read (the
    message does not repeat the file name, which callers put first)."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as problem:
        raise error(f"cannot read: {problem.strerror or problem}") from None
    except UnicodeDecodeError:
        raise error("cannot read: not UTF-8 text") from None
