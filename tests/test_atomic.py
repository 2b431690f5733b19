"""Writing files: --in-place killed mid-write, several processes at once, and the files that
are written in place (FIFOs, devices, /dev/stdout) or not at all (read-only, hard links)."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading
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


def rewrite_in_place(path: Path, text: bool = True) -> subprocess.CompletedProcess:
    """``python -m rewriter --in-place PATH``, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "rewriter", "--in-place", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=text,
    )


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
    run = rewrite_in_place(path)
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


# ---------------------------------------------------------------- files that are not replaced


def rewrite_to(output: Path | str, *options: object, **streams) -> subprocess.CompletedProcess:
    """``python -m rewriter SAMPLE -o OUTPUT``; stdout and stderr are captured unless given."""
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **streams}
    return subprocess.run(
        [sys.executable, "-m", "rewriter", str(SAMPLE), "-o", str(output), *map(str, options)],
        cwd=ROOT,
        timeout=120,
        **streams,
    )


def test_output_onto_a_fifo_streams_into_it(tmp_path: Path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    run = rewrite_to(fifo)
    reader.join(timeout=60)
    assert run.returncode == 0, run.stderr
    assert received == [REWRITTEN.read_bytes()]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced by a regular file"
    assert os.listdir(tmp_path) == ["pipe"]


def character_device(tmp_path: Path) -> Path:
    """A null device to write to: as root a private one (os.mknod, the numbers of
    /dev/null), so that a regression replaces a file in tmp_path, not the system's."""
    if os.geteuid() != 0:
        return Path(os.devnull)  # only root could replace it
    device = tmp_path / "null"
    os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    return device


def test_output_onto_a_character_device_writes_into_it(tmp_path: Path):
    device = character_device(tmp_path)
    run = rewrite_to(device)
    assert run.returncode == 0, run.stderr
    assert stat.S_ISCHR(os.lstat(device).st_mode), "the device was replaced by a regular file"
    assert not [name for name in os.listdir(device.parent) if name.endswith(".tmp")]


def test_output_and_header_may_both_go_to_one_character_device(tmp_path: Path):
    device = character_device(tmp_path)
    run = rewrite_to(device, "--emit-header", device)
    assert run.returncode == 0, run.stderr
    assert stat.S_ISCHR(os.lstat(device).st_mode), "the device was replaced by a regular file"


def test_output_to_dev_stdout_in_a_pipe():
    run = rewrite_to("/dev/stdout")
    assert run.returncode == 0, run.stderr
    assert run.stdout == REWRITTEN.read_bytes()


def test_output_to_dev_stdout_appends_where_the_shell_said(tmp_path: Path):
    log = tmp_path / "log.mlir"
    log.write_bytes(b"// before\n")
    with open(log, "ab") as stdout:  # like `>> log.mlir`: the same file, not a new one
        run = rewrite_to("/dev/stdout", stdout=stdout)
    assert run.returncode == 0, run.stderr
    assert log.read_bytes() == b"// before\n" + REWRITTEN.read_bytes()


def test_output_onto_a_read_only_file_is_refused_like_in_place(tmp_path: Path):
    output = tmp_path / "frozen.mlir"
    output.write_bytes(b"old\n")
    output.chmod(0o444)
    run = rewrite_to(output)
    assert run.returncode == 1
    assert f"{output}: error: the file is read-only; not written" in run.stderr.decode()
    assert output.read_bytes() == b"old\n"
    assert os.listdir(tmp_path) == ["frozen.mlir"]


def test_in_place_keeps_owner_and_group(tmp_path: Path):
    path = tmp_path / "theirs.mlir"
    path.write_bytes(SAMPLE.read_bytes())
    # As root: a file of another user, which a plain rename would give to root.
    owner = (12345, 23456) if os.geteuid() == 0 else (os.getuid(), os.getgid())
    os.chown(path, *owner)
    path.chmod(0o640)
    run = rewrite_in_place(path, text=False)
    assert run.returncode == 0, run.stderr
    assert path.read_bytes() == REWRITTEN.read_bytes()
    status = path.stat()
    assert (status.st_uid, status.st_gid) == owner
    assert stat.S_IMODE(status.st_mode) == 0o640


def test_output_onto_another_users_file_keeps_its_owner(tmp_path: Path):
    output = tmp_path / "out.mlir"
    output.write_bytes(b"old\n")
    owner = (12345, 23456) if os.geteuid() == 0 else (os.getuid(), os.getgid())
    os.chown(output, *owner)
    run = rewrite_to(output)
    assert run.returncode == 0, run.stderr
    assert output.read_bytes() == REWRITTEN.read_bytes()
    assert (output.stat().st_uid, output.stat().st_gid) == owner


def test_in_place_refuses_a_file_with_several_hard_links(tmp_path: Path):
    path = tmp_path / "model.mlir"
    path.write_bytes(SAMPLE.read_bytes())
    other = tmp_path / "other_name.mlir"
    os.link(path, other)
    inode = path.stat().st_ino
    run = rewrite_in_place(path)
    assert run.returncode == 1
    assert (
        f"{path}: error: the file has 2 hard links; replacing it would break them and writing "
        "into it could not be atomic; not rewritten" in run.stderr
    )
    assert "Traceback" not in run.stderr
    assert path.stat().st_ino == other.stat().st_ino == inode
    assert path.read_bytes() == other.read_bytes() == SAMPLE.read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["model.mlir", "other_name.mlir"]


def test_output_onto_a_file_with_several_hard_links_is_refused(tmp_path: Path):
    output = tmp_path / "out.mlir"
    output.write_bytes(b"old\n")
    os.link(output, tmp_path / "backup.mlir")
    run = rewrite_to(output)
    assert run.returncode == 1
    assert "the file has 2 hard links" in run.stderr.decode()
    assert output.read_bytes() == (tmp_path / "backup.mlir").read_bytes() == b"old\n"
