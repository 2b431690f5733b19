"""Where each runner looks for its tools, and what it says when one is missing. Both look
tools up with ``toolchain.first_tool_found``; they differ in where they look and in their
error: the compiled path searches $REWRITER_TOOL_PATH (literally) or $PATH, this Python's
folder and /usr/lib/llvm-22/bin, where Debian's unversioned ``mlir-opt`` stands for
``mlir-opt-22``; the IREE path searches $PATH, then this Python's folder (pip's IREE
tools). Both take ``iree-opt`` and ``iree-compile`` from the IREE whose bindings they
import first (without $REWRITER_TOOL_PATH)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mlir_tools import require_tool

from rewriter.compile import toolchain
from rewriter.compile.toolchain import ToolchainError, first_tool_found
from rewriter.iree import build
from rewriter.iree.build import BuildError


def _executable(folder: Path, name: str) -> Path:
    path = folder / name
    path.write_text("#!/bin/sh\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def test_the_first_candidate_found_wins_and_a_miss_raises_the_callers_error(tmp_path: Path):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    tool = _executable(second, "tool")
    assert first_tool_found([("tool", str(first)), ("tool", str(second))], KeyError) == str(tool)
    assert first_tool_found([("other", str(second)), ("tool", str(second))], KeyError) == str(tool)
    with pytest.raises(LookupError, match="no tool"):
        first_tool_found([("tool", str(first))], lambda: LookupError("no tool"))


def test_compile_takes_an_explicit_search_path_literally(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("REWRITER_TOOL_PATH", str(tmp_path))
    with pytest.raises(ToolchainError) as missing:
        toolchain.find_tool("mlir-opt-22")  # not even /usr/lib/llvm-22/bin/mlir-opt
    assert str(missing.value) == (
        "mlir-opt-22 not found: install it with `apt-get install mlir-22-tools`"
    )
    _executable(tmp_path, "mlir-opt")  # unversioned: only Debian's LLVM folder has those
    with pytest.raises(ToolchainError, match="mlir-opt-22 not found"):
        toolchain.find_tool("mlir-opt-22")
    clang = _executable(tmp_path, "clang-22")
    assert toolchain.find_tool("clang-22") == str(clang)


def test_compile_reads_debians_unversioned_tool_as_the_versioned_one(tmp_path: Path, monkeypatch):
    require_tool("mlir-opt-22")
    unversioned = Path("/usr/lib/llvm-22/bin/mlir-opt")
    if not unversioned.exists() or Path("/usr/lib/llvm-22/bin/mlir-opt-22").exists():
        pytest.skip("needs Debian's layout: mlir-opt, not mlir-opt-22, in /usr/lib/llvm-22/bin")
    monkeypatch.delenv("REWRITER_TOOL_PATH", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no mlir-opt-22 on $PATH
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    assert toolchain.find_tool("mlir-opt-22") == str(unversioned)


def test_iree_looks_on_path_then_next_to_python(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(build, "wheel_tools", lambda: None)  # no iree-base-compiler imported
    on_path, python_folder = tmp_path / "path", tmp_path / "python"
    on_path.mkdir()
    python_folder.mkdir()
    monkeypatch.setattr(sys, "executable", str(python_folder / "python"))
    monkeypatch.setenv("PATH", str(on_path))
    pip_tool = _executable(python_folder, "iree-compile")
    assert build.find_tool("iree-compile") == str(pip_tool)
    path_tool = _executable(on_path, "iree-compile")
    assert build.find_tool("iree-compile") == str(path_tool)
    # $REWRITER_TOOL_PATH is the compiled path's alone.
    monkeypatch.setenv("REWRITER_TOOL_PATH", str(python_folder))
    assert build.find_tool("iree-compile") == str(path_tool)
    with pytest.raises(BuildError) as missing:
        build.find_tool("iree-dump-module")
    assert str(missing.value) == (
        "iree-dump-module not found: pip install iree-base-runtime==3.13.0"
    )


def test_compile_runs_the_iree_opt_of_the_bindings_it_imports(tmp_path: Path, monkeypatch):
    """``iree-opt`` is the binary of the imported iree-base-compiler wheel, before a
    console script on $PATH (which would start Python to run that binary, 0.2 s a stage);
    $REWRITER_TOOL_PATH still wins."""
    folder = toolchain.wheel_tools()
    if folder is None:
        pytest.skip("needs iree-base-compiler: pip install iree-base-compiler")
    monkeypatch.delenv("REWRITER_TOOL_PATH", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    _executable(tmp_path, "iree-opt")
    assert toolchain.find_tool("iree-opt") == str(Path(folder) / "iree-opt")
    monkeypatch.setenv("REWRITER_TOOL_PATH", str(tmp_path))
    assert toolchain.find_tool("iree-opt") == str(tmp_path / "iree-opt")


def test_iree_runs_the_iree_compile_of_the_bindings_it_imports(tmp_path: Path, monkeypatch):
    """The bindings write the bytecode iree-compile reads: the wheel's binary comes before
    an ``iree-compile`` on $PATH (pip's script, which would start Python to run it)."""
    folder = toolchain.wheel_tools()
    if folder is None or not (Path(folder) / "iree-compile").is_file():
        pytest.skip("needs iree-base-compiler: pip install iree-base-compiler")
    monkeypatch.setenv("PATH", str(tmp_path))
    _executable(tmp_path, "iree-compile")
    assert build.find_tool("iree-compile") == str(Path(folder) / "iree-compile")
