"""FFI calls compiled into dispatches that call their XLA FFI handler from the executable
(rewriter/iree/dispatches.py), through the executable plugin (abi/iree_ffi_plugin.c).

The samples run as in tests/test_iree_ffi_handlers.py, compiled with ``ffi_dispatch``:
the same numbers as jax.jit, bit for bit where the VM imports give them; no call enters
Python (the bridge's Python server of VM imports is never asked for one), and the plugin
resolves every dispatched import. What a dispatch cannot be stays a VM import.
"""

from __future__ import annotations

import ctypes

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
from rewriter.iree import LoadError, compile_module, load, plugin, read_vmfb
from rewriter.iree import ffi_handlers as ffi_handlers_module
from rewriter.iree.dispatches import why_not
from rewriter.plan.ffi_facts import parse_facts

pytestmark = [
    pytest.mark.toolchain,
    pytest.mark.toolchain("gcc", "g++"),
    pytest.mark.iree,
    pytest.mark.jax,
    pytest.mark.slow,
]


@pytest.fixture(scope="module")
def rewritten(tmp_path_factory):
    """A sample (or MLIR text) rewritten with --abi iree: the .iree.mlir path."""

    def get(name: str, text: str | None = None):
        folder = tmp_path_factory.mktemp(f"iree-dispatch-{name}")
        original = text if text is not None else (SAMPLES / name / f"{name}.mlir").read_text()
        path = folder / f"{name}.iree.mlir"
        path.write_text(rewriter.rewrite(original, abi="iree").text)
        return path

    return get


@pytest.fixture(scope="module")
def capsules(kernel_library):
    library = ctypes.CDLL(str(kernel_library))
    return {
        target: jax.ffi.pycapsule(getattr(library, symbol)) for target, symbol in HANDLERS.items()
    }


@pytest.fixture
def no_python_imports(monkeypatch):
    """Fails a test in which an FFI import is served through Python (a VM import)."""
    served: list[str] = []
    original = ffi_handlers_module.FfiBridge.serve

    def serve(self, signature, device):
        served.append(signature.name)
        return original(self, signature, device)

    monkeypatch.setattr(ffi_handlers_module.FfiBridge, "serve", serve)
    return served


def dispatched_vmfb(path, tmp_path):
    vmfb = tmp_path / f"{path.stem}.vmfb"
    compile_module(path, vmfb, ffi_dispatch=True)
    return vmfb


@pytest.mark.parametrize("name", sorted(ROUND_TRIP))
def test_dispatched_ffi_calls_agree_with_jax(
    name, rewritten, capsules, tmp_path, no_python_imports
):
    function_name, shapes = ROUND_TRIP[name]
    function = getattr(sample(name), function_name)
    vmfb = dispatched_vmfb(rewritten(name), tmp_path)
    signatures = read_vmfb(vmfb)
    assert signatures and all(s.dispatch for s in signatures)
    imports = {s.name: capsules[parse_facts(s.ffi_facts).target] for s in signatures}
    before = plugin.resolved_count()
    module = load(vmfb, imports=imports)
    assert plugin.resolved_count() - before >= len(signatures)
    for seed in range(3):
        inputs = [np.random.default_rng(seed).normal(size=s).astype(np.float32) for s in shapes]
        assert_all_agree(module.main(*inputs), jax.jit(function)(*inputs))
    assert no_python_imports == []


def test_a_chain_of_calls_is_bitwise_jax_and_never_enters_python(
    rewritten, capsules, no_python_imports
):
    kernels = sample("two_targets")

    def chain(x):
        for _ in range(20):
            x = kernels.offset(kernels.scale(x, 1.01), 0.1)
        return x

    x = np.random.default_rng(4).normal(size=16).astype(np.float32)
    path = rewritten("chain", rewriter.export(chain, x).original)
    module = load(path, imports=capsules)  # a .mlir: load compiles the calls as dispatches
    got = module.main(x)
    assert got.tobytes() == np.asarray(jax.jit(chain)(x)).tobytes()
    assert no_python_imports == []


