"""A module exported with symbolic sizes checks jax's shape assertions before it reads an
argument (rewriter/compile/shape_assertions.py): arguments of one symbol of different
sizes, or sizes that break a constraint (``b >= 2``), stop the call with jax's message.
IREE's pipeline dropped the assertions, and the compiled code read past an argument.

On the IREE path the call raises ``RuntimeError``. On the compiled path ``load``'s function
raises ``ValueError`` for sizes of one symbol that differ (``Entry.shared_sizes``, the C
API's check) before the call; for a constraint, the compiled code prints the message and
aborts the process (run in a child process here), as a C ``assert`` does."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths
from jax import export, lax

import rewriter
from rewriter.compile.shape_assertions import checked_shape_assertions

ROOT = Path(__file__).resolve().parent.parent
(SIZE,) = export.symbolic_shape("b")
SERIES = jax.ShapeDtypeStruct((SIZE,), np.float32)
AT_LEAST_TWO = jax.ShapeDtypeStruct(export.symbolic_shape("b", constraints=["b >= 2"]), np.float32)


def added(x, y):
    return x + y


def two_largest(x):
    return lax.top_k(x, 2)[0]


CASES = {  # name: (program, shapes, good inputs, inputs that break an assertion, message)
    "sizes_of_one_symbol": (
        added,
        [SERIES, SERIES],
        [np.ones(3, np.float32), np.ones(3, np.float32)],
        [np.ones(5, np.float32), np.ones(3, np.float32)],
        "Found inconsistency between dimension size args[1].shape[0]",
    ),
    "a_constraint": (
        two_largest,
        [AT_LEAST_TWO],
        [np.arange(4, dtype=np.float32)],
        [np.ones(1, np.float32)],
        "Input shapes do not match the symbolic shape constraint b >= 2",
    ),
}


def test_every_shape_assertion_becomes_a_check():
    changed, text = applied(checked_shape_assertions, two_largest, AT_LEAST_TWO)
    assert changed == 2 and "shape_assertion" not in text  # b >= 1 and b >= 2
    assert text.count("cf.assert") == 2
    assert applied(checked_shape_assertions, two_largest, np.ones(3, np.float32))[0] == 0


@on_both_paths
@pytest.mark.parametrize("name", CASES)
def test_inputs_that_break_an_assertion_stop_the_call(name, path, tmp_path):
    program, shapes, good, bad, message = CASES[name]
    text = rewriter.export(program, *shapes).text
    main = main_on(path, text, tmp_path)
    np.testing.assert_array_equal(main(*good), jax.jit(program)(*good))
    if path == "iree":
        with pytest.raises(RuntimeError, match=re.escape(message)):
            main(*bad)
        return
    if name == "sizes_of_one_symbol":
        with pytest.raises(ValueError, match="both are JAX's dimension variable b"):
            main(*bad)
        return
    arrays = tmp_path / "bad.npz"
    np.savez(arrays, *bad)
    call = (
        "import numpy as np, sys; from rewriter.compile import load; "
        f"given = np.load({str(arrays)!r}); "
        f"load({str(tmp_path / 'lib.so')!r}).main(*[given[k] for k in given.files]); "
        "print('returned')"
    )
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", call], capture_output=True, text=True, env=environment
    )
    assert done.returncode == -signal.SIGABRT, done
    assert message in done.stdout + done.stderr and "returned" not in done.stdout
