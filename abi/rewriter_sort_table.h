/*
 * rewriter_sort_table.h - the table that the merge sort of sort_calls.c reads: a
 * memref<?xi64> descriptor, as the compiled path's code passes it (its entry is
 * `_mlir_ciface_` followed by RW_SORT) and as iree_sorts.c builds it. The table's layout
 * is described at the top of sort_calls.c.
 */
#ifndef REWRITER_SORT_TABLE_H
#define REWRITER_SORT_TABLE_H

#include <stdint.h>

typedef struct {
    int64_t *allocated;
    int64_t *aligned;
    int64_t offset;
    int64_t sizes[1];
    int64_t strides[1];
} table_view;

#endif
