"""Exports for several platforms: one platform's code is kept, the others' branches go.

``jax.export.export(..., platforms=["cpu", "cuda"])`` makes ``main`` take the platform index
(``jax.global_constant = "_platform_index"``) and writes a ``stablehlo.case`` on it with a
branch per platform. The rewrite keeps one platform's branch (``platform=``, ``--platform``;
the CPU by default), rewrites only its custom calls, and gives ``main`` the signature
``jax.jit`` has (``rewriter/plan/platform_choice.py``). The text does not say which branch
is which platform's: an ``Exported`` does, and for text the caller says (``platforms=``,
``--platforms``). The programs are the JAX FFI tutorial's cross-platform ``rms_norm``
(``lax.platform_dependent`` between a CPU and a CUDA target), in jit-ed inner functions,
``lax.cond`` and loops too, and ``jnp.linalg.cholesky`` (jaxlib's LAPACK and cuSOLVER kernels).
"""

from __future__ import annotations

import ctypes
import difflib
import re
import subprocess
import sys
from functools import partial
from pathlib import Path

import numpy as np
import pytest

import rewriter

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "platforms"
TARGET = "rms_norm_platforms"  # the tutorial's handler, under names no other test uses
CUDA_TARGET = "rms_norm_platforms_cuda"
SHAPE = (4, 8)

# A module shaped as jax writes one for platforms=["cuda", "cpu"]: the platform index picks
# a rule index, which picks the branch; an inner function takes the index too.
BEFORE = (DATA / "cuda_cpu.mlir").read_text()

# platforms=["cuda", "cpu"], the CPU kept (index 1), no call rewritten (skip="*"): derived
# by hand from the contract of platform_choice.py.
AFTER_CPU = (DATA / "cuda_cpu.cpu_kept.mlir").read_text()


# ---------------------------------------------------------------- a module by hand


@pytest.mark.parametrize("plain", [False, True])
def test_the_kept_platform_is_a_set_of_span_edits(plain):
    result = rewriter.rewrite(BEFORE, platforms=["cuda", "cpu"], skip="*", plain=plain)
    assert result.text == AFTER_CPU
    rewriter.validate(result.text)


def test_the_cuda_branch_is_kept_when_asked():
    result = rewriter.rewrite(BEFORE, platforms=["cuda", "cpu"], platform="cuda", skip="*")
    assert "@cpu_kernel" not in result.text
    assert result.text.count("@gpu_kernel") == 2
    assert "%arg0 = stablehlo.constant dense<0> : tensor<i32> loc(unknown)" in result.text
    [warning] = result.warnings
    assert warning.message.startswith("the rewrite keeps cuda's code (platform='cuda')")


def test_only_the_kept_calls_are_rewritten_and_declared():
    result = rewriter.rewrite(BEFORE, platforms="cuda,cpu")
    assert [(c.target, c.status) for c in result.calls] == [("cpu_kernel", "rewritten")] * 2
    assert "gpu_kernel" not in result.text
    assert result.text.count("func.func private @cpu_kernel(") == 1
    assert result.text.count("func.call @cpu_kernel(") == 2


def test_text_with_a_platform_index_needs_the_platforms():
    """The text does not say which branch is the CPU's: an error at the index argument,
    naming what to pass, on the API and the command line."""
    with pytest.raises(rewriter.RewriteError) as error:
        rewriter.rewrite(BEFORE, filename="two.mlir")
    line = BEFORE.split("\n")[1]
    assert (error.value.line, error.value.column) == (2, line.index("%arg0") + 1)
    assert "exported for 2 platforms" in error.value.message
    assert "platforms=['cpu', 'cuda']" in error.value.message
    run = subprocess.run(
        [sys.executable, "-m", "rewriter", "-"], input=BEFORE, capture_output=True, text=True
    )
    assert run.returncode == 1
    assert run.stdout == ""
    first = run.stderr.split("\n")[0]
    assert first.startswith(f"<stdin>:2:{line.index('%arg0') + 1}: error: @main takes a platform")
    assert "(--platforms cpu,cuda)" in first


