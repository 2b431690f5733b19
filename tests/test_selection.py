"""Rule 6, which calls are rewritten (``rewriter/plan/selection.py``): patterns, compiler
targets and the reasons a call is left alone, in the order the rule asks them."""

from __future__ import annotations

from fnmatch import fnmatchcase

import pytest
from planning_pairs import call_of

from rewriter.plan.selection import (
    CLI_WORDS,
    compiler_meaning,
    exact_pattern,
    patterns,
    skip_reason,
)


def test_patterns_read_a_string_as_one_pattern():
    assert patterns("rms_*", "targets") == ("rms_*",)
    assert patterns(["a", "b"], "targets") == ("a", "b")
    assert patterns(None, "skip") is None
    with pytest.raises(TypeError, match="skip takes glob patterns"):
        patterns([1], "skip")  # type: ignore[list-item]


def test_an_exact_pattern_matches_its_target_alone():
    """``*``, ``?`` and ``[`` are put in brackets, so each matches only itself."""
    assert exact_pattern("a*b?[c]") == "a[*]b[?][[]c]"
    assert fnmatchcase("a*b?[c]", exact_pattern("a*b?[c]"))
    assert not fnmatchcase("axbyc]", exact_pattern("a*b?[c]"))


def test_compiler_targets_are_not_user_kernels():
    assert compiler_meaning("Sharding") == "a sharding annotation"
    assert compiler_meaning("xla.sdy.manual") == "a sharding annotation"
    assert compiler_meaning("scale") is None


def test_skip_reasons_in_the_order_rule_6_asks_them():
    """A compiler target is left alone whatever --target says; then --target, then --skip."""
    call = call_of("%0 = stablehlo.custom_call @scale(%arg0) : (tensor<4xf32>) -> tensor<4xf32>")
    assert skip_reason(call, None, None) is None
    assert skip_reason(call, ["rms_*"], None) == "not matched by targets="
    assert skip_reason(call, ["sc*"], ["scale"]) == "matched by skip="
    assert skip_reason(call, ["rms_*"], None, words=CLI_WORDS) == "not matched by --target"
    assert skip_reason(call, ["sc*"], ["scale"], words=CLI_WORDS) == "matched by --skip"
    assert skip_reason(call, ["*"], None, target="Sharding") == (
        "target carries compiler meaning (a sharding annotation)"
    )
