"""The benchmark scripts' command lines: ``--help`` and a wrong argument are answered by
argparse, never by a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

# The scripts import jax before they read their arguments (a few seconds each).
pytestmark = [pytest.mark.jax, pytest.mark.slow]

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def run_script(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / name), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("name", ["compile_speed.py", "speed.py"])
def test_help_prints_usage(name):
    done = run_script(name, "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: {name}")
    assert "Traceback" not in done.stderr


def test_compile_speed_names_an_unknown_program():
    done = run_script("compile_speed.py", "nope")
    assert done.returncode == 2
    assert "error: unknown program 'nope' (choose from block, attention, conv)" in done.stderr
    assert "Traceback" not in done.stderr
