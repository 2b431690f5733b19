"""The README's code runs as written: the snippets of "One handler, two worlds" (a shell
block builds the handler, Python exports, the shell rewrites and compiles, Python loads),
of "Python API" and of "Deploying without Python" (a static library, CMake, a program run
with an empty environment), each block in a fresh process, in order, in a temporary folder that
holds what the README says the reader has (the repository's sample files)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
FENCE = re.compile(r"^( *)```(sh|python)\n(.*?)^\1```$", re.MULTILINE | re.DOTALL)


def section(title: str) -> str:
    start = README.index(f"\n## {title}")
    end = README.find("\n## ", start + 1)
    return README[start : end if end >= 0 else len(README)]


def blocks(title: str) -> list[tuple[str, str]]:
    """The (language, code) of each sh and python block of a README section, in order,
    dedented from the list items they sit in."""
    return [
        (language, textwrap.dedent(code)) for _, language, code in FENCE.findall(section(title))
    ]


def run_block(language: str, code: str, folder: Path) -> None:
    """One block in a fresh process, in ``folder``: the checkout's package first on the
    path, and ``python`` the interpreter that runs the tests."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]),
    }
    command = (
        ["bash", "-euo", "pipefail", "-c", code]
        if language == "sh"
        else [
            sys.executable,
            "-c",
            code,
        ]
    )
    run = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"{language} block failed:\n{code}\n{run.stdout}\n{run.stderr}"


# The README's last step says: bit for bit what jax.jit(rms_norm)(x) gives. So it is.
SAME_AS_JAX = """
def rms_norm(x):
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return jax.ffi.ffi_call("rms_norm", out)(x, eps=np.float32(1e-5))


jax.ffi.register_ffi_target("rms_norm", jax.ffi.pycapsule(lib.RmsNorm), platform="cpu")
np.testing.assert_array_equal(y, np.asarray(jax.jit(rms_norm)(x)))
"""


@pytest.mark.slow
@pytest.mark.jax
@pytest.mark.iree
@pytest.mark.toolchain
@pytest.mark.toolchain("g++")
def test_one_handler_two_worlds_runs_as_written(tmp_path: Path) -> None:
    found = blocks("One handler, two worlds")
    assert [language for language, _ in found] == ["sh", "python", "sh", "python"]
    (tmp_path / "samples" / "ffi_bridge").mkdir(parents=True)
    shutil.copy(
        ROOT / "samples" / "ffi_bridge" / "rms_norm.cc", tmp_path / "samples" / "ffi_bridge"
    )
    for index, (language, code) in enumerate(found):
        last = index == len(found) - 1
        run_block(language, code + (SAME_AS_JAX if last else ""), tmp_path)
    assert (tmp_path / "libmodel.so").is_file()


def test_the_python_api_snippet_runs_as_written(tmp_path: Path) -> None:
    [(language, code)] = blocks("Python API")
    (tmp_path / "samples" / "rms_norm").mkdir(parents=True)
    shutil.copy(ROOT / "samples" / "rms_norm" / "rms_norm.mlir", tmp_path / "samples" / "rms_norm")
    run_block(language, code, tmp_path)


@pytest.mark.slow
@pytest.mark.jax
@pytest.mark.toolchain
@pytest.mark.toolchain("g++", "cmake")
def test_deploying_without_python_runs_as_written(tmp_path: Path) -> None:
    """The section's blocks, in order, with the samples it names; the program's numbers are
    those of the compiled module loaded in Python with the same handler (rtol 1e-6: the
    same operations in the same order, docs/paths.md)."""
    import ctypes

    import jax
    import numpy as np
    from kernel_library import build_handler_library

    from rewriter.compile import load

    found = blocks("Deploying without Python")
    assert [language for language, _ in found] == ["sh", "sh", "sh"]
    for part in ("samples/rms_norm", "samples/ffi_bridge", "samples/deploy"):
        (tmp_path / part).mkdir(parents=True)
    shutil.copy(ROOT / "samples/rms_norm/rms_norm.rewritten.mlir", tmp_path / "samples/rms_norm")
    shutil.copy(ROOT / "samples/ffi_bridge/rms_norm.cc", tmp_path / "samples/ffi_bridge")
    for name in ("CMakeLists.txt", "main.cc"):
        shutil.copy(ROOT / "samples/deploy" / name, tmp_path / "samples/deploy")
    for language, code in found[:2]:
        run_block(language, code, tmp_path)
    (command,) = [line for line in found[2][1].splitlines() if line.strip()]
    assert command == "env -i build/deploy 1000"
    run = subprocess.run(command.split(), cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    got = np.array(run.stdout.split(), np.float32).reshape(10, 10)

    library = tmp_path / "libmodel.so"
    subprocess.run(
        [sys.executable, "-m", "rewriter.compile", "samples/rms_norm/rms_norm.rewritten.mlir"]
        + ["--ffi-bridge", "-o", str(library)],
        cwd=tmp_path,
        check=True,
        capture_output=True,
    )
    handler = build_handler_library(ROOT / "samples/ffi_bridge/rms_norm.cc", tmp_path / "h.so")
    capsule = jax.ffi.pycapsule(ctypes.CDLL(str(handler)).RmsNorm)
    x = ((np.arange(100) % 7) - 3).astype(np.float32).reshape(10, 10)
    expected = load(library, ffi_handlers={"rms_norm": capsule}).main(x)
    np.testing.assert_allclose(got, expected, rtol=1e-6)
