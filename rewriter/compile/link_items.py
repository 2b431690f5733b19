"""What ``--link`` (``compile_module(link=...)``) names, as a C programmer reads it.

- ``-lNAME`` (also ``-l:FILE``) and a bare ``NAME``: the library the linker finds as
  ``-lNAME`` (``libNAME.so`` or ``libNAME.a`` on its search path), as ``cc ... -lNAME``;
- a path (it contains a ``/``, names an existing file, or ends in ``.so``, ``.so.N`` or
  ``.a``): that file, linked by its absolute path with an rpath to its folder, so the
  module finds it at load time. A path that does not exist is an error before any stage
  runs, never a ``-l`` of a name with slashes.

On the command line ``--link -lfoo`` is taken like ``--link=-lfoo`` (argparse would read
``-lfoo`` as an option of its own).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

_LIBRARY_FILE = re.compile(r"\.(?:so(?:\.[0-9]+)*|a)$")


def library_name(item: str) -> str | None:
    """The ``-l`` name ``item`` stands for (``foo`` for ``-lfoo`` and ``foo``, ``:libfoo.so.1``
    for ``-l:libfoo.so.1``), or None when it is a path."""
    if item.startswith("-l"):
        return item[2:]
    if "/" in item or _LIBRARY_FILE.search(item) or Path(item).exists():
        return None
    return item


def link_problem(item: str) -> str | None:
    """Why ``item`` names no library, or None."""
    name = library_name(item)
    if name == "" or item == "":
        return f"--link {item!r} names no library"
    if name is None and not Path(item).is_file():
        return f"--link {item}: no such file"
    return None


def link_arguments(item: str) -> list[str]:
    """The linker's arguments for ``item`` (one that ``link_problem`` accepts)."""
    name = library_name(item)
    if name is not None:
        return [f"-l{name}"]
    path = Path(item).resolve()
    return [str(path), f"-Wl,-rpath,{path.parent}"]


def joined_link_values(argv: Sequence[str]) -> list[str]:
    """``argv`` with every ``--link VALUE`` as ``--link=VALUE``, so that a value starting
    with ``-`` (``-lfoo``) is the option's value, not an option."""
    joined: list[str] = []
    values = iter(argv)
    for argument in values:
        if argument == "--":
            joined += [argument, *values]
            break
        if argument == "--link":
            value = next(values, None)
            joined.append("--link" if value is None else f"--link={value}")
        else:
            joined.append(argument)
    return joined


def library_file(item: str, clang: str) -> Path | None:
    """The file ``item`` links: its path, or what the linker finds for ``-lNAME``: in the
    folders of ``$LIBRARY_PATH`` (which the compiler driver hands the linker), then on the
    compiler's own search path (``clang -print-file-name``); None when it finds none."""
    import subprocess

    name = library_name(item)
    if name is None:
        return Path(item).resolve()
    candidates = [name[1:]] if name.startswith(":") else [f"lib{name}.so", f"lib{name}.a"]
    for folder in filter(None, os.environ.get("LIBRARY_PATH", "").split(os.pathsep)):
        for candidate in candidates:
            if (Path(folder) / candidate).is_file():
                return Path(folder) / candidate
    for candidate in candidates:
        found = subprocess.run(
            [clang, f"-print-file-name={candidate}"], capture_output=True, text=True, check=False
        ).stdout.strip()
        if found and Path(found).is_absolute() and Path(found).exists():
            return Path(found)
    return None


def defined_symbols(files: Iterable[Path], nm: str) -> set[str]:
    """The symbols that the libraries ``files`` define (dynamic ones of a shared object,
    global ones of an archive), as ``nm`` lists them; a file nm cannot read defines none."""
    import subprocess

    symbols: set[str] = set()
    for file in files:
        options = ["--defined-only", "--format=just-symbols"]
        if file.suffix != ".a":
            options.insert(0, "--dynamic")
        listed = subprocess.run(
            [nm, *options, str(file)], capture_output=True, text=True, check=False
        )
        lines = (line.strip() for line in listed.stdout.splitlines())
        symbols.update(line for line in lines if line and not line.endswith(":"))  # members
    return symbols
