"""One handler, two worlds: the XLA FFI handler JAX calls also serves the compiled module.

A module compiled with ``--ffi-bridge`` gets generated adapters (``_mlir_ciface_S``) that
rebuild an XLA FFI call frame and call the handler registered at load time, through the
plain-C host in ``abi/xla_ffi_bridge.c``. No hand-written ``_mlir_ciface_`` is involved:
the handler libraries here (``samples/ffi_bridge``) define none, and the sample kernels'
own entries are not linked.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from kernel_library import (
    BRIDGE_SAMPLES,
    HANDLERS,
    REPO,
    ROUND_TRIP,
    SAMPLES,
    assert_all_agree,
    build_handler_library,
    sample,
)
from mlir_tools import valgrind_environment

import rewriter
from rewriter.abi import bridge_dir
from rewriter.compile import HandlerError, LoadError, compile_module, load
from rewriter.compile.build import PORTABLE
from rewriter.emit.ffi_adapters import externs_in

pytestmark = [
    pytest.mark.toolchain,
    pytest.mark.toolchain("gcc", "g++", "nm"),
    pytest.mark.jax,
    pytest.mark.slow,
]

_REGISTERED: set[str] = set()


def register_once(target: str, function) -> None:
    """Register a handler with JAX for the life of the process (JAX keeps them)."""
    if target not in _REGISTERED:
        jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(function), platform="cpu")
        _REGISTERED.add(target)


@pytest.fixture(scope="module")
def handler_libraries(tmp_path_factory):
    folder = tmp_path_factory.mktemp("handlers")
    tutorial = build_handler_library(BRIDGE_SAMPLES / "rms_norm.cc", folder / "librms_norm.so")
    checks = build_handler_library(BRIDGE_SAMPLES / "checks.cc", folder / "libchecks.so")
    return tutorial, checks


def compile_with_cli(text: str, folder: Path, name: str, target_cpu: str = "native") -> Path:
    """Rewrite and compile as a user would: ``python -m rewriter``, then
    ``python -m rewriter.compile --ffi-bridge --target-cpu TARGET_CPU``; no kernel library
    is linked."""
    source = folder / f"{name}.mlir"
    source.write_text(text)
    rewritten = folder / f"{name}.rewritten.mlir"
    subprocess.run(
        [sys.executable, "-m", "rewriter", str(source), "-o", str(rewritten)],
        check=True,
        capture_output=True,
    )
    library = folder / f"lib{name}.so"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "rewriter.compile",
            str(rewritten),
            "-o",
            str(library),
            "--ffi-bridge",
            "--target-cpu",
            target_cpu,
        ],
        check=True,
        capture_output=True,
    )
    return library


def defined_symbols(library: Path) -> list[str]:
    listing = subprocess.run(
        ["nm", "-D", "--defined-only", str(library)], check=True, capture_output=True, text=True
    ).stdout
    return [line.split()[-1] for line in listing.splitlines()]


def tutorial_rms_norm(x):
    return jax.ffi.ffi_call("rms_norm_tutorial", jax.ShapeDtypeStruct(x.shape, x.dtype))(
        x, eps=np.float32(1e-5)
    )


@pytest.mark.parametrize("shape", [(4, 16), (2, 3, 8)])
def test_tutorial_handler_runs_in_jax_and_compiled_bitwise(tmp_path, handler_libraries, shape):
    tutorial_path, _ = handler_libraries
    tutorial = ctypes.CDLL(str(tutorial_path))
    register_once("rms_norm_tutorial", tutorial.RmsNorm)
    assert not [s for s in defined_symbols(tutorial_path) if s.startswith("_mlir_ciface_")]

    x = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    text = rewriter.export(tutorial_rms_norm, x).original
    library = compile_with_cli(text, tmp_path, "tutorial")
    module = load(library, ffi_handlers={"rms_norm_tutorial": jax.ffi.pycapsule(tutorial.RmsNorm)})
    for seed in range(3):
        x = np.random.default_rng(seed).normal(size=shape).astype(np.float32)
        expected = np.asarray(jax.jit(tutorial_rms_norm)(x))
        got = module.main(x)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        assert got.tobytes() == expected.tobytes()


def kernel_handlers(kernel_library: Path) -> dict[str, object]:
    library = ctypes.CDLL(str(kernel_library))
    return {
        target: jax.ffi.pycapsule(getattr(library, symbol)) for target, symbol in HANDLERS.items()
    }


@pytest.fixture(scope="module")
def bridged(tmp_path_factory, kernel_library):
    """A sample's rewritten module compiled with the bridge, served by the kernel library's
    FFI handlers (its hand-written _mlir_ciface_ entries are not linked)."""
    cache = {}

    def get(name: str):
        if name not in cache:
            output = tmp_path_factory.mktemp("bridged") / f"lib{name}_bridge.so"
            rewritten = SAMPLES / name / f"{name}.rewritten.mlir"
            compile_module(rewritten, output, ffi_bridge=True)
            # Each extern is served by its adapter, bound inside the module (local symbol).
            listing = subprocess.run(
                ["nm", str(output)], check=True, capture_output=True, text=True
            ).stdout.split()
            for extern in externs_in(rewritten.read_text()):
                assert f"_mlir_ciface_{extern.symbol}" in listing
                assert f"_mlir_ciface_{extern.symbol}" not in defined_symbols(output)
            cache[name] = load(output, ffi_handlers=kernel_handlers(kernel_library))
        return cache[name]

    return get


@pytest.mark.parametrize("name", sorted(ROUND_TRIP))
def test_samples_through_the_bridge_match_jax(name, bridged):
    function_name, shapes = ROUND_TRIP[name]
    function = getattr(sample(name), function_name)
    for seed in range(3):
        inputs = [np.random.default_rng(seed).normal(size=s).astype(np.float32) for s in shapes]
        assert_all_agree(bridged(name).main(*inputs), jax.jit(function)(*inputs))


def test_attributes_of_every_kind_reach_the_handler(bridged):
    """attr_kernel decodes every attribute into a float64 slot (samples/kernels/attr_kernel.cc):
    names, dtypes (u8 as U8, bf16 as BF16), arrays and strings all arrive as XLA sends them.
    XLA itself refuses f16/bf16 scalar attributes, so JAX runs with their bits as uint16."""
    module = sample("attribute_kernel")
    x = np.array([0.1, -3.75], np.float32)
    with jax.enable_x64(True):
        expected = np.asarray(
            jax.jit(lambda v: module.attr_kernel(v, attributes=module.XLA_ATTRIBUTES))(x)
        )
    got = bridged("attribute_kernel").main(x)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("batch", [1, 5, 64])
def test_shape_operands_give_the_result_dims(bridged, batch):
    """dynamic_shape: the call's shape operand is not passed to the handler (XLA drops it)
    but sizes its result; the handler sees the logical (batch, 8) buffer."""
    x = np.random.default_rng(batch).normal(size=(batch, 8)).astype(np.float32)
    expected = np.asarray(jax.jit(sample("dynamic_shape").row_scale)(x))
    got = bridged("dynamic_shape").main(x)
    assert got.shape == expected.shape
    assert got.tobytes() == expected.tobytes()


def test_side_effect_handler_runs_once_per_call(bridged, kernel_library):
    from kernel_library import load_kernels

    counter = load_kernels(kernel_library).lib
    x = np.array([1.0, -2.5, 4.0], np.float32)
    program = bridged("side_effect")
    counter.count_calls_reset()
    for _ in range(4):
        program.main(x)
    assert counter.count_calls_value() == 4 * 3


def checked_sqrt(x):
    return jax.ffi.ffi_call("checked_sqrt", jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def test_handler_error_becomes_an_exception_with_its_message(tmp_path, handler_libraries):
    _, checks_path = handler_libraries
    checks = ctypes.CDLL(str(checks_path))
    register_once("checked_sqrt", checks.CheckedSqrt)
    x = np.array([4.0, -1.0, 9.0], np.float32)
    with pytest.raises(Exception, match="checked_sqrt: element 1 is negative"):
        jax.block_until_ready(jax.jit(checked_sqrt)(x))

    text = rewriter.export(checked_sqrt, x).original
    module = load(
        compile_with_cli(text, tmp_path, "checked_sqrt"),
        ffi_handlers={"checked_sqrt": jax.ffi.pycapsule(checks.CheckedSqrt)},
    )
    with pytest.raises(HandlerError, match="checked_sqrt: element 1 is negative"):
        module.main(x)
    # The error belonged to that call only.
    good = np.array([4.0, 1.0, 9.0], np.float32)
    np.testing.assert_array_equal(module.main(good), np.asarray(jax.jit(checked_sqrt)(good)))


def configured_affine(x):
    config = {"scale": np.float32(2.5), "offset": np.int32(-3), "tag": "abcd"}
    return jax.ffi.ffi_call("configured_affine", jax.ShapeDtypeStruct(x.shape, x.dtype))(
        x, cfg=config, flip=True
    )


def test_dictionary_attributes_reach_the_handler(tmp_path, handler_libraries):
    """A dict kwarg becomes a dictionary attribute; the bridge builds it as XLA does (the
    handler finds every entry by name). Then the same call with the offset nested one level
    deeper, which JAX cannot express: y = -(x * 2.5 + (-3) + len("abcd")) either way."""
    checks = ctypes.CDLL(str(handler_libraries[1]))
    capsule = jax.ffi.pycapsule(checks.ConfiguredAffine)
    register_once("configured_affine", checks.ConfiguredAffine)
    x = np.random.default_rng(5).normal(size=(3, 4)).astype(np.float32)
    exported = rewriter.export(configured_affine, x).original
    flat = 'cfg = {offset = -3 : i32, scale = 2.500000e+00 : f32, tag = "abcd"}'
    assert flat in exported
    expected = np.asarray(jax.jit(configured_affine)(x))
    np.testing.assert_array_equal(expected, -(x * np.float32(2.5) + np.float32(1)))
    module = load(
        compile_with_cli(exported, tmp_path, "flat"), ffi_handlers={"configured_affine": capsule}
    )
    assert module.main(x).tobytes() == expected.tobytes()

    nested = exported.replace(
        flat, flat.replace("offset = -3 : i32", "inner = {offset = -3 : i32}")
    )
    assert nested != exported
    module = load(
        compile_with_cli(nested, tmp_path, "nested"), ffi_handlers={"configured_affine": capsule}
    )
    assert module.main(x).tobytes() == expected.tobytes()


# A program with an ordered effect as jax.export writes it (mpi4jax's, without MPI).
ORDERED = (Path(__file__).parent / "data" / "ordered_tokens.mlir").read_text()


@pytest.mark.parametrize("path", ["compile", pytest.param("iree", marks=pytest.mark.iree)])
def test_handlers_that_take_and_give_tokens_run_in_order(tmp_path, handler_libraries, path):
    """Token operands and results reach the handlers as XLA's TOKEN buffers (a handler
    bound to ffi::Token refuses a call frame without them), the externs take none, main's
    token parameter and result are gone from the entry point, and the calls run in program
    order: fence 1, 2, 3, each time."""
    checks = ctypes.CDLL(str(handler_libraries[1]))
    checks.FenceLog.restype = ctypes.c_int64
    checks.FenceLog.argtypes = [ctypes.c_int64]
    handlers = {
        "fence": jax.ffi.pycapsule(checks.Fence),
        "ordered_scale": jax.ffi.pycapsule(checks.OrderedScale),
    }
    x = np.array([1.0, -2.0, 3.5, 8.0], np.float32)
    if path == "compile":
        module = tmp_path / "ordered.mlir"
        module.write_text(rewriter.rewrite(ORDERED).text)
        compile_module(module, tmp_path / "libordered.so", ffi_bridge=True)
        main = load(tmp_path / "libordered.so", ffi_handlers=handlers).main
    else:
        from rewriter.iree import load as iree_load

        module = tmp_path / "ordered.iree.mlir"
        module.write_text(rewriter.rewrite(ORDERED, abi="iree").text)
        main = iree_load(module, imports=handlers).main
    checks.FenceReset()
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(main(x)), x * np.float32(3) * np.float32(0.5))
    assert [checks.FenceLog(i) for i in range(7)] == [1, 2, 3, 1, 2, 3, -1]


def test_missing_handler_is_a_load_error(tmp_path, handler_libraries):
    tutorial = ctypes.CDLL(str(handler_libraries[0]))
    register_once("rms_norm_tutorial", tutorial.RmsNorm)
    x = np.ones((2, 4), np.float32)
    library = compile_with_cli(rewriter.export(tutorial_rms_norm, x).original, tmp_path, "m")
    with pytest.raises(
        LoadError, match="calls the XLA FFI target rms_norm_tutorial but no handler"
    ):
        load(library)


# Loads with handlers that are not ones, in a child process: a loader that called one
# would crash the process, which must fail the test rather than end pytest.
REFUSED_HANDLERS = """
import ctypes, json, sys
import numpy as np
from rewriter.compile import load

