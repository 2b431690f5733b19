/*
 * blas_calls.c - the matrix products of a compiled module, computed by a BLAS.
 *
 * `python -m rewriter.compile` replaces each linalg.matmul / linalg.batch_matmul (and
 * each linalg.generic that computes one, or a batch times one shared matrix) of
 * f32, f64, complex<f32> or complex<f64> by a call of one of the helpers below
 * (rewriter/compile/library_calls.py) and compiles this file into the module, linked
 * against the BLAS that rewriter/compile/blas.py found.  Each helper computes
 * C += op(A) @ op(B) in place on MLIR memref descriptors (MLIR's C interface), where
 * op(X) is X or, when its flag is set, the transpose of the stored X; with its last flag,
 * `zero`, C = op(A) @ op(B) (the fill of zeros before the product is dropped).
 *
 * The BLAS is reached through its CBLAS entry points, whose names and integer width
 * differ between builds (rewriter_cblas.h).
 * Operands whose strides no gemm call can express (neither dimension contiguous),
 * and sizes beyond the BLAS's integers, take a plain loop instead.
 *
 * A 2-D convolution (linalg.conv_2d_nhwc_hwcf, its input already padded) is a product
 * too: each output pixel's row of the img2col matrix (kh, kw, c) times the filter seen as
 * a (kh * kw * c) x f matrix. The rows are gathered a chunk at a time into a buffer that
 * stays in the caches, and each chunk is one gemm, instead of writing the whole img2col
 * matrix to memory and reading it back (IREE's img2col did that, and the gemm spent as
 * long packing the matrix again as multiplying it).
 *
 * Compiled for several threads (RW_BLAS_SPLIT), a large product is split over the async
 * runtime's pool: a convolution's chunks, a batch's items, a product's rows or columns.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RW_CBLAS_COMPLEX
#include "rewriter_cblas.h"

/* The helpers are _mlir_ciface_ ## RW_BLAS_HELPERS ## name: rw_blas_ unless a symbol of the
 * module starts with it (library_calls.py then chooses rw_blas1_, ...). */
#ifndef RW_BLAS_HELPERS
#define RW_BLAS_HELPERS rw_blas_
#endif
#define RW_HELPER(name) RW_NAME(_mlir_ciface_, RW_BLAS_HELPERS, name)

typedef struct {
    char *allocated;
    char *aligned;
    int64_t offset;
    int64_t sizes[2];
    int64_t strides[2];
} view2;

typedef struct {
    char *allocated;
    char *aligned;
    int64_t offset;
    int64_t sizes[3];
    int64_t strides[3];
} view3;

typedef struct {
    char *allocated;
    char *aligned;
    int64_t offset;
    int64_t sizes[4];
    int64_t strides[4];
} view4;

typedef enum { F32, F64, C64, C128 } element;

static const int64_t element_size[] = {4, 8, 8, 16};

/* A matrix as one batch item sees it: logical rows x cols, element (i, j) at
 * data + (i * row_stride + j * col_stride) elements. */
typedef struct {
    char *data;
    int64_t rows, cols, row_stride, col_stride;
} matrix;

static matrix item(char *base, int64_t offset, const int64_t *sizes, const int64_t *strides,
                   int transposed, element type) {
    matrix m = {base + offset * element_size[type], sizes[0], sizes[1], strides[0], strides[1]};
    if (transposed) {
        int64_t t = m.rows;
        m.rows = m.cols;
        m.cols = t;
        t = m.row_stride;
        m.row_stride = m.col_stride;
        m.col_stride = t;
    }
    return m;
}

/* How gemm sees m in row-major order: NO_TRANS with leading dimension ld (rows
 * contiguous), TRANS (columns contiguous), or 0 when neither fits. */
