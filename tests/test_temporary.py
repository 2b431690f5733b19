"""A signal that arrives just as a temporary folder or file is made leaves nothing behind.

``run_command`` turns SIGTERM into an exception raised at the next bytecode. Each test here
sends SIGTERM to this process from inside ``mkdtemp`` / ``mkstemp``, right after the folder or
file exists: the moment when the code that removes it is not yet in place. A CI run once
found a ``rewriter-*`` folder in ``$TMPDIR`` after a SIGTERM landed there.
"""

from __future__ import annotations

import os
import signal
import tempfile
from pathlib import Path

import pytest

from rewriter.compile import cache as compile_cache
from rewriter.compile import compile_module
from rewriter.inputs.files import write_output
from rewriter.inputs.streams import run_command
from rewriter.inputs.temporary import signals_held

ROOT = Path(__file__).resolve().parents[1]
RMS_NORM = ROOT / "samples" / "rms_norm" / "rms_norm.rewritten.mlir"
TERMINATED = 128 + signal.SIGTERM


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temporary folder, in which every ``mkdtemp`` and ``mkstemp`` sends SIGTERM to
    this process once what it made exists."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    _terminate_on_make(monkeypatch)
    return folder


def _terminate_on_make(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("mkdtemp", "mkstemp"):
        monkeypatch.setattr(tempfile, name, _terminating_after(getattr(tempfile, name)))


def _terminating_after(make):
    def made(*args, **kwargs):
        result = make(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGTERM)
        return result

    return made


def test_a_held_signal_arrives_when_the_block_ends():
    steps: list[str] = []

    def body() -> int:
        with signals_held():
            os.kill(os.getpid(), signal.SIGTERM)
            steps.append("after the kill, inside")
        steps.append("after the block")
        return 0

    assert run_command(body) == TERMINATED
    assert steps == ["after the kill, inside"]


@pytest.mark.toolchain
@pytest.mark.iree
def test_a_compile_terminated_as_its_work_folder_is_made_leaves_none(work: Path, tmp_path):
    output = tmp_path / "libmodel.so"
    status = run_command(lambda: compile_module(RMS_NORM, output, cache=False) and 0)
    assert status == TERMINATED
    assert list(work.iterdir()) == []
    assert not output.exists()


def test_an_output_terminated_as_its_temporary_file_is_made_is_as_it_was(work, tmp_path):
    output = tmp_path / "out.mlir"
    output.write_text("OLD")
    assert run_command(lambda: write_output(str(output), "NEW")) == TERMINATED
    assert sorted(os.listdir(tmp_path)) == ["out.mlir", "tmp"]
    assert output.read_text() == "OLD"


def test_a_cache_hit_terminated_as_its_private_folder_is_made_leaves_none(tmp_path, monkeypatch):
    monkeypatch.setenv("REWRITER_CACHE_DIR", str(tmp_path / "cache"))
    library = tmp_path / "library"
    library.write_text("built")
    compile_cache.store("k", {"library": library}, "[]", [])
    _terminate_on_make(monkeypatch)
    entries = tmp_path / "cache" / "compile"
    assert [p.name for p in entries.iterdir()] == ["k"]

    def looked_up() -> int:
        with compile_cache.lookup("k") as hit:
            assert hit is not None
        return 0

    assert run_command(looked_up) == TERMINATED
    assert [p.name for p in entries.iterdir()] == ["k"]
