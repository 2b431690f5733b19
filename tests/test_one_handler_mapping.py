"""One ``{target: handler}`` mapping serves a program on both paths.

A target called with two signatures becomes two externs (``T`` and ``T_1``): the compiled
path serves both by the handler of ``T`` (``ffi_handlers``), and ``rewriter.iree.load``
serves each import by its target too (``imports``). A mapping with more targets than a
program calls is taken by both. Real programs: ``jnp.linalg.cholesky`` on a 3x3 and a 4x4
matrix with jaxlib's LAPACK handlers, and the JAX FFI tutorial's ``rms_norm`` on two shapes.
"""

from __future__ import annotations

import ctypes

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from kernel_library import BRIDGE_SAMPLES, build_handler_library

import rewriter
from rewriter.compile import LoadError, jaxlib_handlers

pytestmark = [
    pytest.mark.toolchain,
    pytest.mark.toolchain("gcc", "g++"),
    pytest.mark.iree,
    pytest.mark.jax,
    pytest.mark.slow,
]

TARGET = "rms_norm_two_shapes"  # the tutorial's handler, under a name no other test uses


def rms_norm(x):
    return jax.ffi.ffi_call(TARGET, jax.ShapeDtypeStruct(x.shape, x.dtype))(x, eps=np.float32(1e-5))


def two_rms_norms(a, b):
    return rms_norm(a), rms_norm(b)


def two_choleskys(a, b):
    return jnp.linalg.cholesky(a), jnp.linalg.cholesky(b)


def spd(n: int, seed: int) -> np.ndarray:
    a = np.random.default_rng(seed).standard_normal((n, n)).astype(np.float32)
    return a @ a.T + n * np.eye(n, dtype=np.float32)


CHOLESKY_INPUTS = (spd(3, 1), spd(4, 2))
RMS_INPUTS = (
    np.random.default_rng(3).standard_normal((4, 16)).astype(np.float32),
    np.random.default_rng(4).standard_normal((2, 3, 8)).astype(np.float32),
)


@pytest.fixture(scope="module")
def tutorial(tmp_path_factory):
    """The tutorial's handler library, its handler registered with JAX under TARGET."""
    library = build_handler_library(
        BRIDGE_SAMPLES / "rms_norm.cc", tmp_path_factory.mktemp("tutorial") / "librms.so"
    )
    handler = ctypes.CDLL(str(library)).RmsNorm
    jax.ffi.register_ffi_target(TARGET, jax.ffi.pycapsule(handler), platform="cpu")
    return handler


@pytest.fixture(scope="module")
def programs(tmp_path_factory, tutorial):
    """Each program exported, compiled with the bridge and compiled for IREE."""
    from rewriter.compile import compile_module
    from rewriter.iree import compile_module as compile_vmfb

    folder = tmp_path_factory.mktemp("one-mapping")
    built = {}
    for name, function, inputs in [
        ("cholesky", two_choleskys, CHOLESKY_INPUTS),
        ("rms", two_rms_norms, RMS_INPUTS),
    ]:
        original = rewriter.export(function, *inputs).original
        library = folder / f"lib{name}.so"
        compile_module(rewriter.rewrite(original).text, library, ffi_bridge=True)
        source = folder / f"{name}.iree.mlir"
        source.write_text(rewriter.rewrite(original, abi="iree").text)
        vmfb = folder / f"{name}.vmfb"
        _, signatures = compile_vmfb(source, vmfb)
        built[name] = (library, vmfb, [s.name for s in signatures], function, inputs)
    return built


def assert_matches_jax(got, function, inputs, rtol):
    expected = jax.jit(function)(*inputs)
    assert len(got) == len(expected)
    for one, other in zip(got, expected, strict=True):
        np.testing.assert_allclose(one, np.asarray(other), rtol=rtol, atol=0)


def test_a_target_with_two_signatures_makes_two_imports(programs):
    assert programs["cholesky"][2] == ["lapack_spotrf_ffi", "lapack_spotrf_ffi_1"]
    assert programs["rms"][2] == [TARGET, f"{TARGET}_1"]


@pytest.mark.parametrize("name", ["cholesky", "rms"])
def test_one_mapping_serves_both_paths(programs, tutorial, name):
    """The same dict, jaxlib's handlers and the tutorial's, for both programs and paths."""
    from rewriter.compile import load as load_compiled
    from rewriter.iree import load as load_iree

    handlers = {**jaxlib_handlers(), TARGET: jax.ffi.pycapsule(tutorial)}
    library, vmfb, _, function, inputs = programs[name]
    rtol = 1e-5 if name == "cholesky" else 0  # the tutorial's handler: bit for bit
    assert_matches_jax(
        load_compiled(library, ffi_handlers=handlers).main(*inputs), function, inputs, rtol
    )
    assert_matches_jax(load_iree(vmfb, imports=handlers).main(*inputs), function, inputs, rtol)


def test_jaxlib_serves_both_signatures_of_cholesky(programs):
    from rewriter.compile import load as load_compiled
    from rewriter.iree import load as load_iree

    library, vmfb, _, function, inputs = programs["cholesky"]
    got = load_compiled(library, ffi_handlers="jaxlib").main(*inputs)
    assert_matches_jax(got, function, inputs, 1e-5)
    spotrf = jaxlib_handlers()["lapack_spotrf_ffi"]
    for imports in (
        {"lapack_spotrf_ffi": spotrf},
        {"lapack_spotrf_ffi_1": spotrf, "lapack_spotrf_ffi": spotrf},
    ):
        assert_matches_jax(load_iree(vmfb, imports=imports).main(*inputs), function, inputs, 1e-5)


def test_one_target_takes_one_handler(programs, tutorial):
    from rewriter.iree import load as load_iree

    _, vmfb, _, _, _ = programs["rms"]
    other = jaxlib_handlers()["lapack_spotrf_ffi"]  # a handler, of another target
    with pytest.raises(LoadError, match=rf"ffi\.{TARGET}_1 calls the target {TARGET}, which "):
        load_iree(vmfb, imports={TARGET: jax.ffi.pycapsule(tutorial), f"{TARGET}_1": other})


def test_a_missing_jaxlib_target_suggests_jaxlib_on_both_paths(programs):
    from rewriter.compile import load as load_compiled
    from rewriter.iree import load as load_iree

    library, vmfb, _, _, _ = programs["cholesky"]
    with pytest.raises(LoadError) as error:
        load_compiled(
            library, ffi_handlers={"lapack_dpotrf_ffi": jaxlib_handlers()["lapack_dpotrf_ffi"]}
        )
    assert "calls the XLA FFI target lapack_spotrf_ffi but no handler was given" in str(error.value)
    assert "(jaxlib's CPU handlers serve lapack_spotrf_ffi: ffi_handlers='jaxlib'" in str(
        error.value
    )
    assert "given for targets it does not call: lapack_dpotrf_ffi" in str(error.value)
    with pytest.raises(LoadError) as error:
        load_iree(vmfb, imports={})
    assert str(error.value).startswith(
        f"{vmfb}: no implementation for ffi.lapack_spotrf_ffi (target lapack_spotrf_ffi), "
        "ffi.lapack_spotrf_ffi_1 (target lapack_spotrf_ffi) (jaxlib's CPU handlers serve "
        "lapack_spotrf_ffi: imports=rewriter.compile.jaxlib_handlers())"
    )