library, tutorial = sys.argv[1], ctypes.CDLL(sys.argv[2])
cases = {
    "empty bundle": {"rms_norm_tutorial": {}},
    "address 0": {"rms_norm_tutorial": 0},
    "python function": {"rms_norm_tutorial": lambda frame: None},
    "unused keys": {"rms_norm_tutorial": tutorial.RmsNorm, "unused": 0, "unused_too": {}},
}
for name, handlers in cases.items():
    try:
        module = load(library, ffi_handlers=handlers)
        result = module.main(np.ones((2, 4), np.float32)).tolist()
        print(json.dumps([name, "", result]), flush=True)
    except Exception as error:
        print(json.dumps([name, type(error).__name__, str(error)]), flush=True)
"""


def test_what_cannot_be_a_handler_is_refused_at_load_and_jaxlib_is_not_suggested_twice(
    tmp_path, handler_libraries
):
    """``{'t': {}}``, an address of 0, a Python function: a LoadError naming the target,
    before any handler is called; handlers of targets the module does not call are not even
    looked at. ``ffi_handlers='jaxlib'`` for a module whose target jaxlib does not serve
    says so, instead of suggesting 'jaxlib' again."""
    tutorial = ctypes.CDLL(str(handler_libraries[0]))
    register_once("rms_norm_tutorial", tutorial.RmsNorm)
    x = np.ones((2, 4), np.float32)
    library = compile_with_cli(rewriter.export(tutorial_rms_norm, x).original, tmp_path, "w")
    run = subprocess.run(
        [sys.executable, "-c", REFUSED_HANDLERS, str(library), str(handler_libraries[0])],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    outcomes = {name: (kind, said) for name, kind, said in map(json.loads, run.stdout.splitlines())}
    assert run.returncode == 0, run.stderr[-2000:]
    where = f"{library}: ffi_handlers['rms_norm_tutorial']:"
    assert outcomes["empty bundle"] == (
        "LoadError",
        f"{where} an XLA FFI handler bundle is {{'execute': handler}}; this one has no "
        "'execute' (keys: none)",
    )
    assert outcomes["address 0"] == ("LoadError", f"{where} the address 0 is no XLA FFI handler")
    kind, said = outcomes["python function"]
    assert kind == "LoadError" and said.startswith(f"{where} a Python callable (function) is no")
    expected = np.asarray(jax.jit(tutorial_rms_norm)(x))
    assert outcomes["unused keys"] == ("", expected.tolist())

    with pytest.raises(LoadError) as error:
        load(library, ffi_handlers="jaxlib")
    message = str(error.value)
    assert "calls the XLA FFI target rms_norm_tutorial but no handler was given" in message
    assert "jaxlib's CPU handlers do not include rms_norm_tutorial" in message
    assert "ffi_handlers='jaxlib'" not in message
    assert message.endswith("load(..., ffi_handlers={**jaxlib_handlers(), target: capsule})")


def test_handler_from_another_api_version_is_refused(tmp_path, handler_libraries):
    tutorial = ctypes.CDLL(str(handler_libraries[0]))
    checks = ctypes.CDLL(str(handler_libraries[1]))
    register_once("rms_norm_tutorial", tutorial.RmsNorm)
    x = np.ones((2, 4), np.float32)
    library = compile_with_cli(rewriter.export(tutorial_rms_norm, x).original, tmp_path, "v")
    with pytest.raises(
        LoadError, match=r"reports API version 0\.99; the bridge speaks 0\.1 to 0\.3"
    ):
        load(library, ffi_handlers={"rms_norm_tutorial": checks.FutureVersion})


@pytest.fixture(scope="module")
def c_host(tmp_path_factory, handler_libraries):
    """samples/ffi_bridge/host.c built with clang, and a bridged tutorial module (3x5)."""
    folder = tmp_path_factory.mktemp("host")
    tutorial_path, _ = handler_libraries
    register_once("rms_norm_tutorial", ctypes.CDLL(str(tutorial_path)).RmsNorm)
    x = (np.arange(3 * 5) % 7 - 3).astype(np.float32).reshape(3, 5)
    # Portable code: valgrind runs it (test_bridge_is_clean_under_valgrind), and valgrind
    # has no AVX-512, which native code uses on a CPU that has it (SIGILL under valgrind).
    exported = rewriter.export(tutorial_rms_norm, x).original
    library = compile_with_cli(exported, folder, "h", target_cpu=PORTABLE)
    host = folder / "host"
    subprocess.run(
        [
            shutil.which("clang-22") or "clang-22",
            "-std=c11",
            "-Wall",
            "-Werror",
            str(BRIDGE_SAMPLES / "host.c"),
            f"-I{bridge_dir()}",
            f"-I{jax.ffi.include_dir()}",
            "-ldl",
            "-o",
            str(host),
        ],
        check=True,
    )
    command = [str(host), str(library), str(tutorial_path), "rms_norm_tutorial", "RmsNorm"]
    return command + ["3", "5"], x


def test_a_c_host_without_python_registers_by_pointer(c_host):
    """samples/ffi_bridge/host.c: dlopen, rw_ffi_register_handler, call, rw_ffi_last_error.
    A call before registration is reported, not a crash."""
    command, x = c_host
    run = subprocess.run(command, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    first, *values = run.stdout.splitlines()
    assert first == (
        "before registration: @rms_norm_tutorial: no XLA FFI handler is registered for target "
        "'rms_norm_tutorial'"
    )
    expected = np.asarray(jax.jit(tutorial_rms_norm)(x)).ravel()
    np.testing.assert_array_equal(np.array(values, np.float32), expected)


@pytest.mark.parametrize("missing", [1, 2], ids=["module", "handlers"])
def test_a_c_host_names_the_library_it_cannot_open(c_host, tmp_path, missing):
    """The host opened both libraries before it read dlerror(): the second dlopen, which
    succeeded, had cleared the first one's error, and it printed ``host: (null)``."""
    command, _ = c_host
    absent = tmp_path / "absent.so"
    command = [*command[:missing], str(absent), *command[missing + 1 :]]
    run = subprocess.run(command, capture_output=True, text=True)
    assert run.returncode == 2
    assert (
        run.stderr == f"host: {absent}: cannot open shared object file: No such file or directory\n"
    )