def routed_dispatches(rewritten, name: str, function, *arguments) -> int:
    """How many dispatches the FFI calls of ``function`` become (every call routed)."""
    from iree.compiler import ir

    from rewriter.iree.dispatches import route_ffi_to_dispatches
    from rewriter.iree.signatures import signatures_of

    text = rewritten(name, rewriter.export(function, *arguments).original).read_text()
    with ir.Context() as context:
        context.allow_unregistered_dialects = True
        module = ir.Module.parse(text)
        signatures = route_ffi_to_dispatches(module, signatures_of(module), True)
        routed = str(module)
    assert all(s.dispatch for s in signatures)
    # A run's dispatch, or a call left alone (the body of @ffi.S, one dispatch, inlined).
    return routed.count("flow.dispatch @rw_ffi_run") + routed.count("call @ffi.")


@pytest.mark.parametrize(("calls", "dispatches"), [(31, 1), (32, 2), (40, 2), (70, 3)])
def test_a_chain_of_calls_is_a_few_dispatches(rewritten, calls, dispatches):
    """A chain binds its input once and each call's result; IREE's runtime takes 32
    bindings a dispatch: 31 calls are one dispatch."""
    kernels = sample("two_targets")

    def chain(x):
        for index in range(calls):
            x = kernels.offset(x, 0.1) if index % 2 else kernels.scale(x, 1.01)
        return x

    x = np.zeros(16, np.float32)
    assert routed_dispatches(rewritten, f"chain_{calls}", chain, x) == dispatches


def scale_each(*xs):
    kernels = sample("two_targets")
    scaled = [kernels.scale(x, 1.0 + i / 8) for i, x in enumerate(xs)]
    return sum(scaled[1:], scaled[0])


def test_calls_on_many_arguments_stay_within_the_runtimes_bindings(
    rewritten, capsules, no_python_imports
):
    """20 calls in a row, each on an argument of its own: 40 bindings, more than the 32
    IREE's runtime takes a dispatch ("binding count 40 > 32" when the module is loaded),
    so two dispatches, and the numbers of jax."""
    xs = [np.random.default_rng(i).normal(size=8).astype(np.float32) for i in range(20)]
    assert routed_dispatches(rewritten, "scale_each_count", scale_each, *xs) == 2
    path = rewritten("scale_each", rewriter.export(scale_each, *xs).original)
    module = load(path, imports=capsules)
    assert module.main(*xs).tobytes() == np.asarray(jax.jit(scale_each)(*xs)).tobytes()
    assert no_python_imports == []


def test_the_vm_import_path_is_still_taken_for_python_callables(
    rewritten, kernel_library, no_python_imports
):
    path = rewritten("two_targets")
    module = load(path, imports={"scale": lambda x, f: x * f, "offset": lambda x, d: x + d})
    x = np.arange(6, dtype=np.float32)
    np.testing.assert_allclose(module.main(x), np.asarray(jax.jit(sample("two_targets").f)(x)))


def test_handler_error_in_a_dispatch_is_raised_with_its_message(rewritten, tmp_path):
    checks = ctypes.CDLL(
        str(build_handler_library(BRIDGE_SAMPLES / "checks.cc", tmp_path / "c.so"))
    )

    def checked_sqrt(x):
        return jax.ffi.ffi_call("checked_sqrt", jax.ShapeDtypeStruct(x.shape, x.dtype))(x)

    def fourth_root(x):  # two calls in a row: one dispatch making both
        return checked_sqrt(checked_sqrt(x))

    capsule = jax.ffi.pycapsule(checks.CheckedSqrt)
    x = np.array([4.0, -1.0, 9.0], np.float32)
    for function, good, expected in (
        (checked_sqrt, [4.0, 1.0, 9.0], [2, 1, 3]),
        (fourth_root, [16.0, 1.0, 81.0], [2, 1, 3]),
    ):
        path = rewritten(function.__name__, rewriter.export(function, x).original)
        module = load(path, imports={"checked_sqrt": capsule})
        with pytest.raises(HandlerError, match="checked_sqrt: element 1 is negative"):
            module.main(x)
        np.testing.assert_array_equal(module.main(np.array(good, np.float32)), expected)


