"""A missing native tool skips its tests with the command that installs it, except under
CI=true, where it fails them: CI must prove everything."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from mlir_tools import NATIVE_PACKAGES, require_tool


@pytest.fixture
def empty_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No tool can be found: PATH and the compiled path's search path are an empty folder."""
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("REWRITER_TOOL_PATH", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize(
    "tool, package",
    [("mlir-opt-22", "mlir-22-tools"), ("clang-22", "clang-22"), ("nm", "binutils")],
)
def test_missing_tool_skips_naming_the_install_command(
    empty_path: Path, monkeypatch: pytest.MonkeyPatch, tool: str, package: str
) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception) as skipped:
        require_tool(tool)
    message = str(skipped.value)
    assert f"{tool} not found" in message
    assert "scripts/install.sh" in message and f"apt-get install {package}" in message


def test_missing_tool_fails_under_ci(empty_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="valgrind not found.*CI=true"):
        require_tool("valgrind")


def test_found_tool_is_its_path(empty_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("mlir-opt-22", "gcc"):  # one looked up like rewriter.compile, one on PATH
        tool = empty_path / name
        tool.write_text("#!/bin/sh\n")
        tool.chmod(0o755)
        assert require_tool(name) == str(tool)


def test_the_install_script_installs_every_package_the_messages_name() -> None:
    script = Path(__file__).resolve().parent.parent / "scripts" / "install.sh"
    assert os.access(script, os.X_OK)
    lists = re.findall(r"^(?:APT|ARM64)_PACKAGES=\((.*)\)$", script.read_text(), re.MULTILINE)
    assert len(lists) == 2  # this machine's packages, and the arm64 ones beside them
    assert set(NATIVE_PACKAGES.values()) <= {p for packages in lists for p in packages.split()}
