"""The real tools that judge our output: jaxlib's C++ MLIR parser/verifier, IREE's tools, and
the native tools (compilers, upstream MLIR, valgrind) that scripts/install.sh installs."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from rewriter.compile.toolchain import INSTALL_HINTS, ToolchainError, find_tool

INSTALL_SCRIPT = "scripts/install.sh"

# Native tools the tests run, by the Debian package that provides them (scripts/install.sh
# installs them all). The LLVM 22 tools are looked up as rewriter.compile looks them up.
# What a bare `toolchain` marker needs: the compiled path's upstream MLIR and clang.
LLVM_TOOLS = ("mlir-opt-22", "mlir-translate-22", "clang-22")

NATIVE_PACKAGES = {
    "cc": "gcc",
    "gcc": "gcc",
    "g++": "g++",
    "nm": "binutils",
    "readelf": "binutils",
    "objdump": "binutils",
    "ld": "binutils",  # IREE's system linking (f64 libm functions)
    "git": "git",
    "valgrind": "valgrind",
    # cross-compilation: Debian's cross compilers for aarch64 and qemu's user-mode emulator
    "aarch64-linux-gnu-gcc": "gcc-aarch64-linux-gnu",
    "aarch64-linux-gnu-g++": "g++-aarch64-linux-gnu",
    "qemu-aarch64": "qemu-user",
    "cmake": "cmake",  # samples/deploy
    # not a tool: the system's OpenBLAS, the compiled path's default BLAS (rewriter.compile.blas)
    "libopenblas.so.0": "libopenblas-dev",
    # the same for aarch64 (Debian's arm64 architecture), for the cross-compiled BLAS
    "aarch64:libopenblas.so.0": "libopenblas0-pthread:arm64",
    **{name: hint.split()[-1] for name, hint in INSTALL_HINTS.items() if name != "iree-opt"},
}


def require_tool(name: str) -> str:
    """Path of the native tool ``name``. When it is missing the test is skipped with the
    command that installs it, or fails when CI=true: CI must prove everything."""
    package = NATIVE_PACKAGES[name]
    try:
        if name in INSTALL_HINTS:
            return find_tool(name)
        return _system_library(name) if ".so" in name else _which(name)
    except ToolchainError:
        message = (
            f"{name} not found: run `{INSTALL_SCRIPT}` (as root, or with sudo), "
            f"or `apt-get install {package}`"
        )
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message} (CI=true: a missing tool is a failure, not a skip)")
    pytest.skip(message)


def _system_library(name: str) -> str:
    """The system library ``name`` as the compiled path finds it (``system_blas``)."""
    from rewriter.compile.blas import SYSTEM_OPENBLAS, system_blas

    triple, _, library = name.rpartition(":")
    clang = find_tool("clang-22") if triple else None
    target = [f"--target={triple}-linux-gnu"] if triple else None
    found = system_blas(clang, target) if library == SYSTEM_OPENBLAS else None
    if found is None:
        raise ToolchainError(name)
    return str(found.library)


def _which(name: str) -> str:
    found = shutil.which(name)
    if not found:
        raise ToolchainError(name)
    return found


def jaxlib_verify(text: str) -> None:
    """Parse and verify ``text`` with jaxlib's MLIR (all dialects jax registers)."""
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir

    with mlir.make_ir_context() as context:
        module = ir.Module.parse(text, context=context)
        if not module.operation.verify():
            raise AssertionError("jaxlib: module does not verify")


@functools.cache
def iree_tool(name: str) -> str:
    """Path of an IREE tool (iree-opt, iree-compile) from the iree-base-compiler wheel."""
    found = shutil.which(name)
    if found:
        return found
    candidate = os.path.join(os.path.dirname(sys.executable), name)
    if os.path.exists(candidate):
        return candidate
    raise RuntimeError(f"{name} not found: pip install iree-base-compiler")


def iree_opt() -> str:
    """Path of iree-opt from the iree-base-compiler wheel."""
    return iree_tool("iree-opt")


def iree_input_pipeline(text: str) -> subprocess.CompletedProcess[str]:
    """Run IREE's StableHLO input pipeline on ``text``; returns the finished process."""
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as handle:
        handle.write(text)
        path = handle.name
    try:
        return subprocess.run(
            [iree_opt(), "--iree-stablehlo-input-transformation-pipeline", path, "-o", os.devnull],
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        os.unlink(path)


def valgrind_environment() -> dict[str, str]:
    """The environment for a program run under valgrind, which has no AVX-512: OpenBLAS
    picks AVX2 kernels (``OPENBLAS_CORETYPE``; ``load`` names AVX-512 ones in this process
    on a CPU that has it, and its children inherit the name)."""
    import os

    return {**os.environ, "OPENBLAS_CORETYPE": "Haswell"}


def logging_tools(folder, log) -> None:
    """Fill ``folder`` (a $REWRITER_TOOL_PATH) with scripts that append their name and
    arguments to ``log``, then run the tool: which tools a compile runs, questions
    (``-print-file-name``, ``-print-search-dirs``) included."""
    from rewriter.compile.toolchain import PIPELINE_TOOLS

    folder.mkdir()
    for name in PIPELINE_TOOLS:
        script = folder / name
        script.write_text(
            f'#!/bin/sh\necho "{name} $*" >> "{log}"\nexec "{find_tool(name)}" "$@"\n',
            encoding="utf-8",
        )
        script.chmod(0o755)