def test_jaxlib_cholesky_in_a_dispatch_matches_the_vm_import(rewritten, tmp_path):
    """Byte attributes (``uplo``) widened to i32 for the dispatch, two results."""
    a = np.random.default_rng(3).standard_normal((4, 4)).astype(np.float32)
    a = a @ a.T + 4 * np.eye(4, dtype=np.float32)
    text = jax.export.export(jax.jit(jnp.linalg.cholesky))(a).mlir_module()
    path = rewritten("cholesky", text)
    handlers = jaxlib_handlers()
    vmfb = dispatched_vmfb(path, tmp_path)
    assert all(s.dispatch for s in read_vmfb(vmfb))
    as_imports = tmp_path / "imports.vmfb"
    compile_module(path, as_imports)
    dispatched = load(vmfb, imports=handlers)
    imported = load(as_imports, imports=handlers)
    assert dispatched.main(a).tobytes() == imported.main(a).tobytes()
    # Not positive definite: the 0-d result `info` is nonzero, the lower triangle NaN.
    b = -a
    expected = np.asarray(jax.jit(jnp.linalg.cholesky)(b))
    assert np.isnan(expected[np.tril_indices(4)]).all()
    assert dispatched.main(b).tobytes() == expected.tobytes()


def test_a_dispatched_call_needs_an_xla_ffi_handler(rewritten, tmp_path):
    vmfb = dispatched_vmfb(rewritten("two_targets"), tmp_path)
    with pytest.raises(LoadError, match="only an XLA FFI handler can serve"):
        load(vmfb, imports={"scale": lambda x, f: x * f, "offset": lambda x, d: x + d})


def test_calls_a_dispatch_cannot_make_stay_imports(rewritten, tmp_path):
    for name in ("side_effect", "dynamic_shape"):
        vmfb = dispatched_vmfb(rewritten(name), tmp_path)
        signatures = read_vmfb(vmfb)
        assert signatures and not any(s.dispatch for s in signatures)
        assert all(why_not(s) for s in signatures)


def test_side_effect_and_dynamic_shapes_still_run_from_a_mlir(rewritten, capsules, kernel_library):
    """Loaded from .mlir with handlers: the calls that cannot be dispatches stay imports."""
    x = np.random.default_rng(1).normal(size=(7, 8)).astype(np.float32)
    module = load(rewritten("dynamic_shape"), imports=capsules)
    got = module.main(x)
    assert got.tobytes() == np.asarray(jax.jit(sample("dynamic_shape").row_scale)(x)).tobytes()
    counter = ctypes.CDLL(str(kernel_library))
    counter.count_calls_value.restype = ctypes.c_int64
    counter.count_calls_reset()
    module = load(rewritten("side_effect"), imports=capsules)
    for _ in range(4):
        module.main(np.array([1.0, -2.5, 4.0], np.float32))
    assert counter.count_calls_value() == 4 * 3


FALLBACK = """
import sys
import iree.runtime as rt
import numpy as np
rt.Config("local-sync")  # the driver exists before load can name the plugin
from rewriter.compile import jaxlib_handlers
from rewriter.iree import LoadError, load
a = np.load(sys.argv[3])
got = load(sys.argv[1], imports=jaxlib_handlers(), driver="local-sync").main(a)
print(np.asarray(got).tobytes().hex())
try:
    load(sys.argv[2], imports=jaxlib_handlers(), driver="local-sync")
except LoadError as error:
    print(error)
"""


def test_a_driver_made_before_load_serves_ffi_calls_as_imports(rewritten, tmp_path):
    """IREE reads --executable_plugin when it creates a driver: one made earlier lacks the
    plugin, so a .mlir's calls stay imports and a .vmfb with dispatches is refused."""
    import subprocess
    import sys

    a = np.random.default_rng(3).standard_normal((4, 4)).astype(np.float32)
    a = a @ a.T + 4 * np.eye(4, dtype=np.float32)
    np.save(tmp_path / "a.npy", a)
    text = jax.export.export(jax.jit(jnp.linalg.cholesky))(a).mlir_module()
    path = rewritten("cholesky_fallback", text)
    vmfb = dispatched_vmfb(path, tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", FALLBACK, str(path), str(vmfb), str(tmp_path / "a.npy")],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = done.stdout.splitlines()
    expected = np.asarray(jax.jit(jnp.linalg.cholesky)(a))
    assert lines[0] == expected.tobytes().hex()
    assert "are compiled as dispatches, but the driver local-sync was created before" in lines[1]