def test_the_command_line_keeps_the_platform_asked_for(tmp_path):
    path = tmp_path / "two.mlir"
    path.write_text(BEFORE)
    run = subprocess.run(
        [sys.executable, "-m", "rewriter", str(path), "--platforms", "cuda,cpu", "--skip", "*"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == AFTER_CPU
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "rewriter",
            str(path),
            "--platforms",
            "cuda,cpu",
            "--platform",
            "cuda",
            "--validate",
        ],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert "cpu_kernel" not in run.stdout and "func.call @gpu_kernel(" in run.stdout
    assert "warning: the rewrite keeps cuda's code (--platform cuda)" in run.stderr


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--platforms", "cpu"], "but --platforms cpu names 1"),
        (["--platforms", "cpu,cuda,rocm"], "but --platforms cpu,cuda,rocm names 3"),
        (
            ["--platforms", "cuda,cpu", "--platform", "tpu"],
            "--platform tpu: the module was exported for cuda, cpu, not for tpu",
        ),
        (["--platforms", "cuda"], "the module was exported for cuda, not for the CPU"),
    ],
)
def test_platforms_that_do_not_fit_are_errors(tmp_path, options, message):
    path = tmp_path / "two.mlir"
    path.write_text(BEFORE)
    run = subprocess.run(
        [sys.executable, "-m", "rewriter", str(path), *options], capture_output=True, text=True
    )
    assert run.returncode == 1
    assert message in run.stderr
    assert run.stdout == ""


def test_a_module_for_one_platform_is_unchanged():
    """No platform index: nothing to choose, whatever the options say."""
    sample = (ROOT / "samples" / "rms_norm" / "rms_norm.mlir").read_text()
    golden = (ROOT / "samples" / "rms_norm" / "rms_norm.rewritten.mlir").read_text()
    for options in ({}, {"platforms": ["cpu"]}, {"platform": "cpu"}, {"platforms": "cpu,cuda"}):
        assert rewriter.rewrite(sample, **options).text == golden
        assert rewriter.rewrite(sample, skip="*", **options).text == sample


def test_a_chosen_module_is_chosen_once():
    """The output takes no platform index: rewriting it again changes nothing."""
    once = rewriter.rewrite(BEFORE, platforms=["cuda", "cpu"]).text
    assert rewriter.rewrite(once, platforms=["cuda", "cpu"]).text == once
    assert rewriter.rewrite(once).text == once


def test_a_case_that_does_not_follow_the_index_is_kept_whole():
    """A case on a value the platform index does not decide runs either branch."""
    text = BEFORE.replace(
        '"stablehlo.case"(%0) ({\n      %3', '"stablehlo.case"(%c_0) ({\n      %3'
    )
    result = rewriter.rewrite(text, platforms=["cuda", "cpu"], skip="*")
    assert result.text.count("@gpu_kernel") == 1  # main's case on %c_0 is left whole
    assert result.text.count("@cpu_kernel") == 2


# ---------------------------------------------------------------- real exports


def _ffi(target, x, eps=1e-5):
    import jax

    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return jax.ffi.ffi_call(target, out, vmap_method="broadcast_all")(x, eps=np.float32(eps))


def rms_norm(x):
    """The tutorial's cross-platform rms_norm."""
    import jax

    return jax.lax.platform_dependent(x, cpu=partial(_ffi, TARGET), cuda=partial(_ffi, CUDA_TARGET))


def nested_jit(x):
    import jax

    return jax.jit(lambda y: rms_norm(y) * 2)(x) + 1


def in_cond(x):
    import jax

    return jax.lax.cond(x[0, 0] < 0, rms_norm, lambda y: -y, x)


def twice(x):
    return rms_norm(rms_norm(x) + 1)


def in_loop(x):
    import jax

    return jax.lax.fori_loop(0, 3, lambda i, y: rms_norm(y) + 1.0, x)