static int row_major_form(matrix m, int64_t *ld) {
    int64_t one_row = m.cols > 1 ? m.cols : 1, one_col = m.rows > 1 ? m.rows : 1;
    if ((m.cols == 1 || m.col_stride == 1) && (m.rows == 1 || m.row_stride >= one_row)) {
        *ld = m.rows == 1 ? one_row : m.row_stride;
        return NO_TRANS;
    }
    if ((m.rows == 1 || m.row_stride == 1) && (m.cols == 1 || m.col_stride >= one_col)) {
        *ld = m.cols == 1 ? one_col : m.col_stride;
        return TRANS;
    }
    return 0;
}

static int fits(int64_t value) { return sizeof(blas_int) >= sizeof(int64_t) || value <= INT32_MAX; }

/* c = 0 (as +0 in every element, of any type), before a product that writes c. */
static void clear(matrix c, element type) {
    for (int64_t i = 0; i < c.rows; ++i)
        for (int64_t j = 0; j < c.cols; ++j)
            memset(c.data + (i * c.row_stride + j * c.col_stride) * element_size[type], 0,
                   (size_t)element_size[type]);
}

static void plain_loop(matrix a, matrix b, matrix c, element type) {
    for (int64_t i = 0; i < c.rows; ++i)
        for (int64_t j = 0; j < c.cols; ++j) {
            int64_t at = i * c.row_stride + j * c.col_stride;
            for (int64_t p = 0; p < a.cols; ++p) {
                int64_t x = i * a.row_stride + p * a.col_stride;
                int64_t y = p * b.row_stride + j * b.col_stride;
                switch (type) {
                case F32: ((float *)c.data)[at] += ((float *)a.data)[x] * ((float *)b.data)[y]; break;
                case F64: ((double *)c.data)[at] += ((double *)a.data)[x] * ((double *)b.data)[y]; break;
                case C64: {
                    float *r = (float *)c.data + 2 * at, *u = (float *)a.data + 2 * x, *v = (float *)b.data + 2 * y;
                    float re = u[0] * v[0] - u[1] * v[1], im = u[0] * v[1] + u[1] * v[0];
                    r[0] += re;
                    r[1] += im;
                    break;
                }
                case C128: {
                    double *r = (double *)c.data + 2 * at, *u = (double *)a.data + 2 * x, *v = (double *)b.data + 2 * y;
                    double re = u[0] * v[0] - u[1] * v[1], im = u[0] * v[1] + u[1] * v[0];
                    r[0] += re;
                    r[1] += im;
                    break;
                }
                }
            }
        }
}

/* c = op(a) @ op(b) + beta c, beta 1 or (zero) 0: gemm then writes c without reading it. */
static void gemm(int order, int ta, int tb, int64_t m, int64_t n, int64_t k, const char *a,
                 int64_t lda, const char *b, int64_t ldb, char *c, int64_t ldc, element type,
                 int zero) {
    static const float one_c64[2] = {1.0f, 0.0f}, zero_c64[2] = {0.0f, 0.0f};
    static const double one_c128[2] = {1.0, 0.0}, zero_c128[2] = {0.0, 0.0};
    switch (type) {
    case F32:
        RW_CBLAS(sgemm)(order, ta, tb, m, n, k, 1.0f, (const float *)a, lda, (const float *)b, ldb,
                        zero ? 0.0f : 1.0f, (float *)c, ldc);
        break;
    case F64:
        RW_CBLAS(dgemm)(order, ta, tb, m, n, k, 1.0, (const double *)a, lda, (const double *)b,
                        ldb, zero ? 0.0 : 1.0, (double *)c, ldc);
        break;
    case C64:
        RW_CBLAS(cgemm)(order, ta, tb, m, n, k, one_c64, a, lda, b, ldb,
                        zero ? zero_c64 : one_c64, c, ldc);
        break;
    case C128:
        RW_CBLAS(zgemm)(order, ta, tb, m, n, k, one_c128, a, lda, b, ldb,
                        zero ? zero_c128 : one_c128, c, ldc);
        break;
    }
}

