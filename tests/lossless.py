"""An independent check of the lossless principle, by a line diff of input and output.

It does not look at our edits: it diffs the two texts with difflib and requires that every
removed line is a custom call statement and every added line is one of the forms the
contract emits (extern declaration, constant, bitcast, func.call).
"""

from __future__ import annotations

import difflib
import re

_ADDED = re.compile(
    r"[ \t]*(?:"
    r"func\.func private @[A-Za-z_][A-Za-z0-9_]*\(.*\)(?: -> .*)?"
    r" attributes \{llvm\.emit_c_interface(?:, rewriter\.xla_ffi = \{.*\})?\}"
    # --abi iree: an import of a runtime module, with the contract order recorded
    r"|func\.func private @[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*\(.*\)(?: -> .*)?"
    r" attributes \{rewriter\.attribute_types = \[.*\], rewriter\.order = array<i64.*>"
    r"(?:, rewriter\.xla_ffi = \{.*\})?\}"
    r"|%[\w$.\-]+ = arith\.constant .*"
    r"|%[\w$.\-]+ = arith\.bitcast %[\w$.\-]+ : b?f16 to i16.*"
    r"|(?:%[\w$.\-]+(?::\d+)? = )?func\.call @(?:[A-Za-z_][A-Za-z0-9_]*\.)?"
    r"[A-Za-z_][A-Za-z0-9_]*\(.*\) : \(.*"
    # the private wrapper that applies non-default layouts (rewriter/plan/layouts.py)
    r"|func\.func private @[A-Za-z_][A-Za-z0-9_]*_layout(?:_[0-9]+)?\(.*\)(?: -> .*)? \{"
    r"|%[0-9]+ = stablehlo\.transpose %[\w#]+, dims = \[[0-9, ]*\] : \(.*\) -> .*"
    r"|return(?: .*)?"
    r"|\}"
    r")\r?"
)
_REMOVED = re.compile(
    r'[ \t]*(?:%[\w$.\-]+(?::\d+)? = )?(?:stablehlo\.custom_call|"stablehlo\.custom_call").*'
)


def check_lossless(original: str, rewritten: str) -> tuple[int, int]:
    """Assert the diff has only contract edits; return (custom calls removed, lines added)."""
    before = original.split("\n")
    after = rewritten.split("\n")
    removed = added = 0
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        for line in before[i1:i2]:
            assert _REMOVED.fullmatch(line), f"a line that is not a custom call changed: {line!r}"
            removed += 1
        for line in after[j1:j2]:
            assert _ADDED.fullmatch(line), f"an unexpected line was added: {line!r}"
            added += 1
    return removed, added
