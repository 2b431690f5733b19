"""The compiled path's large parallel loops on several threads, with no new dependency.

With ``threads`` above 1 every linalg op becomes an ``scf.parallel`` over its parallel
dimensions (``convert-linalg-to-parallel-loops``; reductions keep a sequential loop inside,
and the ops that must stay sequential, IREE's scatter, scan and sort, are ``scf.for``
already). MLIR's ``async-parallel-for`` then cuts each ``scf.parallel`` of more than
``MIN_TASK_SIZE`` iterations into blocks (at most 8 per thread, none smaller than
``MIN_TASK_SIZE``), runs the first on the calling thread and hands the others to
``mlirAsyncRuntimeExecute``; a smaller loop is one block, called directly, as it was
(``canonicalize`` folds the test of a constant trip count away, so such a module calls no
runtime function at all). The async ops become calls of MLIR's async runtime API,
served by ``abi/async_runtime.c`` (a pthread pool, compiled into the module that calls it:
no libomp, no ``libmlir_async_runtime``). ``threads`` 1 keeps the one-thread pipeline.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..abi import bridge_dir

# Iterations of a block: below it, handing a block to another thread (a wake-up, tens of
# microseconds on a loaded machine, and the block's data moved to the other core's cache)
# costs more than it saves. A split block's body is vectorized as the one-thread loop (perf
# of speed.py's conv split from 65,536: the loop bodies' samples the same, 5,200 against
# 5,300); what a split adds is the handover of a block to a worker (cheap while the pool's
# threads watch for work: abi/async_runtime.c), and on a machine whose other cores are busy
# the wait for a worker that runs late. The pass gives every block but the last this many
# iterations and the last the rest, so a loop of less than twice as many is split unevenly:
# at 131,072, the GELU of a 300 x 512 f64 block (153,600 iterations) ran 131,072 on one
# thread and 22,528 on the other, 0.28 ms wall as on one thread; at 65,536 (65,536 twice,
# and 22,528), 0.16 ms (jax.jit 0.13-0.16). benchmarks/shape_sweep.py's compile path on an
# Intel Xeon, 44 blocks in one run each way: worst wall time 1.33x -> 1.24x jax.jit's, the
# time of nearly every block down 2 to 20%; 32,768 was no better, the smallest convolutions
# slower (4 images of 32 x 32, f32: 0.16 -> 0.20 ms).
MIN_TASK_SIZE = 65536

# A call of the async runtime in LLVM IR (convert-async-to-llvm declares all of its
# functions in every module, called or not).
_RUNTIME_CALL = re.compile(r"\bcall [^\n]*@mlirAsyncRuntim")


def default_threads() -> int:
    """The CPUs this process may run on: the threads a compile splits loops for."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def async_passes(threads: int) -> str:
    """The passes, in ``mlir-opt-22``'s pipeline after bufferization is lowered, that run
    a module's ``scf.parallel`` loops on ``threads`` threads (blocks of at most 8 per
    thread: the pass's own oversharding, which evens out blocks that take longer)."""
    return (
        f"async-parallel-for{{async-dispatch=false num-workers={threads} "
        f"min-task-size={MIN_TASK_SIZE}}}, canonicalize, async-to-async-runtime, "
        "async-runtime-ref-counting, async-runtime-ref-counting-opt, convert-async-to-llvm, "
    )


# A function of the LLVM IR that runs a block (convert-async-to-llvm outlines each
# async.execute into one, a coroutine), up to its closing brace.
_BLOCK_FUNCTION = re.compile(r"^define [^\n]*@async_execute_fn[^\n]*\{\n.*?^\}$", re.M | re.S)
# The function holding a loop's body (async-parallel-for outlines it), and a call of it.
_BODY_DEFINITION = re.compile(r"^define void @parallel_compute_fn", re.M)
_BODY_CALL = re.compile(r"^(\s*call void @parallel_compute_fn\w*\([^\n]*\))$", re.M)


def own_blocks(text: str) -> str:
    """``text`` (LLVM IR) with each loop's body internal and kept out of the coroutines
    that run its blocks, and the coroutines' frames allocated and freed by the async
    runtime (``rw_async_frame_alloc`` and ``rw_async_frame_free``).

    Every ``scf.parallel`` is outlined, the loops too small to split too (called once,
    directly): an internal body is gone once inlined, where an external one was optimized
    a second time on its own (clang took four times as long on ``benchmarks/speed.py``'s
    block).

    A body inlined into a coroutine is optimized once the coroutine is split, its
    operands then loads from the coroutine's frame: LLVM no longer vectorizes it
    (``benchmarks/op_complexity.py``'s 3x3 window maximum took 7 times the CPU time of
    the one-thread loop); ``noinline`` on those calls keeps it a function of its own,
    optimized as the one-thread loop is. The calling thread's own block, and a loop too
    small to split, still inline it.

    A frame is made by the thread that hands the block over and freed by the thread that
    ran it. In a library with the C API every ``aligned_alloc`` and ``free`` of the module
    becomes the workspace's (``toolchain.use_workspace_allocators``), whose ``free`` of a
    block cut from another thread's workspace would give it to the C library's ``free``:
    the frames never come from a workspace."""

    def renamed(match: re.Match[str]) -> str:
        body = match.group(0).replace("call ptr @aligned_alloc(", "call ptr @rw_async_frame_alloc(")
        body = body.replace("call void @free(", "call void @rw_async_frame_free(")
        return _BODY_CALL.sub(r"\1 noinline", body)

    text = _BODY_DEFINITION.sub("define internal void @parallel_compute_fn", text)
    changed = _BLOCK_FUNCTION.sub(renamed, text)
    if changed == text:
        return text
    declared = "declare ptr @rw_async_frame_alloc(i64, i64)\n"
    declared += "declare void @rw_async_frame_free(ptr)\n"
    return f"{changed}\n{declared}"


def calls_runtime(text: str) -> bool:
    """Whether the module ``text`` (LLVM IR) calls the async runtime: whether it needs
    ``async_runtime_source``."""
    return _RUNTIME_CALL.search(text) is not None


def async_runtime_source() -> Path:
    """``abi/async_runtime.c``: the async runtime a module with split loops calls."""
    return Path(bridge_dir()) / "async_runtime.c"
