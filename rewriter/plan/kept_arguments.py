"""Arguments that ``jax.export`` leaves out of ``@main``, declared again: ``main`` takes what
``jax.jit`` takes.

A function of static shapes that never reads an argument is exported without it: the
module's ``@main`` declares the arguments ``Exported.module_kept_var_idx`` lists, and
``Exported.call`` takes every argument (``Exported.in_avals``) and drops the others before
it calls the module. A rewritten module is called without ``Exported.call`` (``load``, the C
API, IREE), where a ``main`` of fewer arguments than ``jax.jit``'s refused the caller's
arguments ("main takes 1 arrays, got 2"). So the rewrite of an ``Exported`` (the object or
its ``serialize()`` bytes) puts each left-out argument back into ``main``'s signature, in
its place, with its type from ``in_avals`` and a fresh name, read by nothing. MLIR text does
not say what was left out: its ``main`` takes what the text declares.

The arguments of ``main`` that are ``Exported.call``'s are those without
``jax.global_constant`` (the platform index, ``platform_choice``) and without
``jax.token`` (the tokens of ordered effects, which ``Exported.call`` makes itself); they
are the kept ones, in order. A left-out argument goes before the first kept one after it,
or after the last kept one before it, or, when ``main`` keeps none, before the closing
parenthesis: each an insertion that touches no other edit's span (``platform_choice``
deletes a platform index up to the start of the argument that follows it).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..syntax.compact import compact
from ..syntax.source import Source
from .edits import Edit
from .naming import NamePool
from .platform_choice import PLATFORM_INDEX, Signature, signature_at

_NOT_CALLERS = ("jax.global_constant", "jax.token", "!stablehlo.token")


def kept_argument_edits(
    source: Source, types: Sequence[str], kept: Sequence[int], names_taken: set[str]
) -> list[Edit]:
    """The insertions that declare in ``main`` each argument of ``types`` (the MLIR type of
    each argument ``Exported.call`` takes, ``in_avals``) whose index is not in ``kept``
    (``module_kept_var_idx``); none when every one is kept, or when ``main``'s
    arguments are not as many as ``kept`` says (a module that is no such export's). Each
    new name is added to ``names_taken`` (SSA names without a
    leading digit: ``Scan.values``, which the planner names its constants apart from)."""
    if len(kept) == len(types):
        return []
    squeezed = compact(source.text, frozenset({PLATFORM_INDEX}))
    masked = squeezed.text
    main = _public_main(masked)
    if main is None:
        return []
    declared = [(start, end) for _, start, end in main.arguments]
    callers = [
        (start, end)
        for start, end in declared
        if not any(word in masked[start:end] for word in _NOT_CALLERS)
    ]
    if len(callers) != len(kept):
        return []
    names = NamePool(names_taken)
    edits: list[Edit] = []
    for index, type_ in enumerate(types):
        if index in kept:
            continue
        name = names.claim("unused_arg")
        names_taken.add(name)
        argument = f"%{name}: {type_}"
        after = [k for k, kept_index in enumerate(kept) if kept_index > index]
        if after:
            offset = squeezed.original(callers[after[0]][0])
            edits.append(Edit.insert(offset, f"{argument}, "))
        elif callers:
            edits.append(Edit.insert(squeezed.original(callers[-1][1]), f", {argument}"))
        else:
            joined = ", " if edits or _keeps_others(masked, declared) else ""
            edits.append(Edit.insert(squeezed.original(main.close_paren), f"{joined}{argument}"))
    return edits


def _keeps_others(masked: str, arguments: list[tuple[int, int]]) -> bool:
    """Whether ``main`` keeps an argument that is not the caller's: a token (a platform
    index is taken out)."""
    return any("jax.global_constant" not in masked[start:end] for start, end in arguments)


def _public_main(masked: str) -> Signature | None:
    """The header of ``func.func public @main``, or None."""
    keyword = masked.find("func.func")
    while keyword != -1:
        signature = signature_at(masked, keyword)
        if signature is not None and signature.public and signature.name == "main":
            return signature
        keyword = masked.find("func.func", keyword + 1)
    return None
