"""Scatters of a symbolic batch (the gradients of ``jnp.take_along_axis``, of an embedding
lookup and of a slice, and a whole training step) run on both paths and give
``jax.jit``'s numbers (rewriter/compile/dynamic_scatters.py): IREE lowers the first and
the third only so, and takes the embedding's itself."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, main_on, on_both_paths
from jax import export

import rewriter
from rewriter.compile.dynamic_scatters import dynamic_scatters

BATCH = export.symbolic_shape("b")[0]
SCORES = jax.ShapeDtypeStruct((BATCH, 11, 20), np.float32)
TOKENS = jax.ShapeDtypeStruct((BATCH, 7), np.int32)
FEATURES = jax.ShapeDtypeStruct((BATCH, 20), np.float32)
LABELS = jax.ShapeDtypeStruct((BATCH,), np.int32)
TABLE = jnp.linspace(-1.0, 1.0, 50 * 4, dtype=jnp.float32).reshape(50, 4)
WEIGHTS = jnp.linspace(-0.5, 0.5, 20 * 5, dtype=jnp.float32).reshape(20, 5)


def take_along_axis_gradient(x):
    """Two picks per row, often the same class twice (index 0 or 3): updates that meet."""
    picks = (x[..., :2] > 0).astype(jnp.int32) * 3
    return jax.grad(lambda z: jnp.sum(jnp.take_along_axis(z, picks, -1) * 1.5))(x)


def embedding_gradient(tokens):
    """Rows of the table read by tokens in range and past the end (clamped)."""
    return jax.grad(lambda table: jnp.sum(table[tokens] * jnp.arange(4.0)))(TABLE)


def slice_gradient(x):
    return jax.grad(lambda z: jnp.sum(z[:, :-1] * 2.0))(x)


def training_step(x, labels):
    """A softmax regression's cross-entropy with integer labels, its gradient and one step
    of gradient descent."""

    def loss(weights):
        scores = jax.nn.log_softmax(x @ weights)
        return -jnp.mean(jnp.take_along_axis(scores, labels[:, None], -1))

    value, gradient = jax.value_and_grad(loss)(WEIGHTS)
    return value, WEIGHTS - 0.1 * gradient


def sort_gradient(x):
    """The gradient of ``jnp.sort`` along the rows: a scatter at the sort's ``ui32``
    positions, along a batching dimension."""
    return jax.grad(lambda z: jnp.sum(jnp.sort(z, axis=-1) * jnp.arange(20.0)))(x)


PROGRAMS = [
    (take_along_axis_gradient, (SCORES,)),
    (sort_gradient, (FEATURES,)),
    (embedding_gradient, (TOKENS,)),
    (slice_gradient, (SCORES,)),
    (training_step, (FEATURES, LABELS)),
]


def arguments(shapes, batch: int) -> list[np.ndarray]:
    generator = np.random.default_rng(batch)
    made = []
    for shape in shapes:
        sizes = tuple(batch if not isinstance(d, int) else d for d in shape.shape)
        if shape.dtype == np.int32:
            top = 5 if len(sizes) == 1 else 60  # labels; tokens past the table's 50 rows
            made.append(generator.integers(0, top, size=sizes).astype(np.int32))
        else:
            made.append(generator.normal(size=sizes).astype(np.float32))
    return made


def test_each_form_changes_and_static_scatters_do_not():
    forms = {
        take_along_axis_gradient: "@rw_dynamic_scatter_0",  # along batching dimensions
        slice_gradient: "@rw_window_scatter_0",
        training_step: "@rw_dynamic_scatter_0",
    }
    for program, form in forms.items():
        changed, text = applied(dynamic_scatters, program, *dict(PROGRAMS)[program])
        assert changed == 1 and f"call {form}(" in text, program
    # IREE takes the embedding's gradient (a scatter with no batching dimensions) itself
    assert applied(dynamic_scatters, embedding_gradient, TOKENS)[0] == 0
    static = np.zeros((3, 11, 20), np.float32)
    assert applied(dynamic_scatters, take_along_axis_gradient, static)[0] == 0


@on_both_paths
@pytest.mark.parametrize(("program", "shapes"), PROGRAMS, ids=[p.__name__ for p, _ in PROGRAMS])
def test_scatters_of_a_symbolic_batch_give_jax_jits_numbers(program, shapes, path, tmp_path):
    main = main_on(path, rewriter.export(program, *shapes).text, tmp_path)
    for batch in (1, 3):
        inputs = arguments(shapes, batch)
        got, expected = main(*inputs), jax.jit(program)(*inputs)
        for one, reference in zip(jax.tree.leaves(got), jax.tree.leaves(expected), strict=True):
            assert np.shape(one) == np.shape(reference)
            # the scatters add in XLA's order; the training step's products and sums of
            # 20 terms in another: a few f32 ulps
            np.testing.assert_allclose(one, reference, rtol=1e-6, atol=1e-7)


FAR_OUT_OF_RANGE = """
import sys
sys.path[:0] = sys.argv[2:]
from pathlib import Path
import jax, numpy as np
import rewriter
from iree_fixes import main_on
import test_dynamic_scatters as t
main = main_on(sys.argv[1], rewriter.export(t.embedding_gradient, t.TOKENS).text, Path("."))
tokens = np.array([[3, 1_000_000, -1_000_000, 49, 50, 2**31 - 1, -2**31]] * 3, np.int32)
for _ in range(20):
    got = main(tokens)
np.testing.assert_array_equal(got, jax.jit(t.embedding_gradient)(tokens))
"""


@on_both_paths
def test_updates_far_out_of_range_are_dropped_not_written(path, tmp_path):
    """The embedding's gradient at tokens a million rows past the table (and before it):
    the scatter's indices of a symbolic batch are redirected into the padding
    (rewriter/compile/scatter_bounds.py), not written past the table's buffer, which
    crashed the process. In a process of its own, so that a crash is a failure here."""
    import subprocess
    import sys
    from pathlib import Path

    tests = Path(__file__).resolve().parent
    script = tmp_path / "far.py"
    script.write_text(FAR_OUT_OF_RANGE)
    run = subprocess.run(
        [sys.executable, str(script), path, str(tests), str(tests.parent)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr[-3000:]