PROGRAMS = {
    "rms_norm": rms_norm,
    "nested_jit": nested_jit,
    "in_cond": in_cond,
    "twice": twice,
    "in_loop": in_loop,
}
X = np.linspace(-1, 1, SHAPE[0] * SHAPE[1], dtype=np.float32).reshape(SHAPE)


def export(function, platforms, shape=SHAPE):
    import jax
    import jax.numpy as jnp

    from rewriter.inputs.jax_inputs import export_exported

    return export_exported(function, jax.ShapeDtypeStruct(shape, jnp.float32), platforms=platforms)


def main_type(text: str) -> str:
    """The function type of ``@main``, as jaxlib reads the module."""
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir

    with mlir.make_ir_context() as context:
        module = ir.Module.parse(text, context=context)
        assert module.operation.verify()
        for op in module.body.operations:
            if ir.StringAttr(op.attributes["sym_name"]).value == "main":
                return str(op.attributes["function_type"])
    raise AssertionError("no @main")


@pytest.mark.jax
@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("order", [("cpu", "cuda"), ("cuda", "cpu")])
def test_an_export_keeps_the_cpu_code_and_the_signature_of_jax_jit(name, order):
    function = PROGRAMS[name]
    exported = export(function, list(order))
    assert exported.mlir_module().count('jax.global_constant = "_platform_index"') >= 1
    for result in (
        rewriter.rewrite(exported),
        rewriter.rewrite(exported.serialize()),
        rewriter.rewrite(exported.mlir_module(), platforms=list(order)),
        rewriter.rewrite(exported.mlir_module(), platforms=",".join(order), platform="cpu"),
    ):
        assert {c.target for c in result.calls} == {TARGET}
        assert CUDA_TARGET not in result.text
        assert result.warnings == []
        # main takes what jax.jit takes: the types of the export made for the CPU alone
        assert main_type(result.text) == main_type(rewriter.rewrite(export(function, ["cpu"])).text)


@pytest.mark.jax
def test_an_x64_export_converts_its_index_and_the_chain_is_followed():
    """With x64 the index is ``tensor<i64>`` and jax converts it to i32 before a case."""
    import jax

    with jax.enable_x64(True):
        exported = export(nested_jit, ["cuda", "cpu"])
    text = exported.mlir_module()
    assert 'tensor<i64> {jax.global_constant = "_platform_index"}' in text
    assert "stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32>" in text
    for platform, kept in (("cpu", TARGET), ("cuda", CUDA_TARGET)):
        result = rewriter.rewrite(exported, platform=platform)
        assert {c.target for c in result.calls} == {kept}
        assert "%arg0 = stablehlo.constant dense" in result.text
        assert ": tensor<i64> loc(unknown)\n" in result.text
        assert main_type(result.text) == "(tensor<4x8xf32>) -> tensor<4x8xf32>"


@pytest.mark.jax
def test_what_is_not_chosen_stays_byte_for_byte():
    """Every line of the output is a line of the export, in order, but main's signature
    (the index argument taken out) and the one line that binds the index."""
    original = export(rms_norm, ["cuda", "cpu"]).mlir_module()
    text = rewriter.rewrite(original, platforms=["cuda", "cpu"], skip="*").text
    before, after = original.split("\n"), text.split("\n")
    added = []
    for tag, _, _, first, last in difflib.SequenceMatcher(None, before, after).get_opcodes():
        if tag in ("replace", "insert"):
            added += after[first:last]
    signature = [line for line in before if "func.func public @main(" in line][0]
    assert added == [
        re.sub(
            r'%arg0: tensor<i32> \{jax.global_constant = "_platform_index"\} loc\(unknown\), ',
            "",
            signature,
        ),
        "    %arg0 = stablehlo.constant dense<1> : tensor<i32> loc(unknown)",
    ]
    assert CUDA_TARGET not in text and TARGET in text


