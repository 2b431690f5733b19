/*
 * async_runtime.c - the functions MLIR's async dialect lowers to (mlirAsyncRuntime*), on a
 * pool of pthreads: what runs a compiled module's large parallel loops on several cores.
 *
 * A module compiled with threads > 1 splits each large parallel loop into blocks
 * (MLIR's async-parallel-for): the calling thread runs the first block and hands the
 * others to mlirAsyncRuntimeExecute, then waits for all of them
 * (mlirAsyncRuntimeAwaitAllInGroup).  The functions follow upstream MLIR's
 * mlir/include/mlir/ExecutionEngine/AsyncRuntime.h; they are compiled into every module
 * that calls them, and every symbol here stays local to that module, so the module needs
 * no libmlir_async_runtime, no libomp, nothing beyond libc and pthreads.
 *
 * Contract:
 *   - the pool is made on the first block handed over, with REWRITER_THREADS - 1 worker
 *     threads when that variable holds a positive number, else one fewer than the CPUs
 *     this process may run on (sched_getaffinity);  REWRITER_THREADS=1 makes no thread;
 *   - a thread that waits runs waiting blocks itself until what it waits for is done,
 *     so a wait never depends on a worker being free: several caller threads may call
 *     the module at once, and a pool of no workers still finishes every loop;
 *   - a fork child starts workers of its own on its first split loop (the lock is held
 *     across fork, and the child makes its lock and condition variable anew);
 *   - tokens, groups and values are counted references (the compiled code adds and drops
 *     them); the last drop frees the object, so a call leaks nothing.  As upstream: a
 *     token or value starts with two references, one of them the task's, dropped when
 *     the task makes it ready; a group starts waiting for the number of tokens it is
 *     made for, each counted when it is ready;
 *   - a token or value set to the error state makes the groups it joins report an error
 *     (mlirAsyncRuntimeIsGroupError); the compiled code then stops the process with a
 *     message, as MLIR's own runtime does;  a failed allocation here does the same;
 *   - unloading the module (dlclose) or ending the process stops and joins the workers;
 *   - the workers run with denormals flushed to zero, as XLA:CPU's threads do: the pool
 *     starts inside an entry of the module, which runs in that mode (rewriter_float_mode.h),
 *     and a new thread starts in the floating-point environment of the one that makes it
 *     (POSIX pthread_create).
 *
 * The module's C helpers use the same pool: rw_parallel_for runs a body for each index of a
 * range on the calling thread and the workers (blas_calls.c's large products).
 *
 * The coroutine frames of the compiled blocks come from rw_async_frame_alloc and go back
 * through rw_async_frame_free: a frame is freed by the thread that ran the block, which may
 * not be the one that made it, so it never comes from a caller's workspace
 * (rewriter_workspace.c), whose frees only a call's own thread understands.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef void *CoroHandle;
typedef void (*CoroResume)(void *);

/* What a token, a value or a group does when it is ready: resume a coroutine, or count
 * one token of a group as done. */
typedef struct Waiter {
    struct Waiter *next;
    CoroHandle handle;
    CoroResume resume;
    struct AsyncGroup *group; /* NULL: resume `handle` */
} Waiter;

typedef enum { KIND_TOKEN, KIND_VALUE, KIND_GROUP } Kind;

typedef struct {
    atomic_llong references;
    Kind kind;
} Counted;

typedef struct AsyncToken {
    Counted counted;
    bool ready, error;
    Waiter *waiters;
} AsyncToken;

typedef struct AsyncValue {
    Counted counted;
    bool ready, error;
    Waiter *waiters;
    void *storage;
} AsyncValue;

typedef struct AsyncGroup {
    Counted counted;
    int64_t added, pending, errors;
    Waiter *waiters;
} AsyncGroup;

typedef struct Task {
    struct Task *next;
    CoroHandle handle;
    CoroResume resume;
} Task;

/* One lock guards the queue and the state of every object; `changed` is broadcast when a
 * task is queued, when an object becomes ready, and when the pool stops. A loop hands
 * over a handful of blocks, so the lock is taken a few dozen times a loop. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
/* Counts the broadcasts of `changed` (each made with the lock held): what a thread that
 * spins before it sleeps watches without the lock (wait_for_change). */
