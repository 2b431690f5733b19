"""Arguments at numpy's 16-byte alignment read in place (rewriter/iree/build.py's
ALIGNMENT_FLAG, BINDING_ALIGNMENT_KEY; rewriter/iree/calls.py): a module compile_module makes
assumes 16-byte aligned bindings and says so, load copies only what is not aligned as the
module assumes, and programs whose executables vectorize give jax's results on such
arguments."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from test_iree_calls import spy_on_arguments

import rewriter
from rewriter.iree import compile_module, load
from rewriter.iree.build import ALIGNMENT_FLAG

pytestmark = [pytest.mark.iree, pytest.mark.jax, pytest.mark.toolchain]


def at_offset(array: np.ndarray, offset: int) -> np.ndarray:
    """A copy of ``array`` starting ``offset`` bytes after a 64-byte boundary."""
    raw = np.empty(array.nbytes + 128, np.uint8)
    start = -raw.ctypes.data % 64 + offset
    copy = raw[start : start + array.nbytes].view(array.dtype).reshape(array.shape)
    copy[...] = array
    return copy


def spying(monkeypatch, path):
    """The module at ``path``, loaded with its arguments spied on (``spy_on_arguments``),
    and how many arguments a call of its ``main`` copies before IREE reads them."""
    given = spy_on_arguments(monkeypatch)
    program = load(path, imports={})

    def copies_made(arguments) -> int:
        given.clear()
        program.main(*arguments)
        return sum(kind == "copy" for kind, _ in given)

    return program, copies_made


def scaled(x, y):
    return x * 2.0 + y


def module_file(tmp_path, function, *inputs):
    path = tmp_path / "program.iree.mlir"
    path.write_text(rewriter.rewrite(rewriter.export(function, *inputs).text, abi="iree").text)
    return path


def test_arguments_at_16_bytes_are_read_in_place(tmp_path, monkeypatch):
    x, y = (np.arange(4096, dtype=np.float32) for _ in range(2))
    _, copies_made = spying(monkeypatch, module_file(tmp_path, scaled, x, y))
    assert copies_made([at_offset(x, 16), at_offset(y, 48)]) == 0
    assert copies_made([at_offset(x, 4), at_offset(y, 16)]) == 1


def test_a_module_compiled_for_64_byte_bindings_gets_copies(tmp_path, monkeypatch):
    x, y = (np.arange(4096, dtype=np.float32) for _ in range(2))
    path = module_file(tmp_path, scaled, x, y)
    vmfb = tmp_path / "program.vmfb"
    compile_module(path, vmfb, cache=False, extra_args=(f"{ALIGNMENT_FLAG}=64",))
    _, copies_made = spying(monkeypatch, vmfb)
    assert copies_made([at_offset(x, 16), at_offset(y, 16)]) == 2
    assert copies_made([at_offset(x, 0), at_offset(y, 0)]) == 0


def test_a_module_with_a_convolution_keeps_64_byte_bindings(tmp_path, monkeypatch):
    """Its code ran slower on 16-byte aligned buffers (rewriter/iree/build.py)."""
    x = np.ones((1, 16, 16, 16), np.float32)  # of 16 KB or more: read in place if it can be
    k = np.ones((3, 3, 16, 32), np.float32)

    def conv(a, b):
        return jax.lax.conv_general_dilated(
            a, b, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
        )

    _, copies_made = spying(monkeypatch, module_file(tmp_path, conv, x, k))
    assert copies_made([at_offset(x, 16), at_offset(k, 16)]) == 2


PROGRAMS = {
    "elementwise": (scaled, [(1000, 67), (1000, 67)]),
    "matmul": (lambda a, b: a @ b, [(96, 130), (130, 70)]),
    "softmax": (lambda a: jax.nn.softmax(a, axis=-1), [(33, 257)]),
    "reduce_window": (
        lambda a: jax.lax.reduce_window(a, -jnp.inf, jax.lax.max, (3, 3), (1, 1), "SAME"),
        [(130, 129)],
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_on_16_byte_aligned_arguments_give_jaxs_results(name, tmp_path, monkeypatch):
    function, shapes = PROGRAMS[name]
    rng = np.random.default_rng(3)
    inputs = [rng.normal(size=shape).astype(np.float32) for shape in shapes]
    program, copies_made = spying(monkeypatch, module_file(tmp_path, function, *inputs))
    shifted = [at_offset(a, 16) for a in inputs]
    assert copies_made(shifted) == 0
    got = program.main(*shifted)
    expected = np.asarray(jax.jit(function)(*inputs))
    np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-5)
