"""The compiled path's large parallel loops on several threads (parallel_loops.py,
abi/async_runtime.c): the same bits as jax.jit, split only when large, and a C host
without Python runs a split loop with no dependency but libc."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from c_programs import THREADS_NOW, built, run_program
from mlir_tools import require_tool

from rewriter.compile.parallel_loops import own_blocks

SPLIT = 1 << 20  # elements: 16 blocks of MIN_TASK_SIZE, split on any number of threads


def _threads_now() -> int:
    return len(os.listdir("/proc/self/task"))


def test_loop_bodies_stay_functions_and_frames_come_from_the_runtime():
    before = """\
define void @parallel_compute_fn_0(i64 %0, ptr %1) {
  ret void
}

define ptr @rw_entry_main(ptr %0) {
  %2 = call ptr @malloc(i64 64)
  call void @parallel_compute_fn_0(i64 0, ptr %2)
  call void @free(ptr %2)
  ret ptr %2
}

define ptr @async_execute_fn(i64 %0) #0 {
  %3 = call ptr @aligned_alloc(i64 16, i64 %0)
  call void @parallel_compute_fn_0(i64 %0, ptr %3)
  call void @free(ptr %3)
  ret ptr %3
}
"""
    after = """\
define internal void @parallel_compute_fn_0(i64 %0, ptr %1) {
  ret void
}

define ptr @rw_entry_main(ptr %0) {
  %2 = call ptr @malloc(i64 64)
  call void @parallel_compute_fn_0(i64 0, ptr %2)
  call void @free(ptr %2)
  ret ptr %2
}

define ptr @async_execute_fn(i64 %0) #0 {
  %3 = call ptr @rw_async_frame_alloc(i64 16, i64 %0)
  call void @parallel_compute_fn_0(i64 %0, ptr %3) noinline
  call void @rw_async_frame_free(ptr %3)
  ret ptr %3
}