static atomic_ullong changes;
static Task *queue_head, *queue_tail;
static pthread_t *workers;
static int worker_count;
static bool started, stopping, fork_handled;
static pid_t started_in;

static void fail(const char *what)
{
    fprintf(stderr, "rewriter async runtime: %s\n", what);
    abort();
}

static void *allocated(size_t size)
{
    void *block = calloc(1, size);
    if (!block)
        fail("out of memory");
    return block;
}

/* The threads this process's loops run on: REWRITER_THREADS, else its CPUs. */
static int thread_count(void)
{
    const char *set = getenv("REWRITER_THREADS");
    if (set && *set) {
        char *end;
        long n = strtol(set, &end, 10);
        if (*end == '\0' && n >= 1)
            return n > 1024 ? 1024 : (int)n;
    }
    cpu_set_t cpus;
    if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) > 0)
        return CPU_COUNT(&cpus);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (int)online : 1;
}

/* Wake every thread that waits for a change; with the lock held. */
static void broadcast_change(void)
{
    atomic_fetch_add_explicit(&changes, 1, memory_order_release);
    pthread_cond_broadcast(&changed);
}

/* How long a thread with nothing to do watches for a change before it sleeps. Waking a
 * sleeping thread takes a system call on each side and the scheduler's latency, tens of
 * microseconds on a virtual machine: paid by every block handed over and every wait on
 * one, it halved what a second core gained on a block of eight 1024 x 256 products and
 * their layer norms (7.1 ms on one thread, 5.5 ms on two). A spin is the cores' time
 * only while work comes and goes within it: after a call the workers burn at most this
 * long, then sleep as before. */
#define SPIN_NANOSECONDS 100000

static uint64_t now_nanoseconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Wait until `changed` is broadcast, with the lock held (released while waiting, held
 * again on return): first spin without the lock for SPIN_NANOSECONDS, watching `changes`,
 * then sleep. No broadcast is missed: each is counted with the lock held, and the count
 * is read again under the lock before sleeping, which releases the lock atomically. */
static void wait_for_change(void)
{
    unsigned long long seen = atomic_load_explicit(&changes, memory_order_relaxed);
    pthread_mutex_unlock(&lock);
    uint64_t deadline = now_nanoseconds() + SPIN_NANOSECONDS;
    for (unsigned spins = 1;; ++spins) {
        if (atomic_load_explicit(&changes, memory_order_acquire) != seen)
            break;
        cpu_relax();
        if (spins % 64 == 0 && now_nanoseconds() >= deadline)
            break;
    }
    pthread_mutex_lock(&lock);
    if (atomic_load_explicit(&changes, memory_order_relaxed) == seen)
        pthread_cond_wait(&changed, &lock);
}

/* The first queued task, or NULL; with the lock held. */
static Task *next_task(void)
{
    Task *task = queue_head;
    if (task) {
        queue_head = task->next;
        if (!queue_head)
            queue_tail = NULL;
    }
    return task;
}

/* Queue a resumption; with the lock held. */
static void queue_task(CoroHandle handle, CoroResume resume)
{
    Task *task = allocated(sizeof *task);
    task->handle = handle;
    task->resume = resume;
    if (queue_tail)
        queue_tail->next = task;
    else
        queue_head = task;
    queue_tail = task;
}

/* Run one task; called without the lock. */
static void run(Task *task)
{
    CoroHandle handle = task->handle;
    CoroResume resume = task->resume;
    free(task);
    resume(handle);
}

