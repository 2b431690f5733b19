"""Every module exported by jax's own back-compat tests (shipped in the jax wheel) goes through.

Each one is either rewritten, and then verifies in jaxlib and keeps every other line, or
refused with a clean rule-7 diagnostic (non-default layouts, tuples, tokens); never a crash.
"""

from __future__ import annotations

import re

import pytest
from jax_corpus import corpus
from lossless import check_lossless
from mlir_tools import iree_input_pipeline, jaxlib_verify

import rewriter

CORPUS = corpus()
RULE_7 = re.compile(r"non-default layout|a tuple type|a token type")
SDY_OP = re.compile(r"^[ \t]*(?:%[^=\n]*= )?sdy\.", re.MULTILINE)


def test_corpus_is_the_one_we_expect():
    assert len(CORPUS) >= 130
    assert sum(text.count("stablehlo.custom_call") for _, text in CORPUS) >= 150


@pytest.mark.parametrize("text", [t for _, t in CORPUS], ids=[n for n, _ in CORPUS])
def test_module_is_rewritten_or_cleanly_refused(text: str):
    try:
        result = rewriter.rewrite(text, filename="corpus.mlir")
    except rewriter.RewriteError as error:
        for diagnostic in error.diagnostics:
            assert RULE_7.search(diagnostic.message), diagnostic.format()
            assert diagnostic.line >= 1 and diagnostic.column >= 1
            assert diagnostic.source_line in text
        return
    jaxlib_verify(result.text)
    removed, _ = check_lossless(text, result.text)
    assert removed == sum(call.status == "rewritten" for call in result.calls)


def _passes_iree_after_rewrite(text: str) -> bool:
    """Modules whose only obstacle for IREE was custom calls we rewrite."""
    try:
        result = rewriter.rewrite(text)
    except rewriter.RewriteError:
        return False
    all_rewritten = all(call.status == "rewritten" for call in result.calls)
    # IREE registers no Shardy dialect: modules with sdy ops fail there for that reason alone.
    return bool(result.calls) and all_rewritten and not SDY_OP.search(text)


IREE_CASES = [(n, t) for n, t in CORPUS if _passes_iree_after_rewrite(t)]


def test_some_corpus_modules_reach_iree():
    assert len(IREE_CASES) >= 3


@pytest.mark.parametrize("text", [t for _, t in IREE_CASES], ids=[n for n, _ in IREE_CASES])
def test_iree_accepts_rewritten_corpus_module(text: str):
    assert iree_input_pipeline(text).returncode != 0
    after = iree_input_pipeline(rewriter.rewrite(text).text)
    assert after.returncode == 0, after.stderr