@pytest.mark.toolchain("valgrind")
def test_bridge_is_clean_under_valgrind(c_host):
    """500 bridged calls (and one without a handler): no invalid access, nothing lost."""
    command, _ = c_host
    run = subprocess.run(
        [
            "valgrind",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite",
            "--error-exitcode=3",
            *command,
            "500",
        ],
        capture_output=True,
        text=True,
        env=valgrind_environment(),
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "ERROR SUMMARY: 0 errors" in run.stderr
    assert re.search(r"definitely lost: 0 bytes|no leaks are possible", run.stderr)


def spd(rng, *shape):
    a = rng.standard_normal(shape).astype(np.float32)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1], dtype=np.float32)


LINALG = {
    "cholesky": (jnp.linalg.cholesky, lambda rng, b: [spd(rng, *b, 4, 4)]),
    "solve": (
        jnp.linalg.solve,
        lambda rng, b: [spd(rng, *b, 4, 4), rng.standard_normal((*b, 4, 2)).astype(np.float32)],
    ),
    "eigh": (jnp.linalg.eigh, lambda rng, b: [spd(rng, *b, 4, 4)]),
    "svd": (jnp.linalg.svd, lambda rng, b: [rng.standard_normal((*b, 5, 3)).astype(np.float32)]),
    "qr": (jnp.linalg.qr, lambda rng, b: [rng.standard_normal((*b, 5, 3)).astype(np.float32)]),
    # 4x4: jax computes 2x2 and 3x3 determinants in closed form, without LAPACK.
    "det": (jnp.linalg.det, lambda rng, b: [rng.standard_normal((*b, 4, 4)).astype(np.float32)]),
}


