"""Both loaders under 8 threads: every call gets its own result or its own exception.

One program, ``2 * checked_sqrt(x)`` (samples/ffi_bridge/checks.cc: an XLA FFI error
naming the first negative element), runs compiled with the bridge and in IREE, its import
served by the same handler and, in IREE, by a Python callable that raises an exception of
its own. Each thread interleaves calls that succeed (with values of its own), calls whose
handler fails at an index of its own, and calls with an argument of the wrong shape; every
outcome is checked against what that very call must give, so an exception (or a result)
that reaches another thread's call fails the test. The bridge keeps a handler's error per
thread (``_Thread_local`` in abi/xla_ffi_bridge.c); ``rewriter.iree`` keeps an import's
exception per thread and per call.
"""

from __future__ import annotations

import ctypes
import threading

import jax
import numpy as np
import pytest
from kernel_library import BRIDGE_SAMPLES, build_handler_library

import rewriter
from rewriter.compile import HandlerError

pytestmark = [
    pytest.mark.toolchain,
    pytest.mark.toolchain("gcc", "g++"),
    pytest.mark.iree,
    pytest.mark.jax,
    pytest.mark.slow,
]

THREADS = 8
ROUNDS = 120
SIZE = 64


class Negative(Exception):
    """What the Python implementation raises: the index and the thread that saw it."""


def checked_sqrt(x):
    return jax.ffi.ffi_call("checked_sqrt", jax.ShapeDtypeStruct(x.shape, x.dtype))(x) * 2.0


def python_checked_sqrt(x):
    negative = np.flatnonzero(x < 0)
    if negative.size:
        raise Negative(f"element {negative[0]} is negative, seen by {threading.get_ident()}")
    return np.sqrt(x)


@pytest.fixture(scope="module")
def modules(tmp_path_factory):
    """The program loaded five ways: compiled, and in IREE by the handler and by Python on
    each of IREE's CPU drivers."""
    from rewriter.compile import compile_module
    from rewriter.compile import load as load_compiled
    from rewriter.iree import compile_module as compile_vmfb
    from rewriter.iree import load as load_iree

    folder = tmp_path_factory.mktemp("threads")
    checks = ctypes.CDLL(str(build_handler_library(BRIDGE_SAMPLES / "checks.cc", folder / "c.so")))
    capsule = jax.ffi.pycapsule(checks.CheckedSqrt)
    original = rewriter.export(checked_sqrt, np.ones(SIZE, np.float32)).original
    library = folder / "libthreads.so"
    compile_module(rewriter.rewrite(original).text, library, ffi_bridge=True)
    source = folder / "threads.iree.mlir"
    source.write_text(rewriter.rewrite(original, abi="iree").text)
    vmfb = folder / "threads.vmfb"
    compile_vmfb(source, vmfb)
    modules = {"compiled": load_compiled(library, ffi_handlers={"checked_sqrt": capsule})}
    for driver in ("local-task", "local-sync"):
        modules[f"iree handler {driver}"] = load_iree(
            vmfb, imports={"checked_sqrt": capsule}, driver=driver
        )
        modules[f"iree python {driver}"] = load_iree(
            vmfb, imports={"checked_sqrt": python_checked_sqrt}, driver=driver
        )
    return modules


def hammer(function, failure: type[Exception]) -> list[str]:
    """Calls from THREADS threads; what went wrong, call by call (nothing when right)."""
    wrong: list[str] = []
    start = threading.Barrier(THREADS)

    def worker(thread: int) -> None:
        start.wait()
        me = threading.get_ident()
        for round_ in range(ROUNDS):
            what = (round_ + thread) % 3
            value = np.float32(thread + 1 + round_ % 5)
            x = np.full(SIZE, value * value, np.float32)
            index = -1
            if what == 1:
                index = (thread * 7 + round_) % SIZE
                x[index] = -1.0
            try:
                got = function(x if what != 2 else x[: SIZE - 1 - thread])
            except failure as error:
                expected = f"element {index} is negative"
                if what != 1 or expected not in str(error):
                    wrong.append(f"thread {thread} round {round_}: {error}")
                elif failure is Negative and f"seen by {me}" not in str(error):
                    wrong.append(f"thread {thread} round {round_}: another thread's {error}")
            except ValueError as error:
                shape = f"has shape ({SIZE - 1 - thread},), expected ({SIZE},)"
                if what != 2 or shape not in str(error):
                    wrong.append(f"thread {thread} round {round_}: {error}")
            except Exception as error:  # anything else is wrong, and reported
                wrong.append(f"thread {thread} round {round_}: {type(error).__name__} {error}")
            else:
                if what != 0 or not np.array_equal(got, np.full(SIZE, 2 * value, np.float32)):
                    wrong.append(f"thread {thread} round {round_}: returned {got[:3]}...")

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return wrong


@pytest.mark.parametrize(
    ("name", "failure"),
    [
        ("compiled", HandlerError),
        ("iree handler local-task", HandlerError),
        ("iree python local-task", Negative),
        ("iree handler local-sync", HandlerError),
        ("iree python local-sync", Negative),
    ],
)
def test_every_call_gets_its_own_result_or_exception(modules, name, failure):
    wrong = hammer(modules[name], failure)
    assert not wrong, f"{len(wrong)} of {THREADS * ROUNDS} calls: {wrong[:5]}"
