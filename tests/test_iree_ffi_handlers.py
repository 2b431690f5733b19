"""IREE imports served by XLA FFI handlers: the third kind of ``rewriter.iree.load`` imports.

The samples, rewritten with ``--abi iree`` and compiled to a .vmfb (whose import metadata
keeps each extern's ``rewriter.xla_ffi`` description), run in ``iree.runtime`` with every
import served by the very FFI handler JAX calls: ``jax.ffi.pycapsule`` of the kernel
library's handler symbols, through the adapters and ``abi/xla_ffi_bridge.c``. No
``_mlir_ciface_`` of the kernel library is used.
"""

from __future__ import annotations

import ctypes
import functools
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from kernel_library import (
    BRIDGE_SAMPLES,
    HANDLERS,
    ROUND_TRIP,
    SAMPLES,
    assert_all_agree,
    build_handler_library,
    sample,
)

import rewriter
from rewriter.compile import HandlerError, jaxlib_handlers
from rewriter.iree import LoadError, compile_module, load, read_vmfb
from rewriter.plan.ffi_facts import parse_facts

pytestmark = [
    pytest.mark.toolchain,
    pytest.mark.toolchain("gcc", "g++"),
    pytest.mark.iree,
    pytest.mark.jax,
    pytest.mark.slow,
]


@pytest.fixture(scope="module")
def vmfb(tmp_path_factory):
    cache = {}

    def get(name: str, text: str | None = None):
        if name not in cache:
            folder = tmp_path_factory.mktemp(f"iree-ffi-{name}")
            original = text if text is not None else (SAMPLES / name / f"{name}.mlir").read_text()
            rewritten = folder / f"{name}.iree.mlir"
            rewritten.write_text(rewriter.rewrite(original, abi="iree").text)
            compile_module(rewritten, folder / f"{name}.vmfb")
            cache[name] = folder / f"{name}.vmfb"
        return cache[name]

    return get


@pytest.fixture(scope="module")
def capsules(kernel_library):
    library = ctypes.CDLL(str(kernel_library))
    return {
        target: jax.ffi.pycapsule(getattr(library, symbol)) for target, symbol in HANDLERS.items()
    }


def served_by_handlers(path, capsules):
    """Every import served by the handler registered (in JAX) for its target."""
    imports = {
        signature.name: capsules[parse_facts(signature.ffi_facts).target]
        for signature in read_vmfb(path)
    }
    return load(path, imports=imports)


@pytest.mark.parametrize("name", sorted(ROUND_TRIP))
def test_ffi_handlers_serve_iree_imports(name, vmfb, capsules):
    function_name, shapes = ROUND_TRIP[name]
    function = getattr(sample(name), function_name)
    module = served_by_handlers(vmfb(name), capsules)
    for seed in range(3):
        inputs = [np.random.default_rng(seed).normal(size=s).astype(np.float32) for s in shapes]
        assert_all_agree(module.main(*inputs), jax.jit(function)(*inputs))


def test_every_attribute_kind_reaches_the_handler_in_iree(vmfb, capsules):
    module = sample("attribute_kernel")
    x = np.array([0.1, -3.75], np.float32)
    with jax.enable_x64(True):
        run = jax.jit(functools.partial(module.attr_kernel, attributes=module.XLA_ATTRIBUTES))
        expected = np.asarray(run(x))
    got = served_by_handlers(vmfb("attribute_kernel"), capsules).main(x)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("batch", [1, 7])
def test_shape_polymorphic_import_served_by_its_handler(vmfb, capsules, batch):
    x = np.random.default_rng(batch).normal(size=(batch, 8)).astype(np.float32)
    expected = np.asarray(jax.jit(sample("dynamic_shape").row_scale)(x))
    got = served_by_handlers(vmfb("dynamic_shape"), capsules).main(x)
    assert got.tobytes() == expected.tobytes()


def test_handler_error_in_iree_is_raised_with_its_message(tmp_path, vmfb):
    checks = ctypes.CDLL(
        str(build_handler_library(BRIDGE_SAMPLES / "checks.cc", tmp_path / "c.so"))
    )
    capsule = jax.ffi.pycapsule(checks.CheckedSqrt)

    def checked_sqrt(x):
        return jax.ffi.ffi_call("checked_sqrt", jax.ShapeDtypeStruct(x.shape, x.dtype))(x)

    x = np.array([4.0, -1.0, 9.0], np.float32)
    path = vmfb("checked_sqrt", rewriter.export(checked_sqrt, x).original)
    module = load(path, imports={"checked_sqrt": capsule})
    with pytest.raises(HandlerError, match="checked_sqrt: element 1 is negative"):
        module.main(x)
    np.testing.assert_array_equal(module.main(np.array([4.0, 1.0, 9.0], np.float32)), [2, 1, 3])


def test_jaxlib_cholesky_runs_in_iree(vmfb):
    """jaxlib's LAPACK handler, column-major layout and all, serving an IREE import."""
    a = np.random.default_rng(3).standard_normal((4, 4)).astype(np.float32)
    a = a @ a.T + 4 * np.eye(4, dtype=np.float32)
    text = jax.export.export(jax.jit(jnp.linalg.cholesky))(a).mlir_module()
    path = vmfb("cholesky", text)
    handlers = jaxlib_handlers()
    imports = {s.name: handlers[parse_facts(s.ffi_facts).target] for s in read_vmfb(path)}
    got = load(path, imports=imports).main(a)
    np.testing.assert_allclose(got, np.asarray(jax.jit(jnp.linalg.cholesky)(a)), rtol=1e-5, atol=0)


def test_handler_for_an_import_without_a_description_is_refused(tmp_path):
    """A legacy custom call (string backend_config) is no FFI call: no description."""
    text = (
        "module {\n  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
        '    %0 = stablehlo.custom_call @legacy(%arg0) {backend_config = "cfg"} : '
        "(tensor<4xf32>) -> tensor<4xf32>\n    return %0 : tensor<4xf32>\n  }\n}\n"
    )
    rewritten = tmp_path / "legacy.iree.mlir"
    rewritten.write_text(rewriter.rewrite(text, abi="iree").text)
    with pytest.raises(LoadError, match="has no rewriter.xla_ffi description"):
        load(rewritten, imports={"legacy": jax.ffi.pycapsule(ctypes.CDLL(None).abort)})


def test_the_bridges_c_file_is_compiled_once_for_all_loads(vmfb, capsules, monkeypatch):
    """``abi/xla_ffi_bridge.c`` compiles alike for every load: the first one compiles it,
    and its object comes from the compile cache after; the adapters are compiled each time."""
    from rewriter.compile import toolchain

    compiled: list[str] = []
    together = toolchain._run_together

    def recorded(stage: str, commands: list[list[str]]) -> None:
        compiled.extend(Path(command[command.index("-c") + 1]).name for command in commands)
        together(stage, commands)

    monkeypatch.setattr(toolchain, "_run_together", recorded)
    path = vmfb("rms_norm")
    served_by_handlers(path, capsules)
    assert sorted(compiled) == ["ffi_adapters.c", "xla_ffi_bridge.c"]
    compiled.clear()
    module = served_by_handlers(path, capsules)
    assert compiled == ["ffi_adapters.c"]
    assert module is not None
