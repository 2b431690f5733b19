"""Which of IREE's CPU drivers runs a module when ``load`` is not told.

``local-task`` hands every dispatch to a worker thread and waits for it; ``local-sync``
runs everything on the calling thread. A handover costs 5 to 10 us of the caller's time
(``benchmarks/call_overhead.py``: ``x + 1`` on 10 floats), and waking the workers and
sharing each dispatch among them take CPU time too, so ``local-task`` takes more CPU time
than ``local-sync`` on every program of ``benchmarks/shape_sweep.py``: 5 to 30% on the
largest, 2 to 3 times on the smallest. What it can win is wall time, when a second core is
free and the dispatches are large enough to split: on a 2-core machine, from about half a
thousand million operations a call (``shape_sweep.py``'s wall times, two runs: the block of
batch 128 and width 512, 537 million, took 0.91x ``jax.jit`` on ``local-task`` against
0.94-1.31x on ``local-sync``, for 1.11-1.22x ``jax.jit``'s CPU time against 0.71-0.88x;
the attentions of 200 tokens in f32 and of 128 tokens and width 256 in f64, 583 and 671
million, 0.58-0.85x against 1.00-1.55x; the conv of 48x48 images and 5x5 kernels in f32,
560 million, 0.55x against 0.93-1.01x). Below that, ``local-sync``'s wall time is mostly
within 1.1x ``jax.jit``'s and ``local-task`` costs up to 1.3-1.4x its CPU time (the f64
block of batch 128 and width 256, the attentions of batch 1): their time goes to products,
which ``local-task`` gets cut in blocks that pack their operands again
(``blas_products.py``).
Element operations over large tensors (elementwise ops, gathers, windows) split at no such
cost: IREE cuts each of their dispatches into many workgroups (``distribution = [4096]`` of
a vector of floats), which the workers share. ``benchmarks/op_complexity.py``'s ops, one
thread (``local-sync``) against ``local-task``, wall ms on this 2-core machine: a gather of
512,000 floats 0.83 against 0.52 (4,096,000: 9.7 against 5.3), three doublings of 512,000
0.31 against 0.21 (4,096,000: 2.7 against 1.8), a 3x3 max window over 512,000 0.80 against
0.60, for the same CPU time from about a million element operations (gather: 0.82 ms each
way); at 64,000 floats the handover takes what the second thread wins (0.074 against 0.066
ms, the window 0.062 against 0.089), so an op of fewer elements (``work.SHARED_SIZE``)
counts as one no second thread shares, however many there are (each is a dispatch to hand
over). Scatters, sorts, scans (jax's ``cumsum``) and reductions to a scalar are one
workgroup, which no second thread shares: a ``scatter`` of 4,096,000 takes 17 to 18 ms
against 20 (its index arithmetic, five elementwise ops of the size, split), a ``cumsum``
10.5 against 10.1, an ``argmax`` 11.4 against 11.5. An element of theirs takes about ten
times (``SERIAL_WEIGHT``) an element operation of the others on one thread (at 4,096,000:
the scatter 4.3 ns, ``cumsum`` 2.6, ``argmax`` 2.8, the gather 0.25 ns an element
operation, by IREE's own lowering of each). An argmax of floats is now two reductions
(``index_extrema.py``), which the estimate still counts as one workgroup; a long
cumulative sum or product of floats is scanned in blocks (``compile/xla_scans.py``), whose
rows the workers share: it counts as two element operations an element that workers share
(at 512,000 floats, 0.40 ms on ``local-task`` against 0.64 on ``local-sync``; 4,096,000:
4.2 against 8.3).
So a module whose estimated work (``work.py``) is under ``LARGE_WORK`` runs on
``local-sync``, unless its element operations that workers share (``Work.parallel``) reach
``LARGE_PARALLEL_WORK`` and are at least twice the rest: its products and ten times the
elements of its ops that no second thread shares (no block of ``shape_sweep.py`` has more
than a twentieth of its work in shared element operations); a larger one runs on
``local-task``.
``compile_module`` records the estimate in the ``.vmfb`` (``rewriter.work``, and its
parts in ``rewriter.work_parts``); a ``.vmfb`` without it runs on ``local-task``, one
without the parts by the total alone, as products.

A module of dynamic shapes (a symbolic batch) has no one work: it is its sizes'. Each call
runs on the driver its own sizes' work would choose (``SizedWork``): ``load`` makes a
context on ``local-sync``, and one on ``local-task`` when a call first needs it, and the
call the largest dynamic size of its arguments. Its work
at that size is read off the estimates with every dynamic size of the module's types each
of ``PROBE_SIZES`` (``work_by_size``, recorded in ``rewriter.work_by_size``), as a line
through the two: exact for a program whose work grows with one symbolic size, as a batch
does, but for the ops ``work.SHARED_SIZE`` leaves to one thread at the small sizes (the
probes are large enough that a call near ``LARGE_PARALLEL_WORK`` shares them); one of
several symbolic sizes gets the work of all of them at the largest, an estimate over the
mark. On this machine (Zen 5 EPYC, 2 cores) one driver for every size
was 4 to 26 times ``jax.jit``'s time at batch 1 on ``local-task`` (``jnp.tanh(x) * 2 +
jnp.exp(-x * x)`` of ``(b, 1024)``, a softmax of it, the block of ``shape_sweep.py`` at
width 256) or 1.8 to 3.6 times at batch 1024 to 4096 on ``local-sync``.

The task executor's flags (``iree.runtime.flags.parse_flags``, before the driver is made)
do not make the handover cheaper: ``--task_worker_spin_us=20`` makes a call of ``x + 1``
take 4 times the CPU time (the workers spin; 200 us: 19 times), and one worker
(``--task_topology_group_count=1``) saves a tenth to a fifth of the CPU time but takes 1.75
times the wall time (on 10 and 100,000 floats: the dispatches still go to the worker, which
now works alone). Unpinned workers (``--task_topology_group_count=2``; IREE's default pins
one a physical core) spend less CPU time only when the cores are oversubscribed: at a load
of 3.4 to 4.9, the blocks of ``shape_sweep.py`` that run on ``local-task`` (width 512: f32
at batch 300, f64 at batch 128 and 300) take 0.99 to 1.17x ``jax.jit``'s CPU time against
1.18 to 1.44x pinned (four processes each), since a pinned worker waits for its own core
while the other is free; at a load of 1.4 to 1.6 both take 0.98 to 1.29x, and the pinned
workers finish sooner (wall time: f32 batch 300 in 5.4 to 6.8 ms against 8.4 to 10.1), as
does their handover (``x + 1``: 10.2 to 10.3 us a call against 11 to 21). ``load`` leaves
the flags as IREE sets them; ``IREE_PY_RUNTIME_FLAGS`` (parsed when ``iree.runtime`` is
imported) sets them for a process.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from .work import Work, work_parts

LARGE_WORK = 500_000_000  # operations a call (work.py) from which local-task runs it
LARGE_PARALLEL_WORK = 1_000_000  # shared element operations from which local-task runs it
SERIAL_WEIGHT = 10  # what an element of a one-workgroup op weighs against a shared one
WORK_KEY = "rewriter.work"  # the module attribute of a .vmfb that records the estimate
PARTS_KEY = "rewriter.work_parts"  # and its parts: [products, parallel, serial]
SIZES_KEY = "rewriter.work_by_size"  # of dynamic shapes: the parts at each of PROBE_SIZES
# The dynamic sizes the work of a module of dynamic shapes is estimated at: large enough
# that its ops count as shared where a call near LARGE_PARALLEL_WORK's mark would share them
# (work.SHARED_SIZE).
PROBE_SIZES = (1024, 16384)
BY_SIZE = "by size"  # ``IreeModule.driver`` of a module whose calls choose
# A dynamic size in a shaped type's dimensions: the ``?`` of ``tensor<4x?xf32>``.
_DYNAMIC_SIZE = re.compile(r"(?<=[<x])\?(?=x)")


@dataclass(frozen=True)
class SizedWork:
    """The work of a module of dynamic shapes with every dynamic size each of
    ``PROBE_SIZES`` (``first``, ``second``); at another size, on the line through the
    two."""

    first: Work
    second: Work

    def at(self, size: int) -> Work:
        """The estimated work of a call whose largest dynamic size is ``size``."""
        low, high = PROBE_SIZES
        step = (size - low) / (high - low)

        def part(first: int, second: int) -> int:
            return max(0, round(first + (second - first) * step))

        first, second = self.first, self.second
        return Work(
            part(first.products, second.products),
            part(first.parallel, second.parallel),
            part(first.serial, second.serial),
        )

    def driver(self, size: int) -> str:
        """The driver of a call whose largest dynamic size is ``size`` (``driver_for``)."""
        return driver_for(self.at(size))

    def record(self) -> str:
        """As ``compile_module`` records it: ``rewriter.work_by_size``'s JSON."""
        return json.dumps([_parts(self.first), _parts(self.second)])