/* c += a @ b for one batch item; with `zero` c = a @ b (c was not written yet). */
static void product(matrix a, matrix b, matrix c, element type, int zero) {
    int64_t m = c.rows, n = c.cols, k = a.cols, lda, ldb, ldc;
    if (m == 0 || n == 0 || k == 0) {
        if (zero)
            clear(c, type);
        return;
    }
    int form_a = row_major_form(a, &lda), form_b = row_major_form(b, &ldb);
    int form_c = row_major_form(c, &ldc);
    int sizes_fit = fits(m) && fits(n) && fits(k) && fits(lda) && fits(ldb) && fits(ldc);
    if (!form_a || !form_b || !form_c || !sizes_fit) {
        if (zero)
            clear(c, type);
        plain_loop(a, b, c, type);
        return;
    }
    if (form_c == NO_TRANS) {
        gemm(ROW_MAJOR, form_a, form_b, m, n, k, a.data, lda, b.data, ldb, c.data, ldc, type,
             zero);
    } else {
        /* c's columns are contiguous: a column-major matrix. In column-major terms a
         * row-major operand is a transposed one, and the other way round. */
        int flip_a = form_a == NO_TRANS ? TRANS : NO_TRANS;
        int flip_b = form_b == NO_TRANS ? TRANS : NO_TRANS;
        gemm(COL_MAJOR, flip_a, flip_b, m, n, k, a.data, lda, b.data, ldb, c.data, ldc, type,
             zero);
    }
}

/* With RW_BLAS_SPLIT (a module compiled for several threads) a large product runs on the
 * async runtime's pool (async_runtime.c): a convolution's chunks, a batch's items or a
 * product's row blocks, each a gemm of its own on one thread. Only while the BLAS itself runs
 * one thread (RW_BLAS_THREADS names its openblas_get_num_threads; a BLAS without it is left
 * to its own threads): two threading BLAS calls at once would fight over the cores. */
#ifdef RW_BLAS_SPLIT
int64_t rw_parallel_slots(void);
void rw_parallel_for(int64_t count, int64_t slots, void (*body)(void *, int64_t, int64_t),
                     void *context);
extern int RW_BLAS_THREADS(void) __attribute__((weak));

/* Multiply-adds from which a call is split: about 100 us of one core's f32 gemm, against a
 * few microseconds to hand work to a waiting thread. Below, a split won no wall time on a
 * 2-core EPYC and took 40% more CPU time (4 layers of 32 x 256 by 256 x 256 f64 products,
 * 2.1M each: 0.94 against 0.96 ms, 1.28 against 0.89 ms of CPU); from 8.4M on it won
 * (the same at width 512 in f64: 0.74x jax.jit split, 1.00x whole). */
#define SPLIT_WORK 4.0e6

/* The threads a call of `work` multiply-adds runs on: 1 below SPLIT_WORK. */
static int64_t split_slots(double work) {
    if (work < SPLIT_WORK || !RW_BLAS_THREADS || RW_BLAS_THREADS() != 1)
        return 1;
    return rw_parallel_slots();
}
#define SPLIT(count, slots, body, context) rw_parallel_for(count, slots, body, context)
#else
static int64_t split_slots(double work) {
    (void)work;
    return 1;
}
#define SPLIT(count, slots, body, context)                                                     \
    do {                                                                                       \
        (void)(slots);                                                                         \
        for (int64_t index_ = 0; index_ < (count); ++index_)                                  \
            (body)(context, index_, 0);                                                        \
    } while (0)
#endif

/* Rows (or, `across`, columns) `first` to `first + count` of m. */
static matrix part_of(matrix m, int across, int64_t first, int64_t count, element type) {
    matrix part = m;
    if (across) {
        part.data += first * m.col_stride * element_size[type];
        part.cols = count;
    } else {
        part.data += first * m.row_stride * element_size[type];
        part.rows = count;
    }
    return part;
}

typedef struct {
    matrix a, b, c;
    int across; /* blocks of c's columns (and b's), else of its rows (and a's) */
    int64_t block, length;
    element type;
    int zero;
} blocks;

