"""Every module exported by jax's own back-compat tests (shipped in the jax wheel) goes through.

Each one is rewritten (custom calls with compiler meaning are left alone), verifies in
jaxlib and keeps every other line; no construct jax emits gets a diagnostic. The CPU
modules (jaxlib's LAPACK calls, column-major) then pass IREE's input pipeline.
"""

from __future__ import annotations

import re

import pytest
from jax_corpus import corpus
from lossless import check_lossless
from mlir_tools import iree_input_pipeline, jaxlib_verify

import rewriter

pytestmark = pytest.mark.jax

CORPUS = corpus()
SDY_OP = re.compile(r"^[ \t]*(?:%[^=\n]*= )?sdy\.", re.MULTILINE)


def test_corpus_is_the_one_we_expect():
    assert len(CORPUS) >= 130
    assert sum(text.count("stablehlo.custom_call") for _, text in CORPUS) >= 150


@pytest.mark.parametrize("text", [t for _, t in CORPUS], ids=[n for n, _ in CORPUS])
def test_module_is_rewritten_and_verifies(text: str):
    result = rewriter.rewrite(text, filename="corpus.mlir")
    jaxlib_verify(result.text)
    removed, _ = check_lossless(text, result.text)
    assert removed == sum(call.status == "rewritten" for call in result.calls)


def test_every_lapack_call_is_rewritten_through_a_layout_wrapper():
    lapack = [(n, t) for n, t in CORPUS if "@lapack_" in t]
    assert len(lapack) >= 40
    for name, text in lapack:
        calls = rewriter.rewrite(text).calls
        assert calls and all(c.status == "rewritten" for c in calls), name
        assert any(c.wrapper for c in calls), name


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


@pytest.mark.slow
@pytest.mark.iree
def test_corpus_modules_reach_iree():
    assert len(IREE_CASES) >= 47  # the 44 CPU (LAPACK) modules among them


@pytest.mark.slow
@pytest.mark.iree
@pytest.mark.parametrize("text", [t for _, t in IREE_CASES], ids=[n for n, _ in IREE_CASES])
def test_iree_accepts_rewritten_corpus_module(text: str):
    assert iree_input_pipeline(text).returncode != 0
    after = iree_input_pipeline(rewriter.rewrite(text).text)
    assert after.returncode == 0, after.stderr
