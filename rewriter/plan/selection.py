"""Contract rule 6: which custom calls are rewritten.

Every custom call is a user kernel except the targets that carry compiler meaning
(sharding, placement, shape checks, buffers, host callbacks, device kernels, and ops
other compilers implement themselves) and calls with `called_computations`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

from ..syntax import model

COMPILER_TARGETS: dict[str, tuple[str, ...]] = {
    "a sharding annotation": (
        "Sharding",
        "SPMDFullToShardShape",
        "SPMDShardToFullShape",
        "CustomSPMDPartitioning",
        "InspectSharding",
        "LayoutConstraint",
        "xla.sdy.*",
        "X64Combine",
    ),
    "a placement annotation": (
        "annotate_device_placement",
        "MoveToHost",
        "MoveToDevice",
        "PinToDevice",
        "PinToDeviceSram",
    ),
    "a shape check or dynamic-shape op": ("shape_assertion", "stablehlo.dynamic_*"),
    "a buffer or effect marker": ("AllocateBuffer", "CreateBuffer", "Pin", "Unpin", "dce_sink"),
    "a host callback": (
        "xla_ffi_python_cpu_callback",
        "xla_ffi_partitioned_python_cpu_callback",
        "xla_ffi_python_gpu_callback",
        "xla_ffi_partitioned_python_gpu_callback",
        "xla_python_cpu_callback",
        "xla_python_gpu_callback",
    ),
    "a device kernel": (
        "tpu_custom_call",
        "mosaic_gpu*",
        "__gpu$xla.gpu.triton",
        "triton_kernel_call*",
        "__cudnn$fusion",
        "tf.call_tf_function",
    ),
    "an op that compilers implement themselves": (
        "Eigh",
        "Qr",
        "ProductOfElementaryHouseholderReflectors",
        "LuDecomposition",
        "ApproxTopK",
        "TopK",
        "mhlo.*",
    ),
}


def patterns(value: str | Sequence[str] | None, name: str) -> tuple[str, ...] | None:
    """``targets``/``skip`` as given to the API: a string is one glob pattern (iterating it
    would make a pattern of each character), an iterable gives one pattern per item."""
    if value is None or isinstance(value, str):
        return None if value is None else (value,)
    found = tuple(value)
    for item in found:
        if not isinstance(item, str):
            raise TypeError(
                f"{name} takes glob patterns (a str or an iterable of str), "
                f"not {type(item).__name__} {item!r}"
            )
    return found


def exact_pattern(target: str) -> str:
    """A glob pattern that matches ``target`` alone (``*``, ``?`` and ``[`` escaped)."""
    return re.sub(r"([*?[])", r"[\1]", target)


@functools.lru_cache(maxsize=4096)
def compiler_meaning(target: str) -> str | None:
    """Why ``target`` is not a user kernel, or None when it is one. Remembered per target:
    a file asks for each shape of each target, and the globs cost about 30 us a target."""
    for reason, patterns in COMPILER_TARGETS.items():
        if any(fnmatchcase(target, pattern) for pattern in patterns):
            return reason
    return None


@dataclass(frozen=True)
class OptionWords:
    """How the caller spells the options, for the reasons and messages that name them:
    the API's keywords, or the command line's options."""

    targets: str
    skip: str
    platform: str = "platform="
    platforms: str = "platforms="


API_WORDS = OptionWords("targets=", "skip=")
CLI_WORDS = OptionWords("--target", "--skip", "--platform", "--platforms")


def skip_reason(
    call: model.CustomCall,
    targets: Sequence[str] | None,
    skip: Sequence[str] | None,
    target: str | None = None,
    words: OptionWords = API_WORDS,
) -> str | None:
    """Why ``call`` (called with ``target``, its own by default) is left alone, or None
    when it is rewritten; an option is named in ``words``."""
    target = call.target if target is None else target
    reason = compiler_meaning(target)
    if reason:
        return f"target carries compiler meaning ({reason})"
    if call.attributes.get("called_computations") is not None:
        return "the call has called_computations"
    if targets and not any(fnmatchcase(target, pattern) for pattern in targets):
        return f"not matched by {words.targets}"
    if skip and any(fnmatchcase(target, pattern) for pattern in skip):
        return f"matched by {words.skip}"
    return None
