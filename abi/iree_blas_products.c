/*
 * iree_blas_products.c - matrix products inside IREE dispatches, computed by a BLAS's gemm.
 *
 * rewriter.iree replaces a stablehlo.dot_general that the BLAS computes faster than IREE's
 * own code (rewriter/iree/blas_products.py) by one flow.dispatch of a hand-written
 * executable whose code calls the executable import `rw_iree_blas_gemm_f32` or `_f64`.
 * IREE resolves it, when it loads the executable, through the executable plugin
 * (abi/iree_ffi_plugin.c), to the functions below, which this file's shared object
 * (rewriter/iree/blas_gemm.py) links against the BLAS that rewriter/compile/blas.py found.
 *
 * One workgroup computes one task: one batch item of the product, or a block of the rows or
 * the columns of its result (a large 2-D product is split so that the workers of IREE's
 * local-task driver share it). Each task is
 * one gemm, C = op(A) @ op(B) with beta 0 (the result binding is not initialised), on the
 * bindings' memory as the tensors lay it out: the Python side worked out from the
 * dot_general's dimension numbers the batch strides, leading dimensions and transposes.
 *
 * The BLAS is reached through its CBLAS entry points, named as rewriter_cblas.h says.
 */
#include <stdint.h>

#include "rewriter_cblas.h"

#define RW_EXPORT __attribute__((visibility("default")))

/* The batch dimensions a task walks (more are collapsed or left to IREE by the Python side). */
enum { MAX_BATCH = 3 };

/* The arguments of the executable import, in the order the dispatch code passes them (all
 * 8 bytes wide, so C's natural alignment packs them as IREE does): the three bindings'
 * base pointers and element offsets, the workgroup's id, then the product's layout. */
typedef struct {
    char *a;
    int64_t a_offset;
    char *b;
    int64_t b_offset;
    char *c;
    int64_t c_offset;
    int64_t task;
    int64_t m, n, k;          /* C is m x n, the sum runs over k */
    int64_t trans_a, lda;     /* op(A) = A (row-major, ld lda) or A^T (trans_a) */
    int64_t trans_b, ldb;
    int64_t ldc;              /* C is row-major */
    int64_t rows, cols;       /* the block of C a task computes (m x n: the whole item) */
    int64_t batch_rank;       /* 0 to MAX_BATCH */
    int64_t batch[MAX_BATCH]; /* sizes of the batch dimensions, the last varying fastest */
    int64_t a_batch[MAX_BATCH], b_batch[MAX_BATCH], c_batch[MAX_BATCH]; /* their strides */
} product;

/* A task's block of C: where it starts in each operand (elements), its rows and columns. */
typedef struct {
    int64_t a, b, c, rows, cols;
} block;

/* Whether the product has no rows or no batch items: a size of 0 read at run time (a product
 * of a symbolic batch, whose workgroups number at least 1: rows of 0, or a leading batch
 * dimension of 0). */
static int empty(const product *p) {
    if (p->m == 0)
        return 1;
    for (int64_t d = 0; d < p->batch_rank; ++d)
        if (p->batch[d] == 0)
            return 1;
    return 0;
}

/* The block of task `p->task`: tasks walk the batch items, in each the row blocks, in each
 * the column blocks. */
static block task_block(const product *p) {
    int64_t row_blocks = (p->m + p->rows - 1) / p->rows;
    int64_t col_blocks = (p->n + p->cols - 1) / p->cols;
    int64_t item = p->task / (row_blocks * col_blocks);
    int64_t within = p->task % (row_blocks * col_blocks);
    int64_t first_row = (within / col_blocks) * p->rows;
    int64_t first_col = (within % col_blocks) * p->cols;
    block t = {p->a_offset, p->b_offset, p->c_offset, 0, 0};
    for (int64_t d = p->batch_rank - 1; d >= 0; --d) {
        int64_t index = item % p->batch[d];
        item /= p->batch[d];
        t.a += index * p->a_batch[d];
        t.b += index * p->b_batch[d];
        t.c += index * p->c_batch[d];
    }
    /* Row i of op(A) starts at i * lda, or at column i when A is stored transposed; column
     * j of op(B) at j, or at row j * ldb when B is stored transposed. */
    t.a += first_row * (p->trans_a ? 1 : p->lda);
    t.b += first_col * (p->trans_b ? p->ldb : 1);
    t.c += first_row * p->ldc + first_col;
    t.rows = p->m - first_row < p->rows ? p->m - first_row : p->rows;
    t.cols = p->n - first_col < p->cols ? p->n - first_col : p->cols;
    return t;
}

RW_EXPORT int rw_iree_blas_gemm_f64(void *params, void *context, void *reserved) {
    (void)context;
    (void)reserved;
    const product *p = params;
    if (empty(p))
        return 0;
    block t = task_block(p);
    RW_CBLAS(dgemm)(ROW_MAJOR, p->trans_a ? TRANS : NO_TRANS, p->trans_b ? TRANS : NO_TRANS,
                    (blas_int)t.rows, (blas_int)t.cols, (blas_int)p->k, 1.0,
                    (const double *)p->a + t.a, (blas_int)p->lda, (const double *)p->b + t.b,
                    (blas_int)p->ldb, 0.0, (double *)p->c + t.c, (blas_int)p->ldc);
    return 0;
}

RW_EXPORT int rw_iree_blas_gemm_f32(void *params, void *context, void *reserved) {
    (void)context;
    (void)reserved;
    const product *p = params;
    if (empty(p))
        return 0;
    block t = task_block(p);
    RW_CBLAS(sgemm)(ROW_MAJOR, p->trans_a ? TRANS : NO_TRANS, p->trans_b ? TRANS : NO_TRANS,
                    (blas_int)t.rows, (blas_int)t.cols, (blas_int)p->k, 1.0f,
                    (const float *)p->a + t.a, (blas_int)p->lda, (const float *)p->b + t.b,
                    (blas_int)p->ldb, 0.0f, (float *)p->c + t.c, (blas_int)p->ldc);
    return 0;
}
