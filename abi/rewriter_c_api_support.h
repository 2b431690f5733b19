/*
 * rewriter_c_api_support.h - helpers of the C API that `python -m rewriter.compile`
 * generates for a model (--header, --prefix, -o NAME.a; rewriter/compile/c_api.py).
 *
 * Included once, by the generated C11 source compiled into the library: every function
 * here is static, so two models in one program keep their own.  The statuses are those
 * of the generated header (P_STATUS_*).
 */
#ifndef REWRITER_C_API_SUPPORT_H
#define REWRITER_C_API_SUPPORT_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { RW_OK = 0, RW_INVALID_ARGUMENT = 1, RW_HANDLER_ERROR = 2, RW_OUT_OF_MEMORY = 3 };

/* The workspace (rewriter_workspace.c): every allocation of the module inside a call. */
void rw_ws_set(void *base, size_t size);
void rw_ws_begin(void);
size_t rw_ws_end(void);
long long rw_ws_misses(void);
int rw_ws_owns(const void *pointer);
void rw_ws_free(void *pointer);

/* Makes *largest at least `value`, whatever other threads store meanwhile: the
 * workspace size a function reports is the largest any of its calls needed. */
static inline void rw_largest(_Atomic int64_t *largest, int64_t value)
{
    int64_t seen = atomic_load(largest);
    while (value > seen && !atomic_compare_exchange_weak(largest, &seen, value)) {
    }
}

/* MLIR's memref descriptor of rank N (rank 0: rw_desc_0). */
typedef struct { void *allocated; void *aligned; int64_t offset; } rw_desc_0;
#define RW_DESCRIPTOR(N)                                                                 \
    typedef struct {                                                                     \
        void *allocated;                                                                 \
        void *aligned;                                                                   \
        int64_t offset;                                                                  \
        int64_t sizes[N];                                                                \
        int64_t strides[N];                                                              \
    } rw_desc_##N

/* The ranks up to which results are copied by rw_gather (MLIR's ranks are far below). */
#define RW_MAX_RANK 32

static _Thread_local char rw_error_text[1024];
static _Thread_local int rw_error_set;

static const char *rw_last_error(void) { return rw_error_set ? rw_error_text : NULL; }

static void rw_clear(void) { rw_error_set = 0; }

static int rw_fail(int status, const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(rw_error_text, sizeof rw_error_text, format, arguments);
    va_end(arguments);
    rw_error_set = 1;
    return status;
}

/* RW_INVALID_ARGUMENT, the error "FUNCTION: MESSAGE": jax's message of a shape assertion
 * that the arguments break, each {N} in it replaced by values[N] (N < count). */
static int rw_fail_shape_check(const char *function, const char *message,
                               const int64_t *values, int count)
{
    char text[sizeof rw_error_text];
    size_t used = 0;
    const char *at = message;
    while (*at && used + 1 < sizeof text) {
        char *end = NULL;
        long number = *at == '{' ? strtol(at + 1, &end, 10) : -1;
        if (end && end != at + 1 && *end == '}' && number >= 0 && number < count) {
            int n = snprintf(text + used, sizeof text - used, "%lld", (long long)values[number]);
            if (n < 0)
                break;
            used += (size_t)n < sizeof text - used ? (size_t)n : sizeof text - used - 1;
            at = end + 1;
        } else {
            text[used++] = *at++;
        }
    }
    text[used] = '\0';
    return rw_fail(RW_INVALID_ARGUMENT, "%s: %s", function, text);
}

/* "32x128" ("?" for a dynamic dimension, "a scalar" for rank 0). */
static void rw_dims_text(char *text, size_t size, int rank, const int64_t *dims)
{
    size_t used = 0;
    int d;
    snprintf(text, size, "%s", rank == 0 ? "a scalar" : "");
    for (d = 0; d < rank && used < size; ++d) {
        const char *times = d ? "x" : "";
        int n = dims[d] < 0 ? snprintf(text + used, size - used, "%s?", times)
                            : snprintf(text + used, size - used, "%s%lld", times,
                                       (long long)dims[d]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

/* 0 when `dims` agree with `wanted` (-1: any size that is not negative); otherwise the
 * error, "FUNCTION: WHAT INDEX NAME is 32x128, AGAINST 64x128". */
static int rw_check_dims(const char *function, const char *what, int index, const char *name,
                         int rank, const int64_t *dims, const int64_t *wanted,
                         const char *against)
{
    int d;
    for (d = 0; d < rank; ++d) {
        if (wanted[d] >= 0 ? dims[d] != wanted[d] : dims[d] < 0) {
            char given[256], expected[256];
            rw_dims_text(given, sizeof given, rank, dims);
            rw_dims_text(expected, sizeof expected, rank, wanted);
            return rw_fail(RW_INVALID_ARGUMENT, "%s: %s %d%s is %s, %s %s", function, what,
                           index, name, given, against, expected);
        }
    }
    return 0;
}

static int64_t rw_count(int rank, const int64_t *dims)
{
    int64_t n = 1;
    int d;
    for (d = 0; d < rank; ++d)
        n *= dims[d];
    return n;
}

/* A real pointer for an empty buffer given as NULL. */
static char rw_empty[64];

/* The descriptor of a row-major contiguous buffer of `dims`. */
static void rw_describe(void **allocated, void **aligned, int64_t *offset, int rank,
                        int64_t *sizes, int64_t *strides, const void *data,
                        const int64_t *dims)
{
    int64_t stride = 1;
    int d;
    *allocated = *aligned = data ? (void *)data : (void *)rw_empty;
    *offset = 0;
    for (d = rank - 1; d >= 0; --d) {
        sizes[d] = dims[d];
        strides[d] = stride;
        stride *= dims[d] > 0 ? dims[d] : 1;
    }
}

/* Copies a result seen through `sizes` and `strides` (in elements) into the row-major
 * buffer `to`. */
static void rw_gather(char *to, const char *from, int rank, const int64_t *sizes,
                      const int64_t *strides, size_t element)
{
    int64_t index[RW_MAX_RANK] = {0};
    int64_t count = rw_count(rank, sizes), i, at;
    int d;
    if (rank > RW_MAX_RANK)
        return;
    for (i = 0; i < count; ++i) {
        for (at = 0, d = 0; d < rank; ++d)
            at += index[d] * strides[d];
        memcpy(to + (size_t)i * element, from + at * (int64_t)element, element);
        for (d = rank - 1; d >= 0; --d) {
            if (++index[d] < sizes[d])
                break;
            index[d] = 0;
        }
    }
}

/* Whether `sizes` and `strides` describe a row-major contiguous buffer. */
static int rw_contiguous(int rank, const int64_t *sizes, const int64_t *strides)
{
    int64_t stride = 1;
    int d;
    for (d = rank - 1; d >= 0; --d) {
        if (sizes[d] > 1 && strides[d] != stride)
            return 0;
        stride *= sizes[d];
    }
    return 1;
}

#endif /* REWRITER_C_API_SUPPORT_H */