declare ptr @rw_async_frame_alloc(i64, i64)
declare void @rw_async_frame_free(ptr)
"""
    assert own_blocks(before) == after
    no_blocks = before.split("\n\n")[1] + "\n"
    assert own_blocks(no_blocks) == no_blocks


def _window_max(x):
    import jax

    return jax.lax.reduce_window(x, -np.inf, jax.lax.max, (3, 3), (1, 1), "SAME")


def _window_sum(x):
    import jax

    return jax.lax.reduce_window(x, 0.0, jax.lax.add, (2, 2), (2, 2), "VALID")


def _ops():
    """name: (function, arguments) at SPLIT elements: the ops of
    benchmarks/op_complexity.py that have a parallel loop."""
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(0)
    x = rng.normal(size=SPLIT).astype(np.float32)
    i = rng.integers(0, SPLIT, SPLIT).astype(np.int32)
    image = x.reshape(1024, 1024)
    return {
        "gather": (lambda x, i, v: x[i] + v, (x, i, x[::-1].copy())),
        "scatter_add": (lambda x, i, v: x.at[i].add(v), (x, i, x[::-1].copy())),
        "cumsum": (jnp.cumsum, (x,)),
        "argmax": (jnp.argmax, (x,)),
        "top_k": (lambda x: jax.lax.top_k(x, 16), (x,)),
        "reduce_window_max": (_window_max, (image,)),
        "reduce_window_sum": (_window_sum, (image,)),
        "fori_loop": (lambda y: jax.lax.fori_loop(0, 3, lambda k, z: z * 2.0, y), (x,)),
        "softmax_rows": (jax.nn.softmax, (image,)),
        "broadcast_add": (lambda m, v: m + v[None, :], (image, x[:1024].copy())),
    }


OP_NAMES = (
    "gather scatter_add cumsum argmax top_k reduce_window_max reduce_window_sum fori_loop "
    "softmax_rows broadcast_add"
).split()


# Ops whose one-thread compile gives jax.jit's bits; the others (sums in another order
# than XLA's) give the one-thread compile's bits.
AS_JIT = {
    "gather",
    "scatter_add",
    "argmax",
    "top_k",
    "reduce_window_max",
    "fori_loop",
    "broadcast_add",
}


def _bytes(results) -> list[tuple[str, tuple[int, ...], bytes]]:
    import jax

    return [(a.dtype.str, a.shape, a.tobytes()) for a in map(np.asarray, jax.tree.leaves(results))]


@pytest.mark.slow
@pytest.mark.jax
@pytest.mark.toolchain
@pytest.mark.iree
@pytest.mark.parametrize("name", OP_NAMES)
def test_split_loops_give_the_bits_of_one_thread_and_of_jax_jit(name, tmp_path: Path, monkeypatch):
    import jax

    import rewriter
    from rewriter.compile import compile_module, load

    monkeypatch.setenv("REWRITER_THREADS", "3")  # a worker more than the blocks' thread
    function, arguments = _ops()[name]
    text = rewriter.rewrite(rewriter.export(function, *arguments).text).text
    results = {}
    for threads in (1, 2):
        library = tmp_path / f"lib{name}{threads}.so"
        compile_module(text, library, threads=threads, cache=False)
        results[threads] = _bytes(load(library).main(*arguments))
    assert results[2] == results[1]
    if name in AS_JIT:
        assert results[2] == _bytes(jax.jit(function)(*arguments))


DOUBLE = """\
module @big {{
  func.func public @main(%x: tensor<{n}xf32>) -> tensor<{n}xf32> {{
    %c = stablehlo.constant dense<2.0> : tensor<{n}xf32>
    %y = stablehlo.multiply %x, %c : tensor<{n}xf32>
    return %y : tensor<{n}xf32>
  }}
}}
"""


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.iree
@pytest.mark.parametrize(("size", "added"), [(SPLIT, 2), (1 << 17, 2), (1 << 16, 0), (1000, 0)])
def test_a_large_loop_starts_the_pool_and_a_small_one_does_not(
    size, added, tmp_path: Path, monkeypatch
):
    """The pool (REWRITER_THREADS - 1 workers) starts on the first block handed over: a
    loop of a million elements hands blocks over, and so does one of 131,072 (two blocks of
    MIN_TASK_SIZE); one of 65,536 or of a thousand runs as one block on the caller's thread
    and its library holds no runtime at all."""
    from rewriter.compile import compile_module, load

    monkeypatch.setenv("REWRITER_THREADS", "3")
    library = tmp_path / "libdouble.so"
    compile_module(DOUBLE.format(n=size), library, threads=2, cache=False)
    assert (b"mlirAsyncRuntimeExecute" in library.read_bytes()) == (added > 0)
    main = load(library).main
    x = np.arange(size, dtype=np.float32)
    before = _threads_now()
    for _ in range(3):  # a pool is made once
        assert np.array_equal(main(x), x * 2)
    assert _threads_now() - before == added


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.iree
def test_callers_on_several_threads_share_the_pool(tmp_path: Path, monkeypatch):
    """Four Python threads call a split loop at once (the loader lets go of the GIL):
    every result right."""
    from concurrent.futures import ThreadPoolExecutor

    from rewriter.compile import compile_module, load

    monkeypatch.setenv("REWRITER_THREADS", "2")
    library = tmp_path / "libdouble.so"
    compile_module(DOUBLE.format(n=SPLIT), library, threads=2, cache=False)
    main = load(library).main

    def calls(offset: int) -> bool:
        x = np.arange(SPLIT, dtype=np.float32) + offset
        return all(np.array_equal(main(x), x * 2) for _ in range(5))

    with ThreadPoolExecutor(4) as callers:
        assert all(callers.map(calls, range(4)))


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.iree
def test_idle_workers_sleep_after_their_short_spin(tmp_path: Path, monkeypatch):
    """A worker with nothing to do watches for work for SPIN_NANOSECONDS (0.1 ms), then
    sleeps (``abi/async_runtime.c``, ``wait_for_change``): over half a second after a split
    call the process's three workers take next to no CPU time; workers that kept spinning
    would take about 1.5 s of it."""
    import time

    from rewriter.compile import compile_module, load

    monkeypatch.setenv("REWRITER_THREADS", "4")
    library = tmp_path / "libdouble.so"
    compile_module(DOUBLE.format(n=SPLIT), library, threads=2, cache=False)
    main = load(library).main
    x = np.arange(SPLIT, dtype=np.float32)
    for _ in range(3):
        assert np.array_equal(main(x), x * 2)
    start = time.process_time()
    time.sleep(0.5)
    assert time.process_time() - start < 0.1


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.iree
def test_one_thread_is_the_one_thread_pipeline(tmp_path: Path):
    from rewriter.compile import compile_module

    library = tmp_path / "libdouble.so"
    compile_module(DOUBLE.format(n=SPLIT), library, threads=1, cache=False)
    assert b"mlirAsyncRuntime" not in library.read_bytes()


HOST = r"""
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "big.h"

