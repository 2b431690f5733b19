/*
 * rewriter/memref.h - MLIR memref descriptors for kernels called from
 * rewritten modules (MLIR's C interface, `llvm.emit_c_interface`).
 *
 * A rewritten module calls an extern `@S`; the C library implements
 * `_mlir_ciface_S`, which receives every tensor as a pointer to one of the
 * descriptors below.  See abi/README.md for the whole calling contract.
 *
 * Names are systematic: rw_memref_<MLIR element type>_<rank>d, e.g.
 * rw_memref_f32_2d, rw_memref_i64_0d, rw_memref_ui8_1d.  Each type NAME
 * comes with two helpers:
 *
 *   int64_t NAME_num_elements(const NAME *m);
 *       Product of m->sizes (1 for rank 0).
 *
 *   int NAME_alloc(NAME *m, const int64_t *sizes);
 *       Ownership rule: a kernel allocates each result with this helper and
 *       never frees it; the compiled caller frees `allocated` with free().
 *       Sets up a fresh row-major contiguous buffer of the given sizes
 *       (ignored, may be NULL, for rank 0): data from posix_memalign, 64-byte
 *       aligned, allocated == aligned, offset 0.  The data is uninitialised.
 *       Returns 0 on success, nonzero on failure (negative size, overflow,
 *       out of memory), leaving allocated == aligned == NULL.
 *
 * Plain C99; also usable from C++.  Needs POSIX (posix_memalign).
 */
#ifndef REWRITER_MEMREF_H
#define REWRITER_MEMREF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#else
/* Declared here because strict -std=c99 makes <stdlib.h> hide POSIX names. */
int posix_memalign(void **memptr, size_t alignment, size_t size);
#endif

/* Alignment of buffers from NAME_alloc; a power of two >= sizeof(void *). */
#define RW_MEMREF_ALIGNMENT 64

/* --- implementation details shared by all descriptor types ------------- */

static inline int64_t rw_memref_count_(int rank, const int64_t *sizes)
{
    int64_t n = 1;
    int d;
    for (d = 0; d < rank; ++d)
        n *= sizes[d];
    return n;
}

/* Writes row-major strides of `sizes` into `strides` and returns a new
 * RW_MEMREF_ALIGNMENT-aligned buffer for that many elements, or NULL. */
static inline void *rw_memref_alloc_(int rank, const int64_t *sizes,
                                     int64_t *strides, size_t elem_size)
{
    int64_t n = 1;
    void *data = NULL;
    int d;
    for (d = rank - 1; d >= 0; --d) {
        if (sizes[d] < 0 || (sizes[d] > 0 && n > INT64_MAX / sizes[d]))
            return NULL;
        strides[d] = n;
        n *= sizes[d];
    }
    if ((uint64_t)n > SIZE_MAX / elem_size)
        return NULL;
    /* At least one byte, so that an empty result still gets a real pointer. */
    if (posix_memalign(&data, RW_MEMREF_ALIGNMENT,
                       n > 0 ? (size_t)n * elem_size : 1) != 0)
        return NULL;
    return data;
}

/* --- declaring descriptor types ----------------------------------------- */

/* Declares descriptor type NAME for element type T and rank N >= 1, with
 * NAME_num_elements and NAME_alloc.  Use without a trailing semicolon. */
#define RW_MEMREF_DECLARE(NAME, T, N)                                         \
    typedef struct NAME {                                                     \
        T *allocated;       /* what free() gets */                            \
        T *aligned;         /* base of the data */                            \
        int64_t offset;     /* in elements, from aligned */                   \
        int64_t sizes[N];                                                     \
        int64_t strides[N]; /* in elements */                                 \
    } NAME;                                                                   \
    static inline int64_t NAME##_num_elements(const NAME *m)                  \
    {                                                                         \
        return rw_memref_count_(N, m->sizes);                                 \
    }                                                                         \
    static inline int NAME##_alloc(NAME *m, const int64_t *sizes)             \
    {                                                                         \
        int d;                                                                \
        for (d = 0; d < N; ++d)                                               \
            m->sizes[d] = sizes[d];                                           \
        m->offset = 0;                                                        \
        m->allocated = m->aligned =                                           \
            (T *)rw_memref_alloc_(N, m->sizes, m->strides, sizeof(T));        \
        return m->allocated == NULL;                                          \
    }

/* The same for rank 0: no sizes or strides.  `sizes` is ignored. */
#define RW_MEMREF_DECLARE_0D(NAME, T)                                         \
    typedef struct NAME {                                                     \
        T *allocated;                                                         \
        T *aligned;                                                           \
        int64_t offset;                                                       \
    } NAME;                                                                   \
    static inline int64_t NAME##_num_elements(const NAME *m)                  \
    {                                                                         \
        (void)m;                                                              \
        return 1;                                                             \
    }                                                                         \
    static inline int NAME##_alloc(NAME *m, const int64_t *sizes)             \
    {                                                                         \
        (void)sizes;                                                          \
        m->offset = 0;                                                        \
        m->allocated = m->aligned =                                           \
            (T *)rw_memref_alloc_(0, NULL, NULL, sizeof(T));                  \
        return m->allocated == NULL;                                          \
    }

/* rw_memref_<E>_0d ... rw_memref_<E>_4d for one element type. */
#define RW_MEMREF_DECLARE_RANKS_0_TO_4(E, T)                                  \
    RW_MEMREF_DECLARE_0D(rw_memref_##E##_0d, T)                               \
    RW_MEMREF_DECLARE(rw_memref_##E##_1d, T, 1)                               \
    RW_MEMREF_DECLARE(rw_memref_##E##_2d, T, 2)                               \
    RW_MEMREF_DECLARE(rw_memref_##E##_3d, T, 3)                               \
    RW_MEMREF_DECLARE(rw_memref_##E##_4d, T, 4)

/* --- the concrete types -------------------------------------------------- */

RW_MEMREF_DECLARE_RANKS_0_TO_4(f32, float)
RW_MEMREF_DECLARE_RANKS_0_TO_4(f64, double)
RW_MEMREF_DECLARE_RANKS_0_TO_4(f16, uint16_t)  /* IEEE binary16 bits */
RW_MEMREF_DECLARE_RANKS_0_TO_4(bf16, uint16_t) /* bfloat16 bits */
RW_MEMREF_DECLARE_RANKS_0_TO_4(i1, bool)       /* one byte per element */
RW_MEMREF_DECLARE_RANKS_0_TO_4(i8, int8_t)
RW_MEMREF_DECLARE_RANKS_0_TO_4(i16, int16_t)
RW_MEMREF_DECLARE_RANKS_0_TO_4(i32, int32_t)
RW_MEMREF_DECLARE_RANKS_0_TO_4(i64, int64_t)
RW_MEMREF_DECLARE_RANKS_0_TO_4(ui8, uint8_t)
RW_MEMREF_DECLARE_RANKS_0_TO_4(ui16, uint16_t)
RW_MEMREF_DECLARE_RANKS_0_TO_4(ui32, uint32_t)
RW_MEMREF_DECLARE_RANKS_0_TO_4(ui64, uint64_t)

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* REWRITER_MEMREF_H */
