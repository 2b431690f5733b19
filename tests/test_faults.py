"""Fault injection for the command line's writes: a full device, a reader that goes away,
SIGTERM, SIGHUP and SIGINT in the middle of a write. Each ends with nothing half-written,
nothing left behind, one clear line (or none, for EPIPE) and the documented exit status
(README, "Reliability"; ``rewriter/inputs/streams.py``).

The full device is a private node with /dev/full's numbers, made in the test's folder
(never the machine's own /dev entries). A write is held open deterministically: the CLI
runs in a small driver whose file writer writes half the output, says so on a pipe, and
waits on a second pipe that the test never writes unless it means to let it finish.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "rms_norm" / "rms_norm.mlir"
REWRITTEN = ROOT / "samples" / "rms_norm" / "rms_norm.rewritten.mlir"
PADDING = ("// " + "x" * 1000 + "\n") * 2000  # 2 MB: more than a pipe holds


def full_device(folder: Path) -> Path:
    """A private character device that answers every write with ENOSPC (/dev/full's 1, 7)."""
    if os.geteuid() != 0:
        message = "making a private /dev/full node (os.mknod) needs root"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message} (CI=true: runs as root)")
        pytest.skip(message)
    device = folder / "full"
    os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    return device


def rewriter(*arguments: object, **options) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rewriter", *map(str, arguments)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        **options,
    )


def assert_one_line(stderr: str, line: str) -> None:
    assert stderr == line + "\n", stderr  # no traceback, no "Exception ignored" at exit


# ---------------------------------------------------------------- a full disk


@pytest.mark.parametrize(
    "arguments",
    [[SAMPLE], ["--list", SAMPLE], ["--check", SAMPLE], ["--list", "--format", "json", SAMPLE]]
    + [["--help"], ["--version"]],
    ids=["rewrite", "list", "check", "json", "help", "version"],
)
def test_stdout_on_a_full_device_is_one_line_and_status_1(tmp_path: Path, arguments) -> None:
    device = full_device(tmp_path)
    with device.open("w") as stdout:
        run = subprocess.run(
            [sys.executable, "-m", "rewriter", *map(str, arguments)],
            cwd=ROOT,
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert run.returncode == 1
    assert_one_line(run.stderr, "error: cannot write to stdout: No space left on device")


def test_output_on_a_full_device_names_the_file(tmp_path: Path) -> None:
    device = full_device(tmp_path)
    run = rewriter(SAMPLE, "-o", device)
    assert run.returncode == 1
    assert_one_line(run.stderr, f"{device}: error: cannot write: No space left on device")
    assert stat.S_ISCHR(os.lstat(device).st_mode)


def test_stderr_on_a_full_device_still_exits_with_the_error_status(tmp_path: Path) -> None:
    device = full_device(tmp_path)
    with device.open("w") as stderr:
        run = subprocess.run(
            [sys.executable, "-m", "rewriter", str(tmp_path / "missing.mlir")],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=stderr,
            timeout=120,
        )
    assert run.returncode == 1
    assert run.stdout == b""


# ---------------------------------------------------------------- the reader goes away


@pytest.mark.parametrize("options", [[], ["--list"], ["--check"], ["--list", "--format", "json"]])
def test_a_closed_pipe_is_status_141_and_silent(options) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "rewriter", *options, str(SAMPLE)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    process.stdout.close()  # the reader is gone before anything is written
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=120) == 141, stderr
    assert stderr == ""