@pytest.mark.jax
def test_a_module_in_the_generic_form_is_an_error_not_every_platform_rewritten():
    """The index is then in ``arg_attrs``, beside no signature the rewrite reads."""
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir

    with mlir.make_ir_context():
        module = ir.Module.parse(BEFORE)
        generic = module.operation.get_asm(print_generic_op_form=True, enable_debug_info=True)
    with pytest.raises(rewriter.RewriteError) as error:
        rewriter.rewrite(generic, platforms=["cuda", "cpu"])
    assert "print the module in the pretty form" in error.value.message
    assert "arg_attrs = [{jax.global_constant" in error.value.diagnostics[0].source_line


@pytest.mark.jax
def test_a_serialized_export_names_its_platforms_on_the_command_line(tmp_path):
    path = tmp_path / "exported.bin"
    path.write_bytes(export(rms_norm, ["cuda", "cpu"]).serialize())
    run = subprocess.run(
        [sys.executable, "-m", "rewriter", str(path)], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert f"func.call @{TARGET}(" in run.stdout and CUDA_TARGET not in run.stdout
    run = subprocess.run(
        [sys.executable, "-m", "rewriter", str(path), "--platforms", "cpu,cuda"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1
    assert "was exported for cuda,cpu; leave --platforms out" in run.stderr


@pytest.mark.jax
def test_the_api_checks_a_list_given_beside_an_exported():
    exported = export(rms_norm, ["cuda", "cpu"])
    assert rewriter.rewrite(exported, platforms="CUDA,cpu").text == rewriter.rewrite(exported).text
    with pytest.raises(ValueError, match=r"exported for \['cuda', 'cpu'\]; leave platforms out"):
        rewriter.rewrite(exported, platforms=["cpu", "cuda"])
    with pytest.raises(TypeError, match="platforms: expected platform names"):
        rewriter.rewrite(BEFORE, platforms=["cpu", 1])
    with pytest.raises(ValueError, match="names a platform twice"):
        rewriter.rewrite(BEFORE, platforms="cpu,cpu")


@pytest.mark.jax
def test_an_export_without_the_cpu_is_an_error_at_once_naming_its_platforms(tmp_path):
    import jax
    import jax.numpy as jnp

    exported = export(rms_norm, ["cuda"])
    with pytest.raises(rewriter.RewriteError, match="exported for cuda, not for the CPU"):
        rewriter.rewrite(exported)
    with pytest.raises(rewriter.RewriteError, match="exported for cuda, not for the CPU"):
        rewriter.export(rms_norm, jax.ShapeDtypeStruct(SHAPE, jnp.float32), platforms=["cuda"])
    path = tmp_path / "exported.bin"
    path.write_bytes(exported.serialize())
    run = subprocess.run(
        [sys.executable, "-m", "rewriter", str(path)], capture_output=True, text=True
    )
    assert run.returncode == 1
    assert f"{path}:1:1: error: the module was exported for cuda, not for the CPU" in run.stderr
    assert "--platform cuda" in run.stderr
    chosen = rewriter.rewrite(exported, platform="cuda")
    assert {c.target for c in chosen.calls} == {CUDA_TARGET}


@pytest.mark.jax
@pytest.mark.parametrize("name", ["rms_norm", "cholesky"])
def test_the_output_verifies_in_jaxlib(name):
    import jax.numpy as jnp
    from mlir_tools import jaxlib_verify

    if name == "rms_norm":
        exported = export(rms_norm, ["cpu", "cuda"])
    else:
        exported = export(jnp.linalg.cholesky, ["cpu", "cuda"], (4, 4))
    for platform in ("cpu", "cuda"):
        for abi in ("c", "iree"):
            jaxlib_verify(rewriter.rewrite(exported, platform=platform, abi=abi).text)


@pytest.mark.jax
@pytest.mark.iree
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_output_passes_iree_input_pipeline(name):
    from mlir_tools import iree_input_pipeline

    exported = export(PROGRAMS[name], ["cpu", "cuda"])
    for abi in ("c", "iree"):
        run = iree_input_pipeline(rewriter.rewrite(exported, abi=abi).text)
        assert run.returncode == 0, run.stderr


# ---------------------------------------------------------------- both paths run it


@pytest.fixture(scope="module")
def tutorial(tmp_path_factory):
    """The tutorial's handler library, registered with JAX for the CPU target only."""
    import jax
    from kernel_library import BRIDGE_SAMPLES, build_handler_library

    library = build_handler_library(
        BRIDGE_SAMPLES / "rms_norm.cc", tmp_path_factory.mktemp("platforms") / "librms.so"
    )
    handler = ctypes.CDLL(str(library)).RmsNorm
    jax.ffi.register_ffi_target(TARGET, jax.ffi.pycapsule(handler), platform="cpu")
    return handler


@pytest.mark.toolchain
@pytest.mark.toolchain("gcc", "g++")
@pytest.mark.iree
@pytest.mark.jax
@pytest.mark.slow
@pytest.mark.parametrize("name", ["rms_norm", "in_cond", "in_loop"])
def test_both_paths_run_the_cpu_code_with_the_cpu_handler_alone(tmp_path, tutorial, name):
    """Compiled with the bridge and in IREE, with a handler for the CPU target only:
    ``main`` takes jax.jit's one argument and gives jax.jit's numbers, bit for bit."""
    import jax
    import jax.numpy as jnp

    from rewriter.compile import compile_module
    from rewriter.compile import load as load_compiled
    from rewriter.iree import load as load_iree

    function = PROGRAMS[name]
    result = rewriter.export(
        function, jax.ShapeDtypeStruct(SHAPE, jnp.float32), platforms=["cuda", "cpu"]
    )
    handlers = {TARGET: jax.ffi.pycapsule(tutorial)}
    library = tmp_path / "libmodel.so"
    compile_module(result.text, library, ffi_bridge=True)
    source = tmp_path / "model.iree.mlir"
    source.write_text(rewriter.rewrite(result.exported, abi="iree").text)
    expected = np.asarray(jax.jit(function)(X))
    for model in (
        load_compiled(library, ffi_handlers=handlers),
        load_iree(source, imports=handlers),
    ):
        np.testing.assert_array_equal(model.main(X), expected)
        with pytest.raises(TypeError, match="main takes 1 arrays, got 2"):
            model.main(np.int32(1), X)


@pytest.mark.toolchain
@pytest.mark.iree
@pytest.mark.jax
@pytest.mark.slow
def test_both_paths_run_a_cholesky_exported_for_cpu_and_cuda_with_jaxlib(tmp_path):
    """jaxlib's LAPACK on the CPU, cuSOLVER on CUDA: the LAPACK branch runs with jaxlib's
    CPU handlers, and no cuSOLVER kernel is asked for; the same LAPACK and the same
    elementwise ops as jax.jit: bit for bit."""
    import jax
    import jax.numpy as jnp

    from rewriter.compile import compile_module, jaxlib_handlers
    from rewriter.compile import load as load_compiled
    from rewriter.iree import load as load_iree

    a = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)
    a = a @ a.T + 4 * np.eye(4, dtype=np.float32)
    result = rewriter.export(jnp.linalg.cholesky, a, platforms=["cpu", "cuda"])
    assert {c.target for c in result.calls} == {"lapack_spotrf_ffi"}
    library = tmp_path / "libcholesky.so"
    compile_module(result.text, library, ffi_bridge=True)
    source = tmp_path / "cholesky.iree.mlir"
    source.write_text(rewriter.rewrite(result.exported, abi="iree").text)
    expected = np.asarray(jax.jit(jnp.linalg.cholesky)(a))
    for model in (
        load_compiled(library, ffi_handlers="jaxlib"),
        load_iree(source, imports=jaxlib_handlers()),
    ):
        np.testing.assert_array_equal(model.main(a), expected)
