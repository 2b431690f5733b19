"""One fix of the IREE path applied to a jax function's export, as the fixes' tests look at
it (test_iree_flat_reductions.py, test_iree_unrolled_loops.py, test_iree_window_extrema.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import rewriter


def applied(fix: Callable[[Any], int], function, *inputs) -> tuple[int, str]:
    """``function`` exported at ``inputs`` and rewritten with --abi iree, then ``fix`` (a
    rewrite of an ``iree.compiler.ir`` module that returns how many ops it changed): how
    many, and the module's text, which must verify."""
    from iree.compiler import ir

    text = rewriter.rewrite(rewriter.export(function, *inputs).text, abi="iree").text
    with ir.Context() as context:
        context.allow_unregistered_dialects = True
        module = ir.Module.parse(text)
        changed = fix(module)
        assert module.operation.verify()
        return changed, str(module)
