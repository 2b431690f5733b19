"""FFI adapters come from the rewrite's reports: the same C as reading the descriptions back
from the rewritten text, for every sample and every module of jax's own export corpus."""

from __future__ import annotations

from pathlib import Path

import pytest
from jax_corpus import corpus

import rewriter
from rewriter.emit.ffi_adapters import adapters_source, externs_in, externs_of_rewrite
from rewriter.syntax.diagnostics import RewriteError

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
SAMPLE_FILES = sorted(SAMPLES.glob("*/*.mlir"))


def _from_text(text: str, filename: str) -> str:
    """The adapters as read back from the rewritten text, as ``externs_in`` reads them."""
    return adapters_source(externs_in(rewriter.rewrite(text, filename=filename).text), filename)


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.relative_to(SAMPLES).as_posix())
def test_adapters_of_samples_are_those_of_the_rewritten_text(path):
    text = path.read_text()
    assert rewriter.emit_ffi_adapters(text, filename=path.name) == _from_text(text, path.name)


def test_adapters_of_jax_corpus_are_those_of_the_rewritten_text():
    compared = described = 0
    for name, text in corpus():
        try:
            result = rewriter.rewrite(text, filename=name)
        except RewriteError:
            continue  # a module the rewrite refuses has no adapters either way
        externs = externs_of_rewrite(result.calls, result.original)
        assert externs == externs_in(result.text), name
        compared += 1
        described += len(externs)
    assert compared > 100 and described > 50, (compared, described)


def test_an_extern_already_declared_follows_the_new_ones():
    """A module with @scale rewritten already and @offset still a custom call: the new
    extern's adapter comes first, as its declaration does in the rewritten text."""
    original = (SAMPLES / "two_targets" / "two_targets.mlir").read_text()
    partly = rewriter.rewrite(original, targets="scale").text
    result = rewriter.rewrite(partly)
    externs = externs_of_rewrite(result.calls, result.original)
    assert [extern.symbol for extern in externs] == ["offset", "scale"]
    assert externs == externs_in(result.text)
