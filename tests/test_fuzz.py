"""A fixed-seed mutation fuzzing run: 20,000 mutated exports, only results or our diagnostics.

The same harness runs for hours with ``python -m fuzz.rewrite --count 0``.
"""

from __future__ import annotations

import pytest

from fuzz.rewrite import run

pytestmark = [pytest.mark.jax, pytest.mark.slow]


def test_twenty_thousand_mutated_inputs_never_crash():
    done, problems = run(seed=0, count=20_000, seconds=0, crashes=None)
    assert done == 20_000
    assert not problems, problems[0]
