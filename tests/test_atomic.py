"""--in-place under stress: killed mid-write, read-only files, several processes at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "rms_norm" / "rms_norm.mlir"
REWRITTEN = ROOT / "samples" / "rms_norm" / "rms_norm.rewritten.mlir"


def big_module(tmp_path: Path) -> tuple[Path, bytes, bytes]:
    """The rms_norm sample with 20 MB of comment lines: slow enough to be killed mid-way."""
    padding = ("// " + "x" * 1000 + "\n") * 20_000
    original = SAMPLE.read_text() + padding
    expected = REWRITTEN.read_text() + padding
    path = tmp_path / "big.mlir"
    path.write_text(original)
    return path, original.encode(), expected.encode()


def test_sigkill_leaves_the_old_file_or_the_new_one(tmp_path: Path):
    path, original, expected = big_module(tmp_path)
    seen = set()
    for delay in (0.05, 0.2, 0.35, 0.5, 0.7):
        path.write_bytes(original)
        process = subprocess.Popen(
            [sys.executable, "-m", "rewriter", "--in-place", str(path)],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.wait()
        content = path.read_bytes()
        assert content in (original, expected), f"a mix after SIGKILL at {delay} s"
        seen.add(content == expected)
    # one full run still completes
    path.write_bytes(original)
    subprocess.run(
        [sys.executable, "-m", "rewriter", "--in-place", str(path)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    assert path.read_bytes() == expected


def test_read_only_file_is_not_rewritten(tmp_path: Path):
    path = tmp_path / "frozen.mlir"
    path.write_bytes(SAMPLE.read_bytes())
    path.chmod(0o444)
    run = subprocess.run(
        [sys.executable, "-m", "rewriter", "--in-place", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1
    assert f"{path}: error: the file is read-only; not rewritten" in run.stderr
    assert "Traceback" not in run.stderr
    assert path.read_bytes() == SAMPLE.read_bytes()


def test_several_processes_on_different_files_at_once(tmp_path: Path):
    paths = []
    for index in range(8):
        path = tmp_path / f"export_{index}.mlir"
        path.write_bytes(SAMPLE.read_bytes())
        paths.append(path)
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "rewriter", "--in-place", str(path)],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for path in paths
    ]
    assert all(process.wait() == 0 for process in processes)
    assert all(path.read_bytes() == REWRITTEN.read_bytes() for path in paths)
    assert sorted(os.listdir(tmp_path)) == sorted(path.name for path in paths)
