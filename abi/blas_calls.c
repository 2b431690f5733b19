/*
 * blas_calls.c - the matrix products of a compiled module, computed by a BLAS.
 *
 * `python -m rewriter.compile` replaces each linalg.matmul / linalg.batch_matmul (and
 * each linalg.generic that computes one, or a batch times one shared matrix) of
 * f32, f64, complex<f32> or complex<f64> by a call of one of the helpers below
 * (rewriter/compile/library_calls.py) and compiles this file into the module, linked
 * against the BLAS that rewriter/compile/blas.py found.  Each helper computes
 * C += op(A) @ op(B) in place on MLIR memref descriptors (MLIR's C interface), where
 * op(X) is X or, when its flag is set, the transpose of the stored X.
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

static void gemm(int order, int ta, int tb, int64_t m, int64_t n, int64_t k, const char *a,
                 int64_t lda, const char *b, int64_t ldb, char *c, int64_t ldc, element type) {
    static const float one_c64[2] = {1.0f, 0.0f};
    static const double one_c128[2] = {1.0, 0.0};
    switch (type) {
    case F32:
        RW_CBLAS(sgemm)(order, ta, tb, m, n, k, 1.0f, (const float *)a, lda, (const float *)b, ldb,
                        1.0f, (float *)c, ldc);
        break;
    case F64:
        RW_CBLAS(dgemm)(order, ta, tb, m, n, k, 1.0, (const double *)a, lda, (const double *)b,
                        ldb, 1.0, (double *)c, ldc);
        break;
    case C64:
        RW_CBLAS(cgemm)(order, ta, tb, m, n, k, one_c64, a, lda, b, ldb, one_c64, c, ldc);
        break;
    case C128:
        RW_CBLAS(zgemm)(order, ta, tb, m, n, k, one_c128, a, lda, b, ldb, one_c128, c, ldc);
        break;
    }
}

/* c += a @ b for one batch item. */
static void product(matrix a, matrix b, matrix c, element type) {
    int64_t m = c.rows, n = c.cols, k = a.cols, lda, ldb, ldc;
    if (m == 0 || n == 0 || k == 0)
        return;
    int form_a = row_major_form(a, &lda), form_b = row_major_form(b, &ldb);
    int form_c = row_major_form(c, &ldc);
    int sizes_fit = fits(m) && fits(n) && fits(k) && fits(lda) && fits(ldb) && fits(ldc);
    if (!form_a || !form_b || !form_c || !sizes_fit) {
        plain_loop(a, b, c, type);
        return;
    }
    if (form_c == NO_TRANS) {
        gemm(ROW_MAJOR, form_a, form_b, m, n, k, a.data, lda, b.data, ldb, c.data, ldc, type);
    } else {
        /* c's columns are contiguous: a column-major matrix. In column-major terms a
         * row-major operand is a transposed one, and the other way round. */
        int flip_a = form_a == NO_TRANS ? TRANS : NO_TRANS;
        int flip_b = form_b == NO_TRANS ? TRANS : NO_TRANS;
        gemm(COL_MAJOR, flip_a, flip_b, m, n, k, a.data, lda, b.data, ldb, c.data, ldc, type);
    }
}

static void matmul(view2 *a, view2 *b, view2 *c, int32_t ta, int32_t tb, element type) {
    product(item(a->aligned, a->offset, a->sizes, a->strides, ta, type),
            item(b->aligned, b->offset, b->sizes, b->strides, tb, type),
            item(c->aligned, c->offset, c->sizes, c->strides, 0, type), type);
}

static void batch_matmul(view3 *a, view3 *b, view3 *c, int32_t ta, int32_t tb, element type) {
    for (int64_t i = 0; i < c->sizes[0]; ++i)
        product(item(a->aligned, a->offset + i * a->strides[0], a->sizes + 1, a->strides + 1, ta,
                     type),
                item(b->aligned, b->offset + i * b->strides[0], b->sizes + 1, b->strides + 1, tb,
                     type),
                item(c->aligned, c->offset + i * c->strides[0], c->sizes + 1, c->strides + 1, 0,
                     type),
                type);
}