%THREADS_NOW%
int main(void)
{
    enum { N = 1 << 20 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    big_f32_1d in = {x, {N}}, out = {y, {N}};
    int before = threads_now(), wrong = 0;
    for (int i = 0; i < N; ++i)
        x[i] = (float)i;
    for (int call = 0; call < 3; ++call) {
        if (big_main(&in, &out) != 0)
            return 1;
        for (int i = 0; i < N; ++i)
            wrong += y[i] != 2.0f * (float)i;
    }
    printf("%d wrong, %d threads more\n", wrong, threads_now() - before);
    free(x);
    free(y);
    return 0;
}
""".replace("%THREADS_NOW%", THREADS_NOW)


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.toolchain("gcc", "valgrind")
@pytest.mark.iree
def test_a_c_host_without_python_runs_a_split_loop_and_leaks_nothing(tmp_path: Path):
    """The static library and a C program, linked with libc's pthreads and nothing else;
    under valgrind (every allocation of the pool, its tasks and the blocks freed)."""
    import sys

    require_tool("gcc")
    require_tool("valgrind")
    module = tmp_path / "big.mlir"
    module.write_text(DOUBLE.format(n=SPLIT))
    command = [sys.executable, "-m", "rewriter.compile", str(module), "-o"]
    command += [str(tmp_path / "libbig.a"), "--header", str(tmp_path / "big.h")]
    command += ["--threads", "2", "--no-cache", "--target-cpu", "generic"]  # valgrind: no AVX-512
    run = subprocess.run(command, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    flags = ("-std=c99", "-D_DEFAULT_SOURCE", f"-I{tmp_path}")
    libraries = ("-lm", "-lpthread")
    program = built(tmp_path, "host", HOST, [tmp_path / "libbig.a"], flags, libraries)
    environment = {"REWRITER_THREADS": "2"}
    run = run_program(program, environment)
    assert (run.returncode, run.stdout) == (0, "0 wrong, 1 threads more\n"), run.stderr
    run = run_program(program, environment, valgrind=True)
    assert (run.returncode, run.stdout) == (0, "0 wrong, 1 threads more\n"), run.stderr


RUNTIME_CONTRACT = r"""
#include "async_runtime.c"

static void emplace(void *token) { mlirAsyncRuntimeEmplaceToken(token); }
static void fail_token(void *token) { mlirAsyncRuntimeSetTokenError(token); }

static int resumed;
static void resume(void *done)
{
    __atomic_add_fetch(&resumed, 1, __ATOMIC_SEQ_CST);
    mlirAsyncRuntimeEmplaceToken(done);
}

/* A group of 64 tokens made ready by tasks, one of them in error, awaited by a thread
 * and by a coroutine (which makes `done` ready); then every reference dropped. */
static int run_group(int with_error)
{
    AsyncToken *tokens[64], *done = mlirAsyncRuntimeCreateToken();
    AsyncGroup *group = mlirAsyncRuntimeCreateGroup(64);
    for (int i = 0; i < 64; ++i) {
        tokens[i] = mlirAsyncRuntimeCreateToken();
        mlirAsyncRuntimeAddTokenToGroup(tokens[i], group);
    }
    mlirAsyncRuntimeAwaitAllInGroupAndExecute(group, done, resume);
    for (int i = 0; i < 64; ++i)
        mlirAsyncRuntimeExecute(tokens[i], with_error && i == 17 ? fail_token : emplace);
    mlirAsyncRuntimeAwaitAllInGroup(group);
    int error = mlirAsyncRuntimeIsGroupError(group);
    for (int i = 0; i < 64; ++i) {
        mlirAsyncRuntimeAwaitToken(tokens[i]);
        if (mlirAsyncRuntimeIsTokenError(tokens[i]) != (with_error && i == 17))
            return -1;
        mlirAsyncRuntimeDropRef(tokens[i], 1);
    }
    mlirAsyncRuntimeDropRef(group, 1);
    mlirAsyncRuntimeAwaitToken(done);
    mlirAsyncRuntimeDropRef(done, 1);
    return error;
}

static void *caller(void *result)
{
    *(int *)result = run_group(0);
    return NULL;
}

int main(void)
{
    int first = run_group(1), second = run_group(0), others[3];
    pthread_t threads[3];
    for (int i = 0; i < 3; ++i)
        pthread_create(&threads[i], NULL, caller, &others[i]);
    for (int i = 0; i < 3; ++i)
        pthread_join(threads[i], NULL);
    AsyncValue *value = mlirAsyncRuntimeCreateValue(8);
    *(double *)mlirAsyncRuntimeGetValueStorage(value) = 2.5;
    mlirAsyncRuntimeEmplaceValue(value);
    mlirAsyncRuntimeAwaitValue(value);
    double *stored = mlirAsyncRuntimeGetValueStorage(value);
    printf("%d %d %d%d%d %d %g %lld\n", first, second, others[0], others[1], others[2],
           __atomic_load_n(&resumed, __ATOMIC_SEQ_CST), *stored,
           (long long)mlirAsyncRuntimGetNumWorkerThreads());
    mlirAsyncRuntimeDropRef(value, 1);
    return 0;
}
"""


@pytest.mark.slow
@pytest.mark.toolchain("gcc", "valgrind")
@pytest.mark.parametrize("threads", ["1", "3"])
def test_the_runtime_reports_errors_serves_several_callers_and_leaks_nothing(
    threads, tmp_path: Path
):
    """abi/async_runtime.c on its own: a token in error makes its group's error, a group
    awaited by a thread and by a coroutine, callers on three threads at once, a pool of
    no workers (REWRITER_THREADS=1: the waiting threads run the tasks) or of two; under
    valgrind, which counts every block not freed at the end as an error."""
    from rewriter.abi import bridge_dir

    flags = ("-std=c11", "-O1", f"-I{bridge_dir()}")
    program = built(tmp_path, "contract", RUNTIME_CONTRACT, flags=flags)
    run = run_program(program, {"REWRITER_THREADS": threads}, valgrind=True)
    assert (run.returncode, run.stdout) == (0, f"1 0 000 5 2.5 {threads}\n"), run.stderr


# A process without JAX (whose threads make a fork unsafe, and which warns of it) loads the
# library, makes the parent's pool, forks, and the child calls the split loop again.
FORKING = """\
import os, sys, time
import numpy as np
from rewriter.compile import load

def threads_now():
    return len(os.listdir("/proc/self/task"))

main = load(sys.argv[1]).main
x = np.arange(int(sys.argv[2]), dtype=np.float32)
assert np.array_equal(main(x), x * 2)
child = os.fork()
if child == 0:
    before = threads_now()
    right = np.array_equal(main(x), x * 2)
    os._exit(0 if right and threads_now() - before == 1 else 1)
deadline = time.monotonic() + 60
while (ended := os.waitpid(child, os.WNOHANG)) == (0, 0) and time.monotonic() < deadline:
    time.sleep(0.05)
if ended == (0, 0):
    os.kill(child, 9)
    os.waitpid(child, 0)
print("child", "hung" if ended == (0, 0) else ended[1])
"""


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.iree
def test_a_fork_child_runs_split_loops_with_workers_of_its_own(tmp_path: Path):
    """The parent's pool made, a fork child calls the split loop: it starts its own."""
    import sys

    from rewriter.compile import compile_module

    library = tmp_path / "libdouble.so"
    compile_module(DOUBLE.format(n=SPLIT), library, threads=2, cache=False)
    environment = {**os.environ, "REWRITER_THREADS": "2"}
    run = subprocess.run(
        [sys.executable, "-c", FORKING, str(library), str(SPLIT)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )
    assert (run.returncode, run.stdout) == (0, "child 0\n"), run.stderr


PARALLEL_FOR = r"""
#include "async_runtime.c"

enum { COUNT = 1000 };
typedef struct {
    atomic_llong done[COUNT];
    atomic_int running[8]; /* threads in each slot at once: never more than one */
    atomic_int shared;
} Seen;

static void body(void *context, int64_t index, int64_t slot)
{
    Seen *seen = context;
    if (atomic_fetch_add(&seen->running[slot], 1) != 0)
        atomic_store(&seen->shared, 1);
    atomic_fetch_add(&seen->done[index], 1);
    atomic_fetch_sub(&seen->running[slot], 1);
}

/* Every index done once, no slot run by two threads at once. */
static int run_loop(void)
{
    static Seen zero;
    Seen *seen = malloc(sizeof *seen);
    *seen = zero;
    int64_t slots = rw_parallel_slots();
    rw_parallel_for(COUNT, slots, body, seen);
    int wrong = slots < 1 || slots > 8 || atomic_load(&seen->shared);
    for (int i = 0; i < COUNT; ++i)
        wrong += atomic_load(&seen->done[i]) != 1;
    rw_parallel_for(0, slots, body, seen); /* nothing to do */
    free(seen);
    return wrong;
}

static void *caller(void *result)
{
    *(int *)result = run_loop() + run_loop();
    return NULL;
}

int main(void)
{
    int first = run_loop(), others[3];
    pthread_t threads[3];
    for (int i = 0; i < 3; ++i)
        pthread_create(&threads[i], NULL, caller, &others[i]);
    for (int i = 0; i < 3; ++i)
        pthread_join(threads[i], NULL);
    printf("%d %d%d%d %d\n", first, others[0], others[1], others[2], worker_count + 1);
    return 0;
}
"""


@pytest.mark.slow
@pytest.mark.toolchain("gcc", "valgrind")
@pytest.mark.parametrize("threads", ["1", "3"])
def test_a_parallel_for_runs_each_index_once_in_slots_of_its_own_and_leaks_nothing(
    threads, tmp_path: Path
):
    """rw_parallel_for (the BLAS helpers' split): each index once, a slot never on two
    threads at once, callers on three threads at once, a pool of no workers or of two;
    under valgrind."""
    from rewriter.abi import bridge_dir

    flags = ("-std=c11", "-O1", f"-I{bridge_dir()}")
    program = built(tmp_path, "parallel_for", PARALLEL_FOR, flags=flags)
    run = run_program(program, {"REWRITER_THREADS": threads}, valgrind=True)
    assert (run.returncode, run.stdout) == (0, f"0 000 {threads}\n"), run.stderr


SKIPPED = r"""
#include "async_runtime.c"

static atomic_int blocking, let_go;

static void blocker(void *unused)
{
    (void)unused;
    atomic_store(&blocking, 1);
    while (!atomic_load(&let_go))
        usleep(100);
}

static void body(void *context, int64_t index, int64_t slot)
{
    (void)index;
    (void)slot;
    atomic_fetch_add((atomic_int *)context, 1);
}

int main(void)
{
    atomic_int done = 0;
    int64_t before = rw_parallel_slots();
    mlirAsyncRuntimeExecute(NULL, blocker); /* the one worker busy */
    while (!atomic_load(&blocking))
        usleep(100);
    rw_parallel_for(4, before, body, &done); /* the caller runs all four */
    int64_t skipped = 0;
    for (int i = 0; i < 8; ++i)
        skipped += rw_parallel_slots() == 1;
    int64_t after = rw_parallel_slots();
    atomic_store(&let_go, 1);
    printf("%d %lld %lld %lld\n", atomic_load(&done), (long long)before, (long long)skipped,
           (long long)after);
    return 0;
}
"""


@pytest.mark.toolchain("gcc")
def test_splits_are_skipped_for_a_while_after_helpers_found_nothing(tmp_path: Path):
    """The pool's one worker busy (REWRITER_THREADS=2): the caller runs every index of a
    parallel for; the next 8 ask for one thread, the 9th for two again."""
    from rewriter.abi import bridge_dir

    flags = ("-std=c11", "-O1", "-D_DEFAULT_SOURCE", f"-I{bridge_dir()}")
    program = built(tmp_path, "skipped", SKIPPED, flags=flags)
    run = run_program(program, {"REWRITER_THREADS": "2"})
    assert (run.returncode, run.stdout) == (0, "4 2 8 2\n"), run.stderr
