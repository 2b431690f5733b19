"""Which of IREE's CPU drivers runs a module when ``load`` is not told.

``local-task`` hands every dispatch to a worker thread and waits for it; ``local-sync``
runs everything on the calling thread. A handover costs 5 to 10 us of the caller's time
(``benchmarks/call_overhead.py``: ``x + 1`` on 10 floats), and waking the workers and
sharing each dispatch among them take CPU time too, so ``local-task`` takes more CPU time
than ``local-sync`` on every program of ``benchmarks/shape_sweep.py``: 5 to 30% on the
largest, 2 to 3 times on the smallest. What it can win is wall time, when a second core is
free and the dispatches are large enough to split: on a 2-core machine, from about a
thousand million operations a call (``shape_sweep.py --wall``: the blocks of batch 300 or
width 768), and not below (the same blocks at batch 128 and width 512, half a thousand
million, run sooner on ``local-sync``).
So a module whose estimated work (``work.py``) is under ``LARGE_WORK`` runs on
``local-sync``, a larger one, or one of dynamic shapes (of unknown work), on ``local-task``.
``compile_module`` records the estimate in the ``.vmfb`` (``rewriter.work``); a ``.vmfb``
without it runs on ``local-task``.

The task executor's flags (``iree.runtime.flags.parse_flags``, before the driver is made)
do not make the handover cheaper: ``--task_worker_spin_us=20`` makes a call of ``x + 1``
take 4 times the CPU time (the workers spin; 200 us: 19 times), and one worker
(``--task_topology_group_count=1``) saves a tenth to a fifth of the CPU time but takes 1.75
times the wall time (on 10 and 100,000 floats: the dispatches still go to the worker, which
now works alone). ``load`` leaves them as IREE sets them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from .work import estimated_work

LARGE_WORK = 1_000_000_000  # operations a call (work.py) from which local-task runs it
WORK_KEY = "rewriter.work"  # the module attribute of a .vmfb that records the estimate


def chosen_driver(path: Path, recorded: Mapping[str, str] | None) -> str:
    """The driver of a ``.vmfb`` by what ``compile_module`` recorded in it (``recorded``,
    its module attributes), of a ``.mlir`` (``recorded`` None) by its text read here."""
    if recorded is not None:
        return driver_for(recorded_work(recorded))
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError):
        return "local-task"  # compiling it says what is wrong
    return driver_for(estimated_work(text))


def driver_for(work: int | None) -> str:
    """``local-sync`` under ``LARGE_WORK``, ``local-task`` from it or for an unknown work."""
    return "local-sync" if work is not None and work < LARGE_WORK else "local-task"


def recorded_work(attributes: Mapping[str, str]) -> int | None:
    """The work estimate a ``.vmfb``'s module attributes hold; None when they hold none
    (dynamic shapes, or a module that ``compile_module`` did not make)."""
    try:
        work = json.loads(attributes.get(WORK_KEY, "null"))
    except ValueError:
        return None
    return work if isinstance(work, int) and not isinstance(work, bool) else None
