"""Which of IREE's CPU drivers runs a module when ``load`` is not told.

``local-task`` hands every dispatch to a worker thread and waits for it; ``local-sync``
runs everything on the calling thread. A handover costs 5 to 10 us on a busy 2-core machine
(``benchmarks/call_overhead.py``: ``x + 1`` on 10 floats takes 14 us a call on
``local-task``, 8 us on ``local-sync``; ``benchmarks/speed.py``'s 64 FFI calls on 16
floats 1.7 to 2.8x and 1.13 to 1.17x ``jax.jit``), more than a dispatch over a few
hundred elements takes, and no such dispatch is worth splitting over threads. So a module
whose every tensor (arguments, results, constants, intermediates: every ``tensor<...>``
type of its text) has at most ``SMALL_TENSOR`` elements, all of static shape, runs on
``local-sync``; any other module on ``local-task``. ``compile_module`` records the answer
in the ``.vmfb`` (``rewriter.small_tensors``); a ``.vmfb`` without it runs on
``local-task``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path

SMALL_TENSOR = 1024  # elements: a 32x32 block, 4 KB of f32
SMALL_TENSORS_KEY = "rewriter.small_tensors"  # the module attribute of a .vmfb that records it
_DIMS = re.compile(r"tensor<((?:[0-9?]+x)*)")


def chosen_driver(path: Path, recorded: Mapping[str, str] | None) -> str:
    """``local-sync`` for a module whose tensors are all small (module docstring): a
    ``.vmfb`` by what ``compile_module`` recorded in it (``recorded``, its module
    attributes), a ``.mlir`` (``recorded`` None) read here; ``local-task`` otherwise."""
    if recorded is not None:
        return "local-sync" if recorded.get(SMALL_TENSORS_KEY) == "true" else "local-task"
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError):
        return "local-task"  # compiling it says what is wrong
    return "local-sync" if only_small_tensors(text) else "local-task"


def only_small_tensors(text: str) -> bool:
    """Whether every ``tensor<...>`` type in ``text`` is static, of at most
    ``SMALL_TENSOR`` elements."""
    for match in _DIMS.finditer(text):
        dims = match.group(1).split("x")[:-1]
        if "?" in dims or math.prod(int(d) for d in dims) > SMALL_TENSOR:
            return False
    return True
