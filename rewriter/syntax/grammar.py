"""The lark grammar, loaded from the package and built once (LALR, contextual lexer).

The grammar file lives in the repository's top-level ``grammar/`` folder and is installed
inside the wheel as the ``rewriter.grammar`` resource package.
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import lark

GRAMMAR_FILE = "stablehlo.lark"
START_RULES = ["module_file", "custom_call_stmt", "dictionary"]


@functools.cache
def grammar_text() -> str:
    """The grammar, from the installed package or, in a source checkout, from ``grammar/``
    (read once: ``terminals`` reads it at import, ``parser`` when it first parses)."""
    try:
        return (resources.files("rewriter.grammar") / GRAMMAR_FILE).read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError):
        checkout = Path(__file__).resolve().parents[2] / "grammar" / GRAMMAR_FILE
        return checkout.read_text(encoding="utf-8")


@functools.cache
def parser() -> lark.Lark:
    """The LALR parser; lark caches the built tables on disk, so later starts are fast.

    Every tree node knows its span (``meta.start_pos``/``end_pos``). A whole-module
    validation builds no tree: it runs this parser's table and lexer (``validation``).
    """
    import lark

    return lark.Lark(
        grammar_text(),
        parser="lalr",
        lexer="contextual",
        start=START_RULES,
        propagate_positions=True,
        maybe_placeholders=False,
        cache=True,
    )