static void product_block(void *context, int64_t index, int64_t slot) {
    blocks *p = context;
    (void)slot;
    int64_t first = index * p->block, count = p->length - first;
    count = count < p->block ? count : p->block;
    matrix a = p->across ? p->a : part_of(p->a, 0, first, count, p->type);
    matrix b = p->across ? part_of(p->b, 1, first, count, p->type) : p->b;
    product(a, b, part_of(p->c, p->across, first, count, p->type), p->type, p->zero);
}

/* c += a @ b, split over the threads when it is large: by rows of c, or by its columns when
 * they are more (each gemm packs its whole share of a and of b: the split of the longer
 * side packs the least twice). Every element is computed by the same gemm kernel as in one
 * call: with the same bits where the BLAS computes an element of a block as in the whole
 * product (OpenBLAS's AVX-512 kernels; its AVX2 ones round a block otherwise). */
static void split_product(matrix a, matrix b, matrix c, element type, int zero) {
    int64_t slots = split_slots((double)c.rows * c.cols * a.cols);
    int across = c.cols > c.rows;
    int64_t length = across ? c.cols : c.rows;
    if (slots < 2 || length < 2) {
        product(a, b, c, type, zero);
        return;
    }
    int64_t parts = slots < length ? slots : length;
    blocks p = {a, b, c, across, (length + parts - 1) / parts, length, type, zero};
    SPLIT((length + p.block - 1) / p.block, slots, product_block, &p);
}

/* The items of a batch: a's, b's (shared: step 0) and c's first element and step. */
typedef struct {
    matrix a, b, c;
    int64_t a_step, b_step, c_step;
    element type;
    int zero;
} batch_items;

static void batch_item(void *context, int64_t index, int64_t slot) {
    batch_items *p = context;
    (void)slot;
    int64_t size = element_size[p->type];
    matrix a = p->a, b = p->b, c = p->c;
    a.data += index * p->a_step * size;
    b.data += index * p->b_step * size;
    c.data += index * p->c_step * size;
    product(a, b, c, p->type, p->zero);
}

/* Every item of a batch, on the threads when the batch is large; a batch of one is split
 * by rows. */
static void batch_product(batch_items *p, int64_t count) {
    if (count == 1) {
        split_product(p->a, p->b, p->c, p->type, p->zero);
        return;
    }
    int64_t slots = split_slots((double)count * p->c.rows * p->c.cols * p->a.cols);
    SPLIT(count, slots, batch_item, p);
}

static void matmul(view2 *a, view2 *b, view2 *c, int32_t ta, int32_t tb, int32_t zero,
                   element type) {
    split_product(item(a->aligned, a->offset, a->sizes, a->strides, ta, type),
                  item(b->aligned, b->offset, b->sizes, b->strides, tb, type),
                  item(c->aligned, c->offset, c->sizes, c->strides, 0, type), type, zero);
}

static void batch_matmul(view3 *a, view3 *b, view3 *c, int32_t ta, int32_t tb, int32_t zero,
                         element type) {
    batch_items p = {item(a->aligned, a->offset, a->sizes + 1, a->strides + 1, ta, type),
                     item(b->aligned, b->offset, b->sizes + 1, b->strides + 1, tb, type),
                     item(c->aligned, c->offset, c->sizes + 1, c->strides + 1, 0, type),
                     a->strides[0], b->strides[0], c->strides[0], type, zero};
    batch_product(&p, c->sizes[0]);
}

/* A batch of matrices times one matrix: IREE's img2col form of a 2-D convolution. */
static void batch_matmul_shared(view3 *a, view2 *b, view3 *c, int32_t ta, int32_t tb,
                                int32_t zero, element type) {
    batch_items p = {item(a->aligned, a->offset, a->sizes + 1, a->strides + 1, ta, type),
                     item(b->aligned, b->offset, b->sizes, b->strides, tb, type),
                     item(c->aligned, c->offset, c->sizes + 1, c->strides + 1, 0, type),
                     a->strides[0], 0, c->strides[0], type, zero};
    batch_product(&p, c->sizes[0]);
}

