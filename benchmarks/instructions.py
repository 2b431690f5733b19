"""Instructions a rewrite takes, counted by valgrind: the figures to judge a change by.

``python benchmarks/instructions.py FILE... [--base REV] [--runs N]``

On this shared machine a time moves by up to 1.7x from one run to the next (see
``call_dense.py``), while the number of instructions a rewrite executes does not move at
all. For each file, a fresh Python runs under ``valgrind --tool=callgrind`` twice: once
reading the file and rewriting it once (the grammar loaded, the caches warm), once doing
that and then ``N`` more rewrites (default 2); the difference over ``N`` is one rewrite's
instructions, without the start-up. ``PYTHONHASHSEED=0`` makes both runs hash alike.
``--base REV`` counts the rewriter of another commit too (``git archive`` of its
``rewriter/`` and ``grammar/``), and prints the change. Instructions are not time:
Python executes fewer instructions a cycle than jaxlib's C++ does (on this machine a
call-dense file costs about as many instructions in both, and about 1.4x the time in ours).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The child: rewrite the file once (loading everything), then RUNS more times.
_CHILD = (
    "import sys; sys.path.insert(0, sys.argv[1]); import rewriter; "
    "text = open(sys.argv[2]).read(); rewriter.rewrite(text).text\n"
    "for _ in range(int(sys.argv[3])): rewriter.rewrite(text).text"
)
_COLLECTED = re.compile(r"^==\d+== Collected : (\d+)$", re.MULTILINE)


def collected(report: str) -> int:
    """The instruction count in callgrind's report (its standard error)."""
    found = _COLLECTED.search(report)
    if found is None:
        raise RuntimeError(f"no instruction count in valgrind's report:\n{report[-2000:]}")
    return int(found.group(1))


def instructions(valgrind: str, root: Path, path: Path, runs: int) -> int:
    """One rewrite's instructions: the difference of ``runs`` more rewrites, over ``runs``."""
    counts = []
    for more in (0, runs):
        done = subprocess.run(
            [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null"]
            + [sys.executable, "-c", _CHILD, str(root), str(path), str(more)],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"the rewrite of {path} failed under valgrind:\n{done.stderr}")
        counts.append(collected(done.stderr))
    return (counts[1] - counts[0]) // runs


def archive(revision: str, into: Path) -> Path:
    """The ``rewriter/`` and ``grammar/`` of ``revision``, unpacked under ``into``."""
    packed = subprocess.run(
        ["git", "-C", str(ROOT), "archive", revision, "rewriter", "grammar"],
        capture_output=True,
        check=False,
    )
    if packed.returncode != 0:
        raise SystemExit(f"error: git archive {revision}: {packed.stderr.decode().strip()}")
    tar = into / "base.tar"
    tar.write_bytes(packed.stdout)
    with tarfile.open(tar) as opened:
        if hasattr(tarfile, "data_filter"):  # Python 3.10.12 and later
            opened.extractall(into / "base", filter="data")
        else:
            opened.extractall(into / "base")  # our own commit's files
    return into / "base"


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("files", nargs="+", type=Path, help="MLIR files to rewrite")
    options.add_argument("--base", metavar="REV", help="also count this commit's rewriter")
    options.add_argument("--runs", type=int, default=2, help="rewrites counted (default 2)")
    arguments = options.parse_args()
    if arguments.runs < 1:
        options.error("--runs must be at least 1")
    for path in arguments.files:
        if not path.is_file():
            options.error(f"no such file: {path}")
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("error: valgrind not found: run scripts/install.sh")
    with tempfile.TemporaryDirectory() as scratch:
        base = archive(arguments.base, Path(scratch)) if arguments.base else None
        heading = f"{'file':28} {'this tree':>12}"
        if base is not None:
            heading += f" {arguments.base[:12]:>12} {'change':>7}"
        print(heading)
        for path in arguments.files:
            ours = instructions(valgrind, ROOT, path, arguments.runs)
            row = f"{path.name:28} {ours / 1e6:11.1f}M"
            if base is not None:
                theirs = instructions(valgrind, base, path, arguments.runs)
                row += f" {theirs / 1e6:11.1f}M {100 * (ours - theirs) / theirs:+6.1f}%"
            print(row, flush=True)


if __name__ == "__main__":
    main()
