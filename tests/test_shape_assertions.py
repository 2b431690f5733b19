"""A module exported with symbolic sizes checks jax's shape assertions before it reads an
argument (rewriter/compile/shape_assertions.py, shape_checks.py): arguments of one symbol
of different sizes, or sizes that break a constraint (``b >= 2``), stop the call with
jax's message. IREE's pipeline dropped the assertions, and the compiled code read past an
argument.

Both paths' functions raise ``ValueError``, as ``Exported.call`` does, with jax's own
message, its numbers in place, from the check that runs before the compiled code; the
compiled path's ``load`` compares the sizes of one symbol first (``Entry.shared_sizes``),
with a message of its own. The C API returns the same messages (test_c_api.py)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths
from jax import export, lax

import rewriter
from rewriter.compile.shape_assertions import checked_shape_assertions

(SIZE,) = export.symbolic_shape("b")
SERIES = jax.ShapeDtypeStruct((SIZE,), np.float32)
AT_LEAST_TWO = jax.ShapeDtypeStruct(export.symbolic_shape("b", constraints=["b >= 2"]), np.float32)


def added(x, y):
    return x + y


def two_largest(x):
    return lax.top_k(x, 2)[0]


def halves_added(x):
    return x.reshape(2, -1).sum(0)


EVEN = jax.ShapeDtypeStruct(export.symbolic_shape("2*n"), np.float32)

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
    # jax computes n of a size 2*n by calls of its @divmod: the check copies the calls (a
    # process abort on the compiled path, IREE's RuntimeError, without them)
    "a_size_of_two_n": (
        halves_added,
        [EVEN],
        [np.arange(6, dtype=np.float32)],
        [np.ones(5, np.float32)],
        "Division had remainder 1 when computing the value of 'n'",
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
    if name == "sizes_of_one_symbol" and path == "compile":
        with pytest.raises(ValueError, match="both are JAX's dimension variable b"):
            main(*bad)
        return
    with pytest.raises(ValueError) as raised:
        main(*bad)
    expected = exported_call_error(program, shapes, bad)
    assert str(raised.value) == f"main: {expected}" and message in expected


def exported_call_error(program, shapes, arguments) -> str:
    """What ``Exported.call`` raises for ``arguments``: jax's message, numbers in place."""
    exported = export.export(jax.jit(program))(*shapes)
    with pytest.raises(ValueError) as raised:
        exported.call(*arguments)
    return str(raised.value)


def several_constraints(x, y):
    return jnp.concatenate([x[:2], y[:3]]) * 2


SEVERAL = export.symbolic_shape("a, c", constraints=["a >= 2", "c >= 3", "a + c >= 7"])


@on_both_paths
@pytest.mark.parametrize(
    "sizes",
    [(1, 9), (5, 2), (3, 3), (4, 3)],
    ids=["first_constraint", "second", "a_sum_of_both", "none_broken"],
)
def test_the_first_broken_constraint_is_the_one_reported_with_its_numbers(sizes, path, tmp_path):
    shapes = [jax.ShapeDtypeStruct((size,), np.float32) for size in SEVERAL]
    arguments = [np.arange(n, dtype=np.float32) for n in sizes]
    text = rewriter.export(several_constraints, *shapes).text
    main = main_on(path, text, tmp_path)
    if sizes == (4, 3):
        np.testing.assert_array_equal(main(*arguments), several_constraints(*arguments))
        return
    with pytest.raises(ValueError) as raised:
        main(*arguments)
    expected = exported_call_error(several_constraints, shapes, arguments)
    assert str(raised.value) == f"main: {expected}"
