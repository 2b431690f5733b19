"""OpenBLAS's kernels named for this CPU before OpenBLAS loads, where it would misjudge it.

An OpenBLAS built for many CPUs (``DYNAMIC_ARCH``, as Debian's) picks its kernels when it
loads, from the CPU's family and model. A CPU newer than the OpenBLAS is not in its list and
gets the oldest x86-64 kernels: Debian's OpenBLAS 0.3.21 on this machine's Xeon (family 6,
model 207, with AVX-512) says ``Prescott`` (SSE3), and a 512 x 512 ``cblas_sgemm`` takes
14.2 ms where its ``SkylakeX`` kernels take 2.3 ms; a block of four 512 x 512 layers took
21 ms of CPU on the compiled path against 7.4 ms under ``jax.jit``. OpenBLAS reads
``OPENBLAS_CORETYPE`` instead when it is set.

``load`` sets it, before the first library that needs ``libopenblas`` loads, from the CPU's
features in ``/proc/cpuinfo`` (what every x86-64 OpenBLAS kernel family needs): AVX-512
(F, CD, BW, DQ, VL) gives ``SkylakeX``, AVX2 and FMA give ``Haswell``, AVX gives
``Sandybridge``. These are the kernels OpenBLAS gives the CPUs it knows with those features
(Cooper Lake, Sapphire Rapids and Zen 4 use the SkylakeX products; Zen 1 to 3 Haswell's).
A value the user set, anything but Linux on x86-64, or a CPU without AVX is left alone. A
program in C that links the library and runs on such a CPU sets the variable itself
(README, "Deploying without Python").
"""

from __future__ import annotations

import os
import platform
from collections.abc import MutableMapping, Sequence

VARIABLE = "OPENBLAS_CORETYPE"
# (the flags a kernel family needs, its name for OPENBLAS_CORETYPE), best first
KERNELS: tuple[tuple[frozenset[str], str], ...] = (
    (frozenset({"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"}), "SkylakeX"),
    (frozenset({"avx2", "fma"}), "Haswell"),
    (frozenset({"avx"}), "Sandybridge"),
)


def core_for(flags: frozenset[str]) -> str | None:
    """The kernels for a CPU with ``flags``; None below AVX (OpenBLAS's own choice then)."""
    for needed, name in KERNELS:
        if needed <= flags:
            return name
    return None


def cpu_flags(cpuinfo: str = "/proc/cpuinfo") -> frozenset[str]:
    """The first CPU's ``flags`` in ``cpuinfo``; empty where it cannot be read."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                name, _, value = line.partition(":")
                if name.strip() == "flags":
                    return frozenset(value.split())
    except OSError:
        pass
    return frozenset()


def name_openblas_core(
    needed: Sequence[str],
    environ: MutableMapping[str, str] = os.environ,
    cpuinfo: str = "/proc/cpuinfo",
) -> str | None:
    """Set ``OPENBLAS_CORETYPE`` in ``environ`` for a library whose ``needed`` sonames
    include an OpenBLAS, as the module doc says; return the name set, or None."""
    if VARIABLE in environ or not any(name.startswith("libopenblas") for name in needed):
        return None
    if platform.system() != "Linux" or platform.machine() != "x86_64":
        return None
    core = core_for(cpu_flags(cpuinfo))
    if core is not None:
        environ[VARIABLE] = core
    return core
