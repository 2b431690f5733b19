"""Arguments ``jax.export`` leaves out of ``main`` are declared again by the rewrite of an
``Exported`` (rewriter/plan/kept_arguments.py): ``main`` takes what ``jax.jit`` takes. A
function of static shapes that never reads an argument was exported without it, and both
paths refused the caller's arguments ("main takes 1 arrays, got 2")."""

from __future__ import annotations

import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import main_on, on_both_paths

import rewriter

pytestmark = pytest.mark.jax

X = np.arange(6, dtype=np.float32).reshape(2, 3)
V = np.linspace(-1, 1, 4, dtype=np.float32)
N = np.int32(7)
B = np.bool_(True)

# (function, arguments, main's signature after the rewrite, derived by hand: jax's
# signature with each argument it left out declared in its place, in order)
CASES = {
    "last": (
        lambda x, v: x + 1,
        (X, V),
        '@main(%arg0: tensor<2x3xf32> loc("x"), %unused_arg: tensor<4xf32>)',
    ),
    "first": (
        lambda v, x: x * 2,
        (V, X),
        '@main(%unused_arg: tensor<4xf32>, %arg0: tensor<2x3xf32> loc("x"))',
    ),
    "between": (
        lambda v, x, n, y, b: x * y,
        (V, X, N, X, B),
        '@main(%unused_arg: tensor<4xf32>, %arg0: tensor<2x3xf32> loc("x"), '
        '%unused_arg_1: tensor<i32>, %arg1: tensor<2x3xf32> loc("y"), '
        "%unused_arg_2: tensor<i1>)",
    ),
    "all": (
        lambda x, v: jnp.float32(2.5),
        (X, V),
        "@main(%unused_arg: tensor<2x3xf32>, %unused_arg_1: tensor<4xf32>)",
    ),
}


def signature(text: str) -> str:
    """``@main(...)`` of the module's public ``main``, up to its result types."""
    line = next(line for line in text.splitlines() if "func.func public @main(" in line)
    return line[line.index("@main(") : line.index(") -> ") + 1]


def exported(name: str, platforms: list[str] | None = None):
    function, arguments, _ = CASES[name]
    return jax.export.export(jax.jit(function), platforms=platforms)(*arguments)


@pytest.mark.parametrize("name", list(CASES))
def test_left_out_arguments_are_declared_in_their_place(name):
    export = exported(name)
    assert len(export.module_kept_var_idx) < len(export.in_avals)  # jax left some out
    assert signature(rewriter.rewrite(export).text) == CASES[name][2]
    serialized = bytes(export.serialize())
    assert signature(rewriter.rewrite(serialized).text) == CASES[name][2]
    assert signature(rewriter.export(CASES[name][0], *CASES[name][1]).text) == CASES[name][2]


@pytest.mark.parametrize("name", list(CASES))
def test_the_platform_index_goes_and_left_out_arguments_come(name):
    """Exported for the CPU and CUDA: ``main`` loses the platform index and gets the
    arguments back, the same signature as a CPU export's."""
    export = exported(name, ["cpu", "cuda"])
    assert "_platform_index" in export.mlir_module()
    got = signature(rewriter.rewrite(export).text)
    assert got == CASES[name][2].replace("%arg0:", "%arg1:").replace(
        '%arg1: tensor<2x3xf32> loc("y")', '%arg2: tensor<2x3xf32> loc("y")'
    )


def test_text_keeps_the_signature_it_declares():
    """MLIR text does not say what jax left out: its ``main`` is left as it is."""
    text = exported("last").mlir_module()
    assert signature(rewriter.rewrite(text).text) == '@main(%arg0: tensor<2x3xf32> loc("x"))'


def test_new_names_clash_with_no_name_of_the_module(tmp_path):
    """A module that names a value ``%unused_arg`` already: the new argument is named apart."""

    def function(x, v):
        return jnp.sin(x)

    text = rewriter.rewrite(exported("last")).text
    assert "%unused_arg:" in text
    export = jax.export.export(jax.jit(function))(X, V)
    source = export.mlir_module().replace("%0 =", "%unused_arg =").replace("%0 ", "%unused_arg ")
    from rewriter.plan.kept_arguments import kept_argument_edits
    from rewriter.syntax.scan import scan
    from rewriter.syntax.source import Source

    found = scan(Source(source))
    assert "unused_arg" in found.values
    types = ("tensor<2x3xf32>", "tensor<4xf32>")
    edits = kept_argument_edits(Source(source), types, (0,), found.values)
    assert [edit.text for edit in edits] == [", %unused_arg_1: tensor<4xf32>"]


def test_the_command_line_reads_them_from_serialized_exports(tmp_path):
    path = tmp_path / "program.bin"
    path.write_bytes(bytes(exported("between").serialize()))
    run = subprocess.run(
        [sys.executable, "-m", "rewriter", str(path)], capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    assert signature(run.stdout) == CASES["between"][2]


@on_both_paths
@pytest.mark.parametrize("name", list(CASES))
def test_main_takes_what_jax_jit_takes(name, path, tmp_path):
    function, arguments, _ = CASES[name]
    text = rewriter.export(function, *arguments).text
    expected = np.asarray(jax.jit(function)(*arguments))
    got = main_on(path, text, tmp_path)(*arguments)
    got = got[0] if isinstance(got, (tuple, list)) else got
    np.testing.assert_array_equal(np.asarray(got), expected)
    assert np.asarray(got).dtype == expected.dtype