def rewriting_a_large_file(folder: Path) -> subprocess.Popen[bytes]:
    """``python -m rewriter`` on a file whose output (2 MB) is more than a pipe holds, its
    stdout and stderr pipes to the test."""
    path = folder / "big.mlir"
    path.write_text(SAMPLE.read_text() + PADDING)
    return subprocess.Popen(
        [sys.executable, "-m", "rewriter", str(path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_a_reader_that_stops_reading_cuts_the_output_and_the_status_says_so(
    tmp_path: Path,
) -> None:
    """``| head -c 100``: the reader takes 100 bytes of a 2 MB output and leaves. A buffered
    write that returned short after SIGPIPE once ended the run with status 0."""
    process = rewriting_a_large_file(tmp_path)
    assert len(process.stdout.read(100)) == 100
    process.stdout.close()
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=120) == 141, stderr
    assert stderr == ""


# ---------------------------------------------------------------- signals in the middle of a write

DRIVER = textwrap.dedent(
    """
    import os, signal, sys
    from rewriter import cli
    from rewriter.inputs import files

    # The signals as a shell's foreground job has them, whatever this test run inherited (a
    # run started in the background has SIGINT ignored, which the tool then keeps ignored),
    # then those the case ignores, as nohup leaves SIGHUP.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for name in ("SIGTERM", "SIGHUP"):
        signal.signal(getattr(signal, name), signal.SIG_DFL)
    for number in filter(None, os.environ["IGNORED"].split(",")):
        signal.signal(int(number), signal.SIG_IGN)
    ready, hold = int(os.environ["READY_FD"]), int(os.environ["HOLD_FD"])
    write_encoded = files.write_encoded

    def held(handle, data):
        data = data.encode() if isinstance(data, str) else data
        write_encoded(handle, data[: len(data) // 2])
        handle.flush()
        os.write(ready, b"half written\\n")
        os.read(hold, 1)  # until the test lets go (or a signal ends the run)
        write_encoded(handle, data[len(data) // 2 :])

    files.write_encoded = held
    sys.exit(cli.main(sys.argv[1:], prog="rewriter"))
    """
)


class HeldWrite:
    """``python -m rewriter ARGS`` in the driver: ``wait_half_written`` returns once the
    output is half written; ``release`` lets the write finish."""

    def __init__(self, *arguments: object, ignore: tuple[int, ...] = ()):
        ready_read, ready_write = os.pipe()
        self.hold_read, self.hold_write = os.pipe()
        env = {
            **os.environ,
            "READY_FD": str(ready_write),
            "HOLD_FD": str(self.hold_read),
            "IGNORED": ",".join(str(int(number)) for number in ignore),
        }
        self.process = subprocess.Popen(
            [sys.executable, "-c", DRIVER, *map(str, arguments)],
            cwd=ROOT,
            env=env,
            pass_fds=(ready_write, self.hold_read),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        os.close(ready_write)
        os.close(self.hold_read)
        self.ready = os.fdopen(ready_read, "rb")

    def wait_half_written(self) -> None:
        assert self.ready.readline() == b"half written\n"

    def release(self) -> None:
        os.write(self.hold_write, b"x")

    def finish(self) -> tuple[int, str]:
        stderr = self.process.stderr.read().decode()
        status = self.process.wait(timeout=120)
        os.close(self.hold_write)
        self.ready.close()
        return status, stderr


SIGNALS = [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)]


@pytest.mark.parametrize(("number", "status"), SIGNALS, ids=["SIGTERM", "SIGHUP", "SIGINT"])
@pytest.mark.parametrize("mode", ["-o", "--in-place"])
def test_a_signal_during_a_write_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, number: int, status: int, mode: str
) -> None:
    target = tmp_path / "target.mlir"
    old = SAMPLE.read_bytes() if mode == "--in-place" else b"OLD\n"
    target.write_bytes(old)
    arguments = [SAMPLE, "-o", target] if mode == "-o" else ["--in-place", target]
    held = HeldWrite(*arguments)
    held.wait_half_written()
    assert len(os.listdir(tmp_path)) == 2  # the target and its temporary file
    held.process.send_signal(number)
    code, stderr = held.finish()
    assert code == status, stderr
    assert stderr == ""
    assert target.read_bytes() == old
    assert os.listdir(tmp_path) == ["target.mlir"]


def test_an_ignored_sighup_stays_ignored_and_the_write_completes(tmp_path: Path) -> None:
    target = tmp_path / "target.mlir"
    held = HeldWrite(SAMPLE, "-o", target, ignore=(signal.SIGHUP,))
    held.wait_half_written()
    held.process.send_signal(signal.SIGHUP)
    held.release()
    code, stderr = held.finish()
    assert code == 0, stderr
    assert target.read_bytes() == REWRITTEN.read_bytes()
    assert os.listdir(tmp_path) == ["target.mlir"]


def test_sigterm_while_stdout_is_blocked_exits_143_without_a_traceback(tmp_path: Path) -> None:
    """A 2 MB output into a pipe that the test stops reading after its first bytes: the
    write blocks until the signal comes."""
    process = rewriting_a_large_file(tmp_path)
    assert process.stdout.read(1)  # writing has begun; the pipe holds 64 KB of 2 MB
    process.send_signal(signal.SIGTERM)
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=120) == 143
    assert stderr == ""
    process.stdout.close()
