/*
 * rewriter_workspace.c - the memory a model's call allocates, from a caller's workspace.
 *
 * `python -m rewriter.compile` with the C API (--header, --prefix, -o NAME.a) renames every
 * call of malloc, calloc, realloc, free, posix_memalign, aligned_alloc and strdup in the
 * compiled module, the XLA FFI bridge and the BLAS helpers into the rw_ws_* functions
 * below (llvm-objcopy --redefine-sym), and compiles this file beside them, unrenamed.  The
 * generated API brackets each call with rw_ws_begin / rw_ws_end:
 *
 *   - inside a call, with a workspace set on this thread (rw_ws_set), every allocation is
 *     cut from the workspace, one after another (a bump allocator); frees inside it do
 *     nothing, and the next call starts again at its beginning.  What does not fit comes
 *     from malloc, and is counted (rw_ws_misses);
 *   - outside a call, or without a workspace, the functions are malloc's;
 *   - either way a call counts the bytes it would take from a workspace (rw_ws_end), so
 *     that a first call says how large a workspace the next ones need.
 *
 * Every symbol stays local to the model: two models keep their own workspaces.
 */
#define _POSIX_C_SOURCE 200809L /* posix_memalign under -std=c11 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RW_WS_ALIGN 64 /* every block: what MLIR and the bridge ask of their buffers */
#define RW_WS_HEADER 64 /* the block's size, kept just before the block */

static _Thread_local char *ws_base;
static _Thread_local size_t ws_size;
static _Thread_local size_t ws_used;  /* bytes cut from the workspace in this call */
static _Thread_local size_t ws_total; /* bytes this call would take from a workspace */
static _Thread_local int ws_active;
static _Thread_local long long ws_misses;

void rw_ws_set(void *base, size_t size)
{
    ws_base = base;
    ws_size = base ? size : 0;
}

void rw_ws_begin(void)
{
    ws_used = 0;
    ws_total = 0;
    ws_active = 1;
}

size_t rw_ws_end(void)
{
    ws_active = 0;
    return ws_total;
}

long long rw_ws_misses(void) { return ws_misses; }

int rw_ws_owns(const void *pointer)
{
    const char *p = pointer;
    return ws_base && p >= ws_base && p < ws_base + ws_size;
}

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

/* A block of `size` bytes aligned to `alignment` (a power of two, at most RW_WS_ALIGN
 * unless the workspace itself is so aligned), from the workspace when one is set and it
 * fits; NULL when it must come from the heap. */
static void *cut(size_t size, size_t alignment)
{
    size_t need, start;
    uintptr_t base;
    if (!ws_active)
        return NULL;
    if (alignment < RW_WS_ALIGN)
        alignment = RW_WS_ALIGN;
    need = RW_WS_HEADER + round_up(size ? size : 1, RW_WS_ALIGN) + alignment;
    ws_total += need;
    if (!ws_base)
        return NULL;
    base = (uintptr_t)ws_base + ws_used + RW_WS_HEADER;
    start = (size_t)(round_up(base, alignment) - (uintptr_t)ws_base);
    if (start + round_up(size ? size : 1, RW_WS_ALIGN) > ws_size) {
        ++ws_misses;
        return NULL;
    }
    memcpy(ws_base + start - sizeof(size_t), &size, sizeof size);
    ws_used = start + round_up(size ? size : 1, RW_WS_ALIGN);
    return ws_base + start;
}

void *rw_ws_malloc(size_t size)
{
    void *block = cut(size, RW_WS_ALIGN);
    return block ? block : malloc(size);
}

void *rw_ws_calloc(size_t count, size_t size)
{
    void *block;
    if (size && count > SIZE_MAX / size)
        return NULL;
    block = cut(count * size, RW_WS_ALIGN);
    if (!block)
        return calloc(count, size);
    memset(block, 0, count * size);
    return block;
}

void rw_ws_free(void *pointer)
{
    if (!rw_ws_owns(pointer))
        free(pointer);
}

void *rw_ws_realloc(void *pointer, size_t size)
{
    size_t old;
    void *block;
    if (!rw_ws_owns(pointer))
        return realloc(pointer, size);
    memcpy(&old, (char *)pointer - sizeof(size_t), sizeof old);
    block = rw_ws_malloc(size);
    if (block)
        memcpy(block, pointer, old < size ? old : size);
    return block;
}

int rw_ws_posix_memalign(void **out, size_t alignment, size_t size)
{
    void *block = cut(size, alignment);
    if (!block)
        return posix_memalign(out, alignment, size);
    *out = block;
    return 0;
}

void *rw_ws_aligned_alloc(size_t alignment, size_t size)
{
    void *block = NULL;
    return rw_ws_posix_memalign(&block, alignment, size) == 0 ? block : NULL;
}

char *rw_ws_strdup(const char *text)
{
    size_t size = strlen(text) + 1;
    char *copy = rw_ws_malloc(size);
    if (copy)
        memcpy(copy, text, size);
    return copy;
}