/* The img2col rows of one chunk, in bytes: within the caches (the gemm reads them right
 * after they are written), yet a gemm large enough that its calls are few and the BLAS's
 * threads have work (128 KB to 1 MB measured alike with one thread). */
enum { CHUNK_BYTES = 1024 * 1024 };

/* Copy `count` elements, `stride` elements apart in `from`, to consecutive places of `to`. */
static char *gather(char *to, const char *from, int64_t count, int64_t stride, int64_t size) {
    if (stride == 1) {
        memcpy(to, from, (size_t)(count * size));
        return to + count * size;
    }
    for (int64_t i = 0; i < count; ++i, to += size)
        memcpy(to, from + i * stride * size, (size_t)size);
    return to;
}

/* One convolution's chunks: each gathers the img2col rows of `count` output pixels of one
 * image from `first` on into a buffer of its thread's, and multiplies them by the filter. */
typedef struct {
    view4 *in, *out;
    matrix filter;
    int64_t sy, sx, dy, dx, kh, kw, c, run;
    int64_t per_image;      /* chunks per image */
    int64_t *firsts;        /* per_image + 1 pixel indexes: where each chunk starts */
    char **rows;            /* a buffer of chunk rows per thread */
    element type;
    int zero;
} conv_chunks;

static void conv_chunk(void *context, int64_t index, int64_t slot) {
    conv_chunks *p = context;
    const int64_t size = element_size[p->type], *is = p->in->strides, *os = p->out->strides;
    int64_t n = index / p->per_image, part = index % p->per_image;
    int64_t first = p->firsts[part], count = p->firsts[part + 1] - first;
    int64_t width = p->out->sizes[2], k = p->kh * p->kw * p->c;
    char *to = p->rows[slot];
    for (int64_t q = first; q < first + count; ++q) {
        int64_t y = q / width, x = q % width;
        for (int64_t i = 0; i < p->kh; ++i) {
            const char *line = p->in->aligned + (p->in->offset + n * is[0] +
                                                 (y * p->sy + i * p->dy) * is[1] +
                                                 x * p->sx * is[2]) * size;
            if (p->run == p->kw * p->c) {
                to = gather(to, line, p->run, 1, size);
                continue;
            }
            for (int64_t j = 0; j < p->kw; ++j)
                to = gather(to, line + j * p->dx * is[2] * size, p->c, is[3], size);
        }
    }
    int64_t y = first / width, x = first % width;
    matrix a = {p->rows[slot], count, k, k, 1};
    matrix o = {p->out->aligned + (p->out->offset + n * os[0] + y * os[1] + x * os[2]) * size,
                count, p->filter.cols, os[2], os[3]};
    product(a, p->filter, o, p->type, p->zero);
}

/* out[n, y, x, f] += sum over (i, j, c) of in[n, y * sy + i * dy, x * sx + j * dx, c] *
 * filter[i, j, c, f], in that order of (i, j, c) for every element. The chunks are the
 * same on any number of threads, and so are the results. */