def work_by_size(text: str) -> SizedWork | None:
    """The ``SizedWork`` of the module ``text`` of dynamic shapes; None when its shapes
    are all static, or its work cannot be estimated at those sizes."""
    if _DYNAMIC_SIZE.search(text) is None or work_parts(text) is not None:
        return None  # no dynamic size (the search costs a static module little)
    works = [work_parts(_DYNAMIC_SIZE.sub(str(size), text)) for size in PROBE_SIZES]
    first, second = works
    return SizedWork(first, second) if first is not None and second is not None else None


def sized_work(path: Path, recorded: Mapping[str, str] | None) -> SizedWork | None:
    """The ``SizedWork`` of a ``.vmfb`` by what ``compile_module`` recorded in it
    (``recorded``, its module attributes), of a ``.mlir`` (``recorded`` None) by its text;
    None for a module of static shapes, or one without it."""
    if recorded is not None:
        probes = _json(recorded, SIZES_KEY)
        if not isinstance(probes, list) or len(probes) != 2:
            return None
        works = [_work(parts) for parts in probes]
        return SizedWork(works[0], works[1]) if None not in works else None  # type: ignore[arg-type]
    try:
        return work_by_size(path.read_text())
    except (OSError, UnicodeDecodeError):
        return None  # compiling it says what is wrong