@pytest.mark.parametrize("batch", [(), (3,)], ids=["single", "batched"])
@pytest.mark.parametrize("name", sorted(LINALG))
def test_jaxlib_lapack_handlers_run_compiled(tmp_path, name, batch):
    function, make_inputs = LINALG[name]
    rng = np.random.default_rng(7)
    inputs = make_inputs(rng, batch)
    text = jax.export.export(jax.jit(function))(*inputs).mlir_module()
    assert "lapack_" in text  # the LAPACK handlers are really called
    library = tmp_path / f"lib{name}.so"
    compile_module(rewriter.rewrite(text).text, library, ffi_bridge=True)
    module = load(library, ffi_handlers="jaxlib")
    expected = jax.jit(function)(*inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = module.main(*inputs)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(expected)
    for one, other in zip(got, expected, strict=True):
        np.testing.assert_allclose(one, np.asarray(other), rtol=1e-5, atol=0)


@pytest.mark.parametrize(
    "name", ["attribute_kinds", "cholesky_lapack", "dynamic_shape", "two_results"]
)
def test_adapters_compile_cleanly_and_agree_from_either_input(tmp_path, name):
    """--emit-ffi-adapters from the export and from its rewrite give the same adapters, and
    they (and the bridge) compile under -Wall -Wextra -Werror with clang and gcc."""
    original = SAMPLES / name / f"{name}.mlir"
    rewritten = SAMPLES / name / f"{name}.rewritten.mlir"
    sources = []
    for index, source in enumerate((original, rewritten)):
        out = tmp_path / f"adapters{index}.c"
        subprocess.run(
            [sys.executable, "-m", "rewriter", "--emit-ffi-adapters", str(out), str(source)],
            check=True,
            capture_output=True,
        )
        sources.append(out)
    strip = lambda text: text.split("\n", 1)[1]  # noqa: E731 (the first line names the input)
    assert strip(sources[0].read_text()) == strip(sources[1].read_text())
    assert externs_in(rewritten.read_text())  # the facts survive in the rewritten file
    bridge = Path(bridge_dir()) / "xla_ffi_bridge.c"
    for compiler in ("clang-22", "gcc"):
        for source in (sources[0], bridge):
            subprocess.run(
                [compiler, "-std=c11", "-Wall", "-Wextra", "-Werror", "-c", str(source),
                 f"-I{bridge_dir()}", f"-I{jax.ffi.include_dir()}", "-o", str(tmp_path / "a.o")],
                check=True,
            )  # fmt: skip


def test_handlers_for_a_module_without_the_bridge_are_refused(
    tmp_path, kernel_library, handler_libraries
):
    """Handlers for a module compiled without --ffi-bridge: the message says so and what to
    do, with its kernels given or not (then its first undefined kernel symbol is named:
    the tutorial's library defines no _mlir_ciface_ entry, and none is loaded)."""
    library = tmp_path / "libplain.so"
    compile_module(SAMPLES / "rms_norm" / "rms_norm.rewritten.mlir", library)
    capsule = kernel_handlers(kernel_library)["rms_norm"]
    with pytest.raises(
        LoadError, match="was compiled without --ffi-bridge, so it calls no XLA FFI handlers"
    ):
        load(library, kernels=[kernel_library], ffi_handlers={"rms_norm": capsule})

    tutorial = ctypes.CDLL(str(handler_libraries[0]))
    register_once("rms_norm_tutorial", tutorial.RmsNorm)
    text = rewriter.export(tutorial_rms_norm, np.ones((2, 4), np.float32)).original
    library = tmp_path / "libtutorial_plain.so"
    compile_module(rewriter.rewrite(text).text, library)
    with pytest.raises(LoadError) as error:
        load(library, ffi_handlers={"rms_norm_tutorial": jax.ffi.pycapsule(tutorial.RmsNorm)})
    assert str(error.value) == (
        f"{library} was compiled without --ffi-bridge, so no XLA FFI handler can serve its "
        "externs (_mlir_ciface_rms_norm_tutorial is undefined): compile with --ffi-bridge "
        "(compile_module(..., ffi_bridge=True)), or pass kernels=[a library that defines "
        "_mlir_ciface_rms_norm_tutorial]"
    )
    with pytest.raises(LoadError) as error:
        load(library)
    assert str(error.value) == (
        f"{library} calls _mlir_ciface_rms_norm_tutorial, which none of the kernel libraries "
        "given to load() defines: pass kernels=[a library that defines it], or, when its "
        "target has an XLA FFI handler, compile with --ffi-bridge and load(..., "
        "ffi_handlers={target: handler})"
    )


def test_an_extern_without_description_in_a_bridged_module_needs_a_kernel(tmp_path):
    """A legacy custom call (string backend_config) gets no adapter: its kernel is missing,
    and no handler could serve it."""
    text = (
        "module {\n  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
        '    %0 = stablehlo.custom_call @legacy(%arg0) {backend_config = "cfg"} : '
        "(tensor<4xf32>) -> tensor<4xf32>\n    return %0 : tensor<4xf32>\n  }\n}\n"
    )
    library = tmp_path / "liblegacy.so"
    compile_module(rewriter.rewrite(text).text, library, ffi_bridge=True)
    with pytest.raises(
        LoadError,
        match=r"calls _mlir_ciface_legacy, which none .*; its extern has no rewriter\.xla_ffi "
        r"description .* load\(\.\.\., kernels=\[a library that defines _mlir_ciface_legacy\]\)",
    ):
        load(library)


def test_a_handler_must_be_a_capsule_a_bundle_a_function_or_an_address():
    from rewriter.compile.handlers import handler_address

    abort = ctypes.CDLL(None).abort
    address = ctypes.cast(abort, ctypes.c_void_p).value
    with pytest.raises(TypeError, match="not str"):
        handler_address("RmsNorm")
    with pytest.raises(ValueError, match="only the execute stage"):
        handler_address({"execute": 1, "instantiate": 2})
    assert handler_address({"execute": address}) == address
    assert handler_address(abort) == address
    assert handler_address(jax.ffi.pycapsule(abort)) == address


@pytest.mark.parametrize(
    "target",
    [
        "ffi_call",  # the adapters' tables were rw_<target>_spec: the bridge's rw_ffi_call_spec
        "rw_entry_main",  # the C name of the entry of @main
        "rw_model_metadata",
        "rw_ffi_required_targets",
        "rw_adapter0_spec",
        "rw_blas_matmul_f32",
    ],
)
def test_targets_named_like_generated_symbols_compile_and_run(tmp_path, handler_libraries, target):
    """No generated name collides with a name the module has: each target compiles, loads and
    gives the tutorial handler's numbers, bitwise."""
    tutorial_path, _ = handler_libraries
    tutorial = ctypes.CDLL(str(tutorial_path))
    register_once("rms_norm_tutorial", tutorial.RmsNorm)

    def named(x):
        return jax.ffi.ffi_call(target, jax.ShapeDtypeStruct(x.shape, x.dtype))(
            x, eps=np.float32(1e-5)
        )

    x = np.random.default_rng(1).normal(size=(4, 16)).astype(np.float32)
    library = compile_with_cli(rewriter.export(named, x).original, tmp_path, "named")
    module = load(library, ffi_handlers={target: jax.ffi.pycapsule(tutorial.RmsNorm)})
    expected = np.asarray(jax.jit(tutorial_rms_norm)(x))
    assert module.main(x).tobytes() == expected.tobytes()


# Counts calloc and realloc, the bridge's allocation functions for what a call builds
# (the compiled code allocates with malloc), over a whole run: LD_PRELOAD'ed before libc.
ALLOCATION_COUNTER = r"""
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
static long callocs, reallocs;
void *calloc(size_t n, size_t m) { ++callocs; return __libc_calloc(n, m); }
void *realloc(void *p, size_t n) { ++reallocs; return __libc_realloc(p, n); }
__attribute__((destructor)) static void report(void) {
    fprintf(stderr, "calloc %ld realloc %ld\n", callocs, reallocs);
}
"""


@pytest.mark.toolchain("gcc")
def test_a_bridged_call_builds_its_frame_without_allocating(c_host, tmp_path):
    """The call frame, its arrays and the attribute entries of a call with a few operands
    and attributes come from the arena's own space on the stack: 100 more calls make no
    more calloc or realloc calls (the results are the caller's, from posix_memalign)."""
    source = tmp_path / "count.c"
    source.write_text(ALLOCATION_COUNTER)
    counter = tmp_path / "libcount.so"
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", str(source), "-o", str(counter)], check=True)
    command, _ = c_host
    counts = []
    for calls in ("1", "101"):
        run = subprocess.run(
            [*command, calls], capture_output=True, text=True, env={"LD_PRELOAD": str(counter)}
        )
        assert run.returncode == 0, run.stderr
        counts.append(run.stderr.splitlines()[-1])
    assert counts[0] == counts[1], counts