static void conv2d(view4 *in, view4 *filter, view4 *out, int64_t sy, int64_t sx, int64_t dy,
                   int64_t dx, int32_t zero, element type) {
    const int64_t size = element_size[type];
    const int64_t *is = in->strides, *fs = filter->strides, *os = out->strides;
    int64_t kh = filter->sizes[0], kw = filter->sizes[1], c = filter->sizes[2];
    int64_t f = filter->sizes[3], k = kh * kw * c;
    int64_t height = out->sizes[1], width = out->sizes[2];
    if (out->sizes[0] == 0 || height == 0 || width == 0 || f == 0)
        return;
    if (k == 0) { /* no taps: the sums are empty */
        for (int64_t n = 0; zero && n < out->sizes[0]; ++n)
            for (int64_t y = 0; y < height; ++y) {
                char *row = out->aligned + (out->offset + n * os[0] + y * os[1]) * size;
                clear((matrix){row, width, f, os[2], os[3]}, type);
            }
        return;
    }
    /* The filter as a k x f matrix: its (i, j, c) rows must be evenly spaced, else copy it. */
    char *weights = filter->aligned + filter->offset * size, *packed = NULL;
    int64_t row_stride = fs[2];
    if (!(fs[1] == c * fs[2] && fs[0] == kw * fs[1])) {
        packed = malloc((size_t)(k * f * size));
        char *to = packed;
        for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j)
                for (int64_t ch = 0; ch < c; ++ch)
                    to = gather(to, weights + (i * fs[0] + j * fs[1] + ch * fs[2]) * size, f,
                                fs[3], size);
        weights = packed;
        row_stride = f;
    }
    /* Output pixels (y, x) are rows of one matrix when rows of x follow each other evenly;
     * otherwise a chunk holds the pixels of one y. */
    int64_t pixels = height * width, chunk = CHUNK_BYTES / (k * size);
    if (chunk < 1)
        chunk = 1;
    if (os[1] != width * os[2] && chunk > width)
        chunk = width;
    int64_t per_image = 0;
    for (int64_t first = 0, count; first < pixels; first += count, ++per_image) {
        count = pixels - first < chunk ? pixels - first : chunk;
        if (os[1] != width * os[2] && count > width - first % width)
            count = width - first % width;
    }
    int64_t *firsts = malloc((size_t)(per_image + 1) * sizeof *firsts);
    per_image = 0;
    for (int64_t first = 0, count; first < pixels; first += count) {
        firsts[per_image++] = first;
        count = pixels - first < chunk ? pixels - first : chunk;
        if (os[1] != width * os[2] && count > width - first % width)
            count = width - first % width;
    }
    firsts[per_image] = pixels;
    int64_t chunks = out->sizes[0] * per_image;
    int64_t slots = split_slots((double)out->sizes[0] * pixels * k * f);
    slots = slots < chunks ? slots : chunks;
    char **rows = malloc((size_t)slots * sizeof *rows);
    for (int64_t slot = 0; slot < slots; ++slot)
        rows[slot] = malloc((size_t)(chunk * k * size));
    /* Taps j of one (y, x, i) are contiguous when x's channels are and dx steps one pixel. */
    conv_chunks p = {in,  out, {weights, k, f, row_stride, packed ? 1 : fs[3]},
                     sy,  sx,  dy, dx, kh, kw, c, is[3] == 1 && dx * is[2] == c ? kw * c : c,
                     per_image, firsts, rows, type, zero};
    SPLIT(chunks, slots, conv_chunk, &p);
    for (int64_t slot = 0; slot < slots; ++slot)
        free(rows[slot]);
    free(rows);
    free(firsts);
    free(packed);
}

#define RW_ENTRIES(suffix, type)                                                              \
    void RW_HELPER(matmul_##suffix)(view2 *a, view2 *b, view2 *c, int32_t ta, int32_t tb,      \
                                    int32_t zero) {                                           \
        matmul(a, b, c, ta, tb, zero, type);                                                  \
    }                                                                                         \
    void RW_HELPER(batch_matmul_##suffix)(view3 *a, view3 *b, view3 *c, int32_t ta,           \
                                          int32_t tb, int32_t zero) {                         \
        batch_matmul(a, b, c, ta, tb, zero, type);                                            \
    }                                                                                         \
    void RW_HELPER(batch_matmul_shared_##suffix)(view3 *a, view2 *b, view3 *c, int32_t ta,    \
                                                 int32_t tb, int32_t zero) {                  \
        batch_matmul_shared(a, b, c, ta, tb, zero, type);                                     \
    }                                                                                         \
    void RW_HELPER(conv2d_##suffix)(view4 *in, view4 *filter, view4 *out, int64_t sy,         \
                                    int64_t sx, int64_t dy, int64_t dx, int32_t zero) {       \
        conv2d(in, filter, out, sy, sx, dy, dx, zero, type);                                  \
    }

RW_ENTRIES(f32, F32)
RW_ENTRIES(f64, F64)
RW_ENTRIES(c64, C64)
RW_ENTRIES(c128, C128)
