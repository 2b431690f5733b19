"""Modules exported for a GPU are rewritten with a warning: the GPU library kernels they
call (``cusolver_*``, ``cu_*``, ``hipsolver_*``, ...) need CPU functions no library has.
An ``Exported`` made for GPU platforms only is an error unless its platform is chosen,
and then a warning (``rewriter/plan/platforms.py``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import rewriter
from rewriter.plan.platforms import gpu_platform

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = (ROOT / "samples" / "rms_norm" / "rms_norm.mlir").read_text()


def with_target(target: str) -> str:
    return SAMPLE.replace("@rms_norm(", f"@{target}(")


@pytest.mark.parametrize(
    ("target", "platform"),
    [
        ("cusolver_potrf_ffi", "CUDA"),
        ("cu_threefry2x32_ffi", "CUDA"),
        ("cublas_gemm", "CUDA"),
        ("cusparse_gtsv2_ffi", "CUDA"),
        ("hipsolver_potrf_ffi", "ROCm"),
        ("hip_lu_pivots_to_permutation", "ROCm"),
        ("rocsolver_getrf", "ROCm"),
    ],
)
def test_a_gpu_library_kernel_is_a_warning_naming_its_platform(target: str, platform: str):
    text = with_target(target)
    result = rewriter.rewrite(text, filename="gpu.mlir")
    [warning] = [w for w in result.warnings if "kernel (the module was exported" in w.message]
    assert warning.message.startswith(f"custom call target '{target}' is a {platform} kernel")
    assert "platforms=['cpu']" in warning.message
    assert (warning.line, warning.column) == (4, text.split("\n")[3].index(f"@{target}") + 1)
    assert result.changed  # a warning, not a refusal: the call is rewritten


@pytest.mark.parametrize("target", ["rms_norm", "cumsum_ffi", "cube", "hippo_kernel", "rocket"])
def test_a_user_kernel_is_not_taken_for_a_gpu_one(target: str):
    assert gpu_platform(target) is None
    assert rewriter.rewrite(with_target(target)).warnings == []


def test_each_gpu_target_is_warned_about_once():
    call = SAMPLE.split("\n")[3]
    text = SAMPLE.replace(call, call + "\n" + call.replace("%0 =", "%1 =")).replace(
        "@rms_norm(", "@cusolver_potrf_ffi("
    )
    warnings = rewriter.rewrite(text).warnings
    assert len([w for w in warnings if "CUDA kernel" in w.message]) == 1


def test_the_command_line_prints_the_warning():
    run = subprocess.run(
        [sys.executable, "-m", "rewriter", "-"],
        cwd=ROOT,
        input=with_target("cusolver_potrf_ffi"),
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert "<stdin>:4:32: warning: custom call target 'cusolver_potrf_ffi' is a CUDA kernel" in (
        run.stderr
    )


@pytest.mark.jax
@pytest.mark.parametrize("platforms", [["cuda"], ["rocm"]])
def test_an_export_for_gpu_platforms_only_is_an_error_naming_them(platforms):
    """jax writes no platform into the text; the Exported knows it, and a module without
    the CPU's code is refused at once, not when a handler is missing at load time."""
    import jax
    import jax.numpy as jnp

    x = jax.ShapeDtypeStruct((4, 4), jnp.float32)
    exported = rewriter.export(jnp.linalg.cholesky, x, platforms=platforms, platform=platforms[0])
    for call in (
        lambda: rewriter.export(jnp.linalg.cholesky, x, platforms=platforms),
        lambda: rewriter.rewrite(exported.exported),
        lambda: rewriter.rewrite(exported.exported.serialize()),
        lambda: rewriter.rewrite(exported.original, platforms=platforms),
    ):
        with pytest.raises(rewriter.RewriteError) as error:
            call()
        assert error.value.message.startswith(
            f"the module was exported for {platforms[0]}, not for the CPU"
        )
        assert f"platform='{platforms[0]}'" in error.value.message


@pytest.mark.jax
@pytest.mark.parametrize(
    ("platforms", "warned"), [(["cuda"], True), (["rocm"], True), (["cpu"], False)]
)
def test_an_export_for_gpu_platforms_only_rewritten_all_the_same_says_so(platforms, warned):
    """Chosen with ``platform=``, a GPU platform's module is rewritten with the warnings."""
    import jax
    import jax.numpy as jnp

    x = jax.ShapeDtypeStruct((4, 4), jnp.float32)
    exported = rewriter.export(jnp.linalg.cholesky, x, platforms=platforms, platform=platforms[0])
    for result in (exported, rewriter.rewrite(exported.exported, platform=platforms[0])):
        first = result.warnings[0] if result.warnings else None
        says = first is not None and first.message.startswith(
            f"the module was exported for {platforms[0]}, not for the CPU"
        )
        assert says == warned, [w.message for w in result.warnings]
        assert any("kernel (the module was exported" in w.message for w in result.warnings) == (
            warned
        )
