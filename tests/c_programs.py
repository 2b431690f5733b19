"""C test programs of the runtime pieces in ``abi/``: built with gcc, run as they are or
under valgrind's leak check, and the C a host uses to count its threads. What
``test_parallel_loops``, ``test_blas_threads`` and ``test_iree_native_sorts`` share."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from mlir_tools import require_tool

# A C function counting the threads of the process that calls it (Linux: /proc).
THREADS_NOW = r"""
static int threads_now(void)
{
    int count = 0;
    DIR *tasks = opendir("/proc/self/task");
    for (struct dirent *entry; (entry = readdir(tasks)) != NULL;)
        count += entry->d_name[0] != '.';
    closedir(tasks);
    return count;
}
"""

# valgrind's options: any error or any block not freed at the end fails the run (status 3).
VALGRIND = ["valgrind", "--error-exitcode=3", "--leak-check=full", "--errors-for-leak-kinds=all"]
# The environment of a run: no variable of the test process leaks into it.
PLAIN_PATH = {"PATH": "/usr/bin:/bin"}


def built(
    folder: Path,
    name: str,
    source: str,
    inputs: Sequence[str | Path] = (),
    flags: Sequence[str] = ("-std=c11", "-O1"),
    libraries: Sequence[str] = ("-lpthread",),
) -> Path:
    """``source`` written to ``folder/NAME.c`` and built by gcc (warnings are errors) with
    ``inputs`` (more sources or libraries) into the program ``folder/NAME``."""
    require_tool("gcc")
    (folder / f"{name}.c").write_text(source)
    program = folder / name
    command = ["gcc", *flags, "-Wall", "-Werror", str(folder / f"{name}.c")]
    command += [*map(str, inputs), *libraries, "-o", str(program)]
    subprocess.run(command, check=True)
    return program


def run_program(
    program: Path, environment: Mapping[str, str] | None = None, *, valgrind: bool = False
) -> subprocess.CompletedProcess[str]:
    """``program`` run with ``PLAIN_PATH`` and ``environment``; under valgrind (``VALGRIND``)
    when asked."""
    if valgrind:
        require_tool("valgrind")
    command = [*VALGRIND, str(program)] if valgrind else [str(program)]
    variables = {**PLAIN_PATH, **(environment or {})}
    return subprocess.run(command, capture_output=True, text=True, env=variables)
