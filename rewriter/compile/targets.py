"""What machine a compiled module is for: a target triple and a CPU, checked before any stage.

``--target-triple T`` cross-compiles (clang's ``--target=T``: the LLVM IR of the pipeline
is the same for every 64-bit target, and clang compiles and links it for T with T's
libraries); ``--target-cpu`` names a CPU of T's architecture, or ``native`` (the CPU that
compiles: this machine's triple only) or ``generic`` (any CPU of the architecture). Without
a triple the CPU defaults to ``native``, with one to ``generic``. A CPU clang does not know
for T is an error at once, naming T's CPUs (clang's ``-mcpu=help``), never after the
pipeline ran. The default target (no triple, the native CPU) needs only clang's own
triple, which nothing the user named can make wrong: it is asked while the stages run
(``resolve_target_later``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from .toolchain import ToolchainError

NATIVE = "native"
PORTABLE = "generic"

# Architectures whose clang takes a CPU name as -march=NAME; the others take -mcpu=NAME.
_MARCH_ARCHITECTURES = ("x86_64", "i386", "i486", "i586", "i686")


@dataclass(frozen=True)
class Target:
    triple: str | None  # None: the triple clang compiles for by default (this machine)
    cpu: str

    def clang_flags(self, normalized_triple: str) -> list[str]:
        """clang's flags: ``--target=T`` for a triple, then the CPU (``-march=`` on x86,
        ``-mcpu=`` elsewhere; none for ``generic``)."""
        flags = [f"--target={self.triple}"] if self.triple else []
        if self.cpu == PORTABLE:
            return flags
        option = "-march" if architecture(normalized_triple) in _MARCH_ARCHITECTURES else "-mcpu"
        return [*flags, f"{option}={self.cpu}"]


def architecture(triple: str) -> str:
    return triple.split("-", 1)[0]


def resolve_target(clang: str, triple: str | None, cpu: str | None) -> tuple[Target, str]:
    """The target of ``triple`` and ``cpu`` (``cpu`` None: ``native`` without a triple,
    ``generic`` with one), checked with ``clang``, and its normalized triple; a
    ToolchainError for a triple clang cannot compile for, ``native`` for another
    architecture, or a CPU that clang does not know for the triple (naming those it knows)."""
    host = _normalized(clang, None)
    normalized = _normalized(clang, triple) if triple else host
    if triple:
        known_cpus(clang, normalized)  # a triple LLVM has no backend for fails here
    chosen = cpu or (PORTABLE if triple else NATIVE)
    if chosen == PORTABLE:
        return Target(triple, chosen), normalized
    if chosen == NATIVE:
        if architecture(normalized) != architecture(host):
            raise ToolchainError(
                f"--target-cpu native is the CPU of this machine ({architecture(host)}), not "
                f"one of {normalized}: name one of its CPUs, or generic (the default with "
                "--target-triple)"
            )
        return Target(triple, chosen), normalized
    known = known_cpus(clang, normalized)
    if chosen not in known:
        raise ToolchainError(
            f"unknown CPU '{chosen}' for {normalized}; clang knows: {', '.join(known)} "
            f"(or generic{', native' if architecture(normalized) == architecture(host) else ''})"
        )
    return Target(triple, chosen), normalized


def resolve_target_later(
    clang: str, triple: str | None, cpu: str | None
) -> Callable[[], tuple[Target, str]]:
    """``resolve_target``'s answer, given by the function returned. A triple or CPU the
    caller named is checked now, so that a wrong one is an error before any stage runs;
    the default target is asked of clang on a thread of its own (a process: 50 ms of a new
    compile's second), and the function waits for it."""
    if triple is not None or cpu not in (None, NATIVE):
        resolved = resolve_target(clang, triple, cpu)
        return lambda: resolved
    asking = ThreadPoolExecutor(max_workers=1)
    answer = asking.submit(resolve_target, clang, triple, cpu)
    asking.shutdown(wait=False)
    return answer.result


@functools.cache
def _normalized(clang: str, triple: str | None) -> str:
    """clang's normalized form of ``triple`` (None: its default, this machine's)."""
    import subprocess

    command = [clang, *([f"--target={triple}"] if triple else []), "-print-target-triple"]
    run = subprocess.run(command, capture_output=True, text=True, check=False)
    if run.returncode != 0 or not run.stdout.strip():
        raise ToolchainError(f"clang cannot compile for the target triple {triple!r}")
    return run.stdout.strip()


@functools.cache
def known_cpus(clang: str, triple: str) -> tuple[str, ...]:
    """The CPUs clang knows for ``triple`` (``-mcpu=help``); a ToolchainError when LLVM has
    no backend for it."""
    import subprocess

    run = subprocess.run(
        [clang, f"--target={triple}", "-mcpu=help"], capture_output=True, text=True, check=False
    )
    text = run.stderr + run.stdout
    if "Available CPUs for this target:" not in text:
        reason = text.strip().splitlines()[-1] if text.strip() else f"status {run.returncode}"
        raise ToolchainError(f"clang cannot compile for the target triple {triple}: {reason}")
    listed = text.split("Available CPUs for this target:", 1)[1]
    return tuple(line.strip() for line in listed.splitlines() if line.startswith("\t"))