static void *work(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&lock);
    for (;;) {
        Task *task = next_task();
        if (task) {
            pthread_mutex_unlock(&lock);
            run(task);
            pthread_mutex_lock(&lock);
        } else if (stopping) {
            break;
        } else {
            wait_for_change();
        }
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

static void before_fork(void) { pthread_mutex_lock(&lock); }
static void after_fork(void) { pthread_mutex_unlock(&lock); }

/* The child has none of the parent's workers, but `changed` still counts them as
 * waiting: a broadcast would wait for them. Both are made anew. */
static void in_child(void)
{
    pthread_mutex_init(&lock, NULL);
    pthread_cond_init(&changed, NULL);
}

/* Start the workers once per process (again in a fork child, which has none); with the
 * lock held. A worker that cannot be made leaves fewer: the waiting threads run the rest.
 * glibc forgets the fork handlers of a library that is unloaded. */
static void start_workers(void)
{
    if (started && started_in == getpid())
        return;
    if (!fork_handled)
        fork_handled = pthread_atfork(before_fork, after_fork, in_child) == 0;
    started = true;
    started_in = getpid();
    stopping = false;
    worker_count = 0;
    int wanted = thread_count() - 1;
    workers = wanted > 0 ? allocated(sizeof *workers * (size_t)wanted) : NULL;
    for (int i = 0; i < wanted; ++i) {
        if (pthread_create(&workers[worker_count], NULL, work, NULL) != 0)
            break;
        ++worker_count;
    }
}

__attribute__((destructor)) static void stop_workers(void)
{
    pthread_mutex_lock(&lock);
    bool own = started && started_in == getpid();
    stopping = true;
    broadcast_change();
    pthread_mutex_unlock(&lock);
    if (!own)
        return;
    for (int i = 0; i < worker_count; ++i)
        pthread_join(workers[i], NULL);
    free(workers);
    workers = NULL;
    worker_count = 0;
    started = false;
}

/* Until *ready holds, run queued tasks, else sleep until something changes; with the
 * lock held. */
static void wait_running_tasks(const bool *ready)
{
    while (!*ready) {
        Task *task = next_task();
        if (task) {
            pthread_mutex_unlock(&lock);
            run(task);
            pthread_mutex_lock(&lock);
        } else {
            wait_for_change();
        }
    }
}

/* Wake what waited on an object that has become ready; with the lock held. */
static void wake(Waiter *waiters, bool error);

static void group_token_done(AsyncGroup *group, bool error)
{
    if (error)
        ++group->errors;
    if (--group->pending == 0) {
        Waiter *waiters = group->waiters;
        group->waiters = NULL;
        wake(waiters, false);
    }
}

static void wake(Waiter *waiters, bool error)
{
    while (waiters) {
        Waiter *next = waiters->next;
        if (waiters->group)
            group_token_done(waiters->group, error);
        else
            queue_task(waiters->handle, waiters->resume);
        free(waiters);
        waiters = next;
    }
    broadcast_change();
}

static void add_waiter(Waiter **list, CoroHandle handle, CoroResume resume, AsyncGroup *group)
{
    Waiter *waiter = allocated(sizeof *waiter);
    waiter->handle = handle;
    waiter->resume = resume;
    waiter->group = group;
    waiter->next = *list;
    *list = waiter;
}

static void *counted(size_t size, Kind kind, long long references)
{
    Counted *object = allocated(size);
    atomic_init(&object->references, references);
    object->kind = kind;
    return object;
}

void mlirAsyncRuntimeAddRef(void *object, int64_t count)
{
    atomic_fetch_add(&((Counted *)object)->references, count);
}

void mlirAsyncRuntimeDropRef(void *object, int64_t count)
{
    Counted *header = object;
    long long left = atomic_fetch_sub(&header->references, count) - count;
    if (left > 0)
        return;
    if (left < 0)
        fail("an object's references dropped below zero");
    if (header->kind == KIND_VALUE)
        free(((AsyncValue *)object)->storage);
    free(object);
}

AsyncToken *mlirAsyncRuntimeCreateToken(void)
{
    return counted(sizeof(AsyncToken), KIND_TOKEN, 2);
}

AsyncValue *mlirAsyncRuntimeCreateValue(int64_t size)
{
    AsyncValue *value = counted(sizeof(AsyncValue), KIND_VALUE, 2);
    value->storage = allocated(size > 0 ? (size_t)size : 1);
    return value;
}

AsyncGroup *mlirAsyncRuntimeCreateGroup(int64_t size)
{
    AsyncGroup *group = counted(sizeof(AsyncGroup), KIND_GROUP, 1);
    group->pending = size;
    return group;
}

int64_t mlirAsyncRuntimeAddTokenToGroup(AsyncToken *token, AsyncGroup *group)
{
    pthread_mutex_lock(&lock);
    int64_t rank = group->added++;
    if (token->ready)
        group_token_done(group, token->error);
    else
        add_waiter(&token->waiters, NULL, NULL, group);
    pthread_mutex_unlock(&lock);
    return rank;
}

/* Make a token or a value ready, and drop the task's reference to it. */
static void make_ready(void *object, bool *ready, bool *error, Waiter **waiters, bool failed)
{
    pthread_mutex_lock(&lock);
    *ready = true;
    *error = failed;
    Waiter *list = *waiters;
    *waiters = NULL;
    wake(list, failed);
    pthread_mutex_unlock(&lock);
    mlirAsyncRuntimeDropRef(object, 1);
}

void mlirAsyncRuntimeEmplaceToken(AsyncToken *token)
{
    make_ready(token, &token->ready, &token->error, &token->waiters, false);
}

void mlirAsyncRuntimeEmplaceValue(AsyncValue *value)
{
    make_ready(value, &value->ready, &value->error, &value->waiters, false);
}

void mlirAsyncRuntimeSetTokenError(AsyncToken *token)
{
    make_ready(token, &token->ready, &token->error, &token->waiters, true);
}

void mlirAsyncRuntimeSetValueError(AsyncValue *value)
{
    make_ready(value, &value->ready, &value->error, &value->waiters, true);
}

bool mlirAsyncRuntimeIsTokenError(AsyncToken *token)
{
    pthread_mutex_lock(&lock);
    bool error = token->error;
    pthread_mutex_unlock(&lock);
    return error;
}

bool mlirAsyncRuntimeIsValueError(AsyncValue *value)
{
    pthread_mutex_lock(&lock);
    bool error = value->error;
    pthread_mutex_unlock(&lock);
    return error;
}

bool mlirAsyncRuntimeIsGroupError(AsyncGroup *group)
{
    pthread_mutex_lock(&lock);
    bool error = group->errors > 0;
    pthread_mutex_unlock(&lock);
    return error;
}

void mlirAsyncRuntimeAwaitToken(AsyncToken *token)
{
    pthread_mutex_lock(&lock);
    wait_running_tasks(&token->ready);
    pthread_mutex_unlock(&lock);
}

void mlirAsyncRuntimeAwaitValue(AsyncValue *value)
{
    pthread_mutex_lock(&lock);
    wait_running_tasks(&value->ready);
    pthread_mutex_unlock(&lock);
}

void mlirAsyncRuntimeAwaitAllInGroup(AsyncGroup *group)
{
    pthread_mutex_lock(&lock);
    while (group->pending > 0) {
        Task *task = next_task();
        if (task) {
            pthread_mutex_unlock(&lock);
            run(task);
            pthread_mutex_lock(&lock);
        } else {
            wait_for_change();
        }
    }
    pthread_mutex_unlock(&lock);
}

void mlirAsyncRuntimeExecute(CoroHandle handle, CoroResume resume)
{
    pthread_mutex_lock(&lock);
    start_workers();
    queue_task(handle, resume);
    broadcast_change();
    pthread_mutex_unlock(&lock);
}

void *mlirAsyncRuntimeGetValueStorage(AsyncValue *value) { return value->storage; }

/* Resume at once when ready (as MLIR's runtime does), else when it becomes ready. */
static void when_ready(bool *ready, Waiter **waiters, CoroHandle handle, CoroResume resume)
{
    pthread_mutex_lock(&lock);
    if (*ready) {
        pthread_mutex_unlock(&lock);
        resume(handle);
        return;
    }
    start_workers();
    add_waiter(waiters, handle, resume, NULL);
    pthread_mutex_unlock(&lock);
}

void mlirAsyncRuntimeAwaitTokenAndExecute(AsyncToken *token, CoroHandle handle, CoroResume resume)
{
    when_ready(&token->ready, &token->waiters, handle, resume);
}

void mlirAsyncRuntimeAwaitValueAndExecute(AsyncValue *value, CoroHandle handle, CoroResume resume)
{
    when_ready(&value->ready, &value->waiters, handle, resume);
}

void mlirAsyncRuntimeAwaitAllInGroupAndExecute(AsyncGroup *group, CoroHandle handle,
                                               CoroResume resume)
{
    pthread_mutex_lock(&lock);
    if (group->pending == 0) {
        pthread_mutex_unlock(&lock);
        resume(handle);
        return;
    }
    start_workers();
    add_waiter(&group->waiters, handle, resume, NULL);
    pthread_mutex_unlock(&lock);
}

/* The spelling is upstream's. */
int64_t mlirAsyncRuntimGetNumWorkerThreads(void)
{
    pthread_mutex_lock(&lock);
    start_workers();
    int64_t threads = worker_count + 1;
    pthread_mutex_unlock(&lock);
    return threads;
}

void mlirAsyncRuntimePrintCurrentThreadId(void)
{
    fprintf(stderr, "Current thread id: %lu\n", (unsigned long)pthread_self());
}

/* A parallel for of the module's C helpers (blas_calls.c's large products): body(context,
 * index, slot) for every index below `count`, on the calling thread and on the pool's workers.
 * Each thread takes the next index when it is free, so a core busy with another process
 * leaves its share to the others. `slot`, below `slots` (at most rw_parallel_slots()), tells
 * apart the threads that run at once: each uses a buffer of its own, made by the caller
 * (in a library with the C API the helpers' allocations come from the calling thread's
 * workspace, which no other thread may use).
 *
 * A split whose helpers found nothing left to do (their cores busy with other processes
 * until the caller had done it all) cost the caller two gemms' packing and a wake-up for
 * nothing: the next splits are then skipped (rw_parallel_slots says 1), 8 of them, twice as
 * many after each such split again, up to 1024, until helpers take a share again. */
typedef void (*ParallelBody)(void *context, int64_t index, int64_t slot);

static int64_t skips_left, skips; /* with the lock */

typedef struct {
    ParallelBody body;
    void *context;
    int64_t count;
    atomic_llong next;
    int64_t helpers, helpers_done, helped; /* with the lock */
    bool finished;                         /* every helper done, with the lock */
} ParallelFor;

typedef struct {
    ParallelFor *loop;
    int64_t slot;
} Helper;

/* Run indexes until none is left; how many this thread ran. */
static int64_t take_indexes(ParallelFor *loop, int64_t slot)
{
    for (int64_t ran = 0;; ++ran) {
        int64_t index = atomic_fetch_add(&loop->next, 1);
        if (index >= loop->count)
            return ran;
        loop->body(loop->context, index, slot);
    }
}

static void run_helper(void *handle)
{
    Helper *helper = handle;
    ParallelFor *loop = helper->loop;
    int64_t ran = take_indexes(loop, helper->slot);
    free(helper);
    pthread_mutex_lock(&lock);
    loop->helped += ran;
    loop->finished = ++loop->helpers_done == loop->helpers;
    broadcast_change();
    pthread_mutex_unlock(&lock);
}

/* The threads a parallel for runs on: the caller and the pool's workers; 1 while splits are
 * skipped. */
int64_t rw_parallel_slots(void)
{
    pthread_mutex_lock(&lock);
    start_workers();
    int64_t slots = worker_count + 1;
    if (skips_left > 0) {
        --skips_left;
        slots = 1;
    }
    pthread_mutex_unlock(&lock);
    return slots;
}

void rw_parallel_for(int64_t count, int64_t slots, ParallelBody body, void *context)
{
    int64_t helpers = slots < count ? slots - 1 : count - 1;
    ParallelFor loop = {.body = body, .context = context, .count = count, .helpers = helpers};
    atomic_init(&loop.next, 0);
    if (helpers > 0) {
        pthread_mutex_lock(&lock);
        start_workers();
        for (int64_t slot = 1; slot <= helpers; ++slot) {
            Helper *helper = allocated(sizeof *helper);
            helper->loop = &loop;
            helper->slot = slot;
            queue_task(helper, run_helper);
        }
        broadcast_change();
        pthread_mutex_unlock(&lock);
    }
    take_indexes(&loop, 0);
    if (helpers <= 0)
        return;
    /* The helpers read `loop` until they are done; one not yet started runs here. */
    pthread_mutex_lock(&lock);
    wait_running_tasks(&loop.finished);
    if (loop.helped == 0) {
        skips = skips == 0 ? 8 : skips < 1024 ? 2 * skips : 1024;
        skips_left = skips;
    } else {
        skips = 0;
    }
    pthread_mutex_unlock(&lock);
}

void *rw_async_frame_alloc(int64_t alignment, int64_t size)
{
    void *frame = NULL;
    size_t align = alignment < (int64_t)sizeof(void *) ? sizeof(void *) : (size_t)alignment;
    if (posix_memalign(&frame, align, size > 0 ? (size_t)size : 1) != 0)
        fail("out of memory");
    return frame;
}

void rw_async_frame_free(void *frame) { free(frame); }