/* A batch of matrices times one matrix: IREE's img2col form of a 2-D convolution. */
static void batch_matmul_shared(view3 *a, view2 *b, view3 *c, int32_t ta, int32_t tb,
                                element type) {
    matrix shared = item(b->aligned, b->offset, b->sizes, b->strides, tb, type);
    for (int64_t i = 0; i < c->sizes[0]; ++i)
        product(item(a->aligned, a->offset + i * a->strides[0], a->sizes + 1, a->strides + 1, ta,
                     type),
                shared,
                item(c->aligned, c->offset + i * c->strides[0], c->sizes + 1, c->strides + 1, 0,
                     type),
                type);
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

/* out[n, y, x, f] += sum over (i, j, c) of in[n, y * sy + i * dy, x * sx + j * dx, c] *
 * filter[i, j, c, f], in that order of (i, j, c) for every element. */
static void conv2d(view4 *in, view4 *filter, view4 *out, int64_t sy, int64_t sx, int64_t dy,
                   int64_t dx, element type) {
    const int64_t size = element_size[type];
    const int64_t *is = in->strides, *fs = filter->strides, *os = out->strides;
    int64_t kh = filter->sizes[0], kw = filter->sizes[1], c = filter->sizes[2];
    int64_t f = filter->sizes[3], k = kh * kw * c;
    int64_t height = out->sizes[1], width = out->sizes[2];
    if (out->sizes[0] == 0 || height == 0 || width == 0 || f == 0 || k == 0)
        return;
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
    matrix shared = {weights, k, f, row_stride, packed ? 1 : fs[3]};
    /* Output pixels (y, x) are rows of one matrix when rows of x follow each other evenly;
     * otherwise a chunk holds the pixels of one y. */
    int64_t pixels = height * width, chunk = CHUNK_BYTES / (k * size);
    if (chunk < 1)
        chunk = 1;
    if (os[1] != width * os[2] && chunk > width)
        chunk = width;
    char *rows = malloc((size_t)(chunk * k * size));
    /* Taps j of one (y, x, i) are contiguous when x's channels are and dx steps one pixel. */
    int64_t run = is[3] == 1 && dx * is[2] == c ? kw * c : c;
    for (int64_t n = 0; n < out->sizes[0]; ++n)
        for (int64_t first = 0, count; first < pixels; first += count) {
            count = pixels - first < chunk ? pixels - first : chunk;
            if (os[1] != width * os[2] && count > width - first % width)
                count = width - first % width;
            char *to = rows;
            for (int64_t p = first; p < first + count; ++p) {
                int64_t y = p / width, x = p % width;
                for (int64_t i = 0; i < kh; ++i) {
                    const char *line = in->aligned +
                                       (in->offset + n * is[0] + (y * sy + i * dy) * is[1] +
                                        x * sx * is[2]) * size;
                    if (run == kw * c) {
                        to = gather(to, line, run, 1, size);
                        continue;
                    }
                    for (int64_t j = 0; j < kw; ++j)
                        to = gather(to, line + j * dx * is[2] * size, c, is[3], size);
                }
            }
            int64_t y = first / width, x = first % width;
            matrix a = {rows, count, k, k, 1};
            matrix o = {out->aligned + (out->offset + n * os[0] + y * os[1] + x * os[2]) * size,
                        count, f, os[2], os[3]};
            product(a, shared, o, type);
        }
    free(rows);
    free(packed);
}

#define RW_ENTRIES(suffix, type)                                                              \
    void RW_HELPER(matmul_##suffix)(view2 *a, view2 *b, view2 *c, int32_t ta,         \
                                              int32_t tb) {                                   \
        matmul(a, b, c, ta, tb, type);                                                        \
    }                                                                                         \
    void RW_HELPER(batch_matmul_##suffix)(view3 *a, view3 *b, view3 *c, int32_t ta,   \
                                                    int32_t tb) {                             \
        batch_matmul(a, b, c, ta, tb, type);                                                  \
    }                                                                                         \
    void RW_HELPER(batch_matmul_shared_##suffix)(view3 *a, view2 *b, view3 *c,        \
                                                           int32_t ta, int32_t tb) {          \
        batch_matmul_shared(a, b, c, ta, tb, type);                                           \
    }                                                                                         \
    void RW_HELPER(conv2d_##suffix)(view4 *in, view4 *filter, view4 *out, int64_t sy, \
                                              int64_t sx, int64_t dy, int64_t dx) {           \
        conv2d(in, filter, out, sy, sx, dy, dx, type);                                        \
    }

RW_ENTRIES(f32, F32)
RW_ENTRIES(f64, F64)
RW_ENTRIES(c64, C64)
RW_ENTRIES(c128, C128)
