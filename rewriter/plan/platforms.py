"""Modules exported for a GPU: the rewrite turns their calls into CPU functions all the same.

``jax.export`` writes no platform into the module's text (``Exported.platforms`` holds it;
the text's module attributes are ``mhlo.num_partitions``, ``mhlo.num_replicas`` and
``jax.uses_shape_polymorphism``, whatever the platform). What the text shows is the
kernels: a module exported for CUDA calls jaxlib's CUDA kernels (``cusolver_potrf_ffi``,
``cu_threefry2x32_ffi``, ...), one for ROCm its ROCm kernels (``hipsolver_potrf_ffi``,
``hip_lu_pivots_to_permutation``). A rewritten call of such a target needs a CPU function
of that name, which no library provides: each target is a warning, once. A module exported
for platforms that leave out the CPU is an error unless a platform is chosen
(``platform_choice.check_platforms``), and then a warning, as is the choice of another
platform's code in a module exported for several.

The names are the prefixes of the GPU libraries jaxlib calls, not every name that starts
with ``cu`` or ``hip``: a user's ``cumsum_ffi`` or ``hippo_kernel`` is no GPU kernel.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

GPU_TARGETS = {
    "CUDA": ("cu_", "cublas", "cudnn", "cufft", "curand", "cusolver", "cusparse", "cuda_"),
    "ROCm": ("hip_", "hipblas", "hipfft", "hiprand", "hipsolver", "hipsparse", "roc"),
}
_ROCM = re.compile(r"roc(?:blas|fft|rand|solver|sparse|m)[_a-z0-9]*")


@functools.lru_cache(maxsize=4096)
def gpu_platform(target: str) -> str | None:
    """The GPU platform whose library kernel ``target`` names (``CUDA``, ``ROCm``), or None."""
    for platform, prefixes in GPU_TARGETS.items():
        for prefix in prefixes:
            if prefix == "roc":
                if _ROCM.fullmatch(target):
                    return platform
            elif target.startswith(prefix):
                return platform
    return None


def gpu_target_message(target: str, platform: str, symbol: str) -> str:
    """The warning for a rewritten call of a GPU library kernel."""
    return (
        f"custom call target '{target}' is a {platform} kernel (the module was exported for a "
        f"GPU): @{symbol} will need a CPU function of that name; export for the CPU "
        "(jax.export's platforms=['cpu']) to get CPU kernels"
    )


def platforms_message(platforms: Sequence[str]) -> str | None:
    """The warning for an ``Exported`` made for ``platforms``, when the CPU is not one."""
    if not platforms or "cpu" in (platform.lower() for platform in platforms):
        return None
    named = ", ".join(platforms)
    return (
        f"the module was exported for {named}, not for the CPU: its kernels and lowerings are "
        f"{named}'s; export with platforms=['cpu'] to compile it for the CPU"
    )


def chosen_platform_message(platform: str, option: str) -> str | None:
    """The warning for a module whose code for ``platform`` is kept (``option`` names the
    choice as the caller wrote it), when that is not the CPU's."""
    if platform.lower() == "cpu":
        return None
    return (
        f"the rewrite keeps {platform}'s code ({option}): its kernels and lowerings are "
        f"{platform}'s; keep cpu's to compile it for the CPU"
    )
