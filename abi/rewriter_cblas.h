/*
 * rewriter_cblas.h - the CBLAS gemm entry points, as blas_calls.c and iree_blas_products.c
 * call them.
 *
 * The BLAS is reached through its CBLAS entry points, whose names and integer width differ
 * between builds; the compiler defines them:
 *   RW_CBLAS_PREFIX, RW_CBLAS_SUFFIX  symbol = PREFIX ## sgemm ## SUFFIX
 *                                     (NumPy's OpenBLAS: scipy_cblas_, 64_)
 *   RW_BLAS_INT                       the BLAS's integer type (int64_t or int32_t)
 * The complex gemms are declared only where RW_CBLAS_COMPLEX is defined.
 */
#ifndef REWRITER_CBLAS_H
#define REWRITER_CBLAS_H

#include <stdint.h>

#ifndef RW_BLAS_INT
#error "define RW_BLAS_INT, RW_CBLAS_PREFIX and RW_CBLAS_SUFFIX"
#endif

#define RW_PASTE(a, b, c) a##b##c
#define RW_NAME(a, b, c) RW_PASTE(a, b, c)
#define RW_CBLAS(name) RW_NAME(RW_CBLAS_PREFIX, name, RW_CBLAS_SUFFIX)

/* CBLAS's values of its order and transpose arguments. */
enum { ROW_MAJOR = 101, COL_MAJOR = 102, NO_TRANS = 111, TRANS = 112 };
typedef RW_BLAS_INT blas_int;

void RW_CBLAS(sgemm)(int order, int ta, int tb, blas_int m, blas_int n, blas_int k, float alpha,
                     const float *a, blas_int lda, const float *b, blas_int ldb, float beta,
                     float *c, blas_int ldc);
void RW_CBLAS(dgemm)(int order, int ta, int tb, blas_int m, blas_int n, blas_int k, double alpha,
                     const double *a, blas_int lda, const double *b, blas_int ldb, double beta,
                     double *c, blas_int ldc);
#ifdef RW_CBLAS_COMPLEX
void RW_CBLAS(cgemm)(int order, int ta, int tb, blas_int m, blas_int n, blas_int k,
                     const void *alpha, const void *a, blas_int lda, const void *b, blas_int ldb,
                     const void *beta, void *c, blas_int ldc);
void RW_CBLAS(zgemm)(int order, int ta, int tb, blas_int m, blas_int n, blas_int k,
                     const void *alpha, const void *a, blas_int lda, const void *b, blas_int ldb,
                     const void *beta, void *c, blas_int ldc);
#endif

#endif
