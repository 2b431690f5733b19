"""What the benchmark scripts share: the machine they ran on, markdown rows, and
``--markdown``, which writes a script's printed figures into its own section of
benchmarks/README.md.

A script prints as it measures (tables as markdown rows, notes as lines). With
``--markdown`` the same text goes into the README between ``<!-- NAME: written by ... -->``
and ``<!-- end NAME -->``, after a line naming the command and the machine: the README's
table is always what the script last printed, never typed by hand.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib.metadata
import io
import os
import platform
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

README = Path(__file__).resolve().with_name("README.md")


def sizes(text: str) -> list[int]:
    """``--sizes``: counts separated by commas (an argparse ``type``)."""
    try:
        return [int(size) for size in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"counts separated by commas, not {text!r}") from None


def aligned(array: np.ndarray, alignment: int = 64) -> np.ndarray:
    """A copy of ``array`` whose data starts on an ``alignment``-byte boundary. ``jax.jit``
    reads a numpy argument so aligned in place and copies any other (a 16 MB argument:
    0.18 ms against 0.92 for a sum of it on this machine), and numpy aligns its arrays to
    16 bytes only: without this, ``jax.jit``'s time of one program moves with where numpy
    put the array."""
    import numpy as np

    buffer = np.empty(array.nbytes + alignment, np.uint8)
    start = -buffer.ctypes.data % alignment
    copy = buffer[start : start + array.nbytes].view(array.dtype).reshape(array.shape)
    copy[...] = array
    return copy


def row(*cells: object) -> str:
    """A markdown table row."""
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def header(*names: str) -> str:
    """A markdown table's header and its rule."""
    return row(*names) + "\n" + row(*("---" for _ in names))


def machine() -> str:
    """The date, the CPU (with its family and model: "AMD EPYC" names several
    generations), the cores and memory, Python and jax, the OpenBLAS settings of the
    environment (``OPENBLAS_CORETYPE`` names the kernels of the compiled path's products),
    and the load average now."""
    cpu = "unknown CPU"
    memory = ""
    with contextlib.suppress(OSError):
        fields: dict[str, str] = {}
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            name, _, value = line.partition(":")
            fields.setdefault(name.strip(), value.strip())
            if not line.strip():
                break  # the first CPU's
        cpu = fields.get("model name", cpu)
        if "cpu family" in fields and "model" in fields:
            cpu += f" (family {fields['cpu family']}, model {fields['model']})"
    with contextlib.suppress(OSError, ValueError, IndexError):
        total = Path("/proc/meminfo").read_text().splitlines()[0].split()[1]
        memory = f", {int(total) / 2**20:.0f} GB"
    versions = []
    for package in ("jax", "jaxlib", "iree-base-compiler"):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            versions.append(f"{package} {importlib.metadata.version(package)}")
    openblas = sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith("OPENBLAS_"))
    settings = f"; {', '.join(openblas)}" if openblas else "; no OPENBLAS_ setting"
    return (
        f"{datetime.date.today().isoformat()}, {cpu}, {os.cpu_count()} cores{memory}, "
        f"Python {platform.python_version()}, {', '.join(versions)}{settings}; "
        f"load average {os.getloadavg()[0]:.1f} at the start"
    )


class _Tee(io.TextIOBase):
    def __init__(self, *streams):
        self.streams = streams

    def write(self, text: str) -> int:
        for stream in self.streams:
            stream.write(text)
        return len(text)

    def flush(self) -> None:
        for stream in self.streams:
            stream.flush()


@contextlib.contextmanager
def figures(name: str, markdown: bool) -> Iterator[None]:
    """Print the machine, then what the block prints; with ``markdown``, once the block
    has finished, write all of it into README's section ``name``."""
    printed = io.StringIO()
    started = machine()
    with contextlib.redirect_stdout(_Tee(sys.stdout, printed)):
        print(started)
        print()
        yield
        print()
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
    if markdown:
        given = [argument for argument in sys.argv[1:] if argument != "--markdown"]
        command = " ".join(["python", f"benchmarks/{Path(sys.argv[0]).name}", *given])
        write_section(name, command, printed.getvalue())


def write_section(name: str, command: str, printed: str) -> None:
    """Replace README's section ``name`` by ``printed`` as markdown, under ``command``
    (how it was run)."""
    begin = f"<!-- {name}: written by benchmarks/{name}.py --markdown -->"
    end = f"<!-- end {name} -->"
    text = README.read_text(encoding="utf-8")
    if begin not in text or end not in text:
        raise SystemExit(f"{README} has no section {begin} ... {end}")
    before, rest = text.split(begin, 1)
    _, after = rest.split(end, 1)
    body = f"`{command}` printed:\n\n{as_markdown(printed)}"
    new = f"{before}{begin}\n{body}\n{end}{after}"
    temporary = README.with_suffix(".md.tmp")
    temporary.write_text(new, encoding="utf-8")
    temporary.replace(README)


def as_markdown(printed: str) -> str:
    """Table rows as they are; every other line a paragraph of its own."""
    blocks: list[list[str]] = []
    for line in printed.splitlines():
        line = line.rstrip()
        if not line:
            continue
        table = line.startswith("|")
        if blocks and table and blocks[-1][0].startswith("|"):
            blocks[-1].append(line)
        else:
            blocks.append([line])
    return "\n\n".join("\n".join(block) for block in blocks) + "\n"