def _parts(work: Work) -> list[int]:
    return [work.products, work.parallel, work.serial]


def _work(parts: object) -> Work | None:
    if isinstance(parts, list) and len(parts) == 3 and all(map(_is_count, parts)):
        return Work(*parts)
    return None


def chosen_driver(path: Path, recorded: Mapping[str, str] | None) -> str:
    """The driver of a ``.vmfb`` by what ``compile_module`` recorded in it (``recorded``,
    its module attributes), of a ``.mlir`` (``recorded`` None) by its text read here."""
    if recorded is not None:
        return driver_for(recorded_work(recorded))
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError):
        return "local-task"  # compiling it says what is wrong
    return driver_for(work_parts(text))


def driver_for(work: Work | None) -> str:
    """``local-task`` from ``LARGE_WORK`` operations, for an unknown work (None), and from
    ``LARGE_PARALLEL_WORK`` element operations that workers share and that are at least
    twice the rest of the work (one-workgroup ops weighed by ``SERIAL_WEIGHT``);
    ``local-sync`` otherwise (module docstring)."""
    if work is None or work.total >= LARGE_WORK:
        return "local-task"
    rest = work.products + SERIAL_WEIGHT * work.serial
    if work.parallel >= LARGE_PARALLEL_WORK and work.parallel >= 2 * rest:
        return "local-task"
    return "local-sync"


def recorded_work(attributes: Mapping[str, str]) -> Work | None:
    """The work estimate a ``.vmfb``'s module attributes hold; None when they hold none
    (dynamic shapes, or a module that ``compile_module`` did not make). Without its parts,
    the total counts as products."""
    parts = _work(_json(attributes, PARTS_KEY))
    if parts is not None:
        return parts
    total = _json(attributes, WORK_KEY)
    return Work(products=total) if _is_count(total) else None


def _json(attributes: Mapping[str, str], key: str) -> object:
    try:
        return json.loads(attributes.get(key, "null"))
    except ValueError:
        return None


def _is_count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
