/*
 * iree_sorts.c - the sorts of the IREE path, inside IREE dispatches, by the merge sort of
 * sort_calls.c.
 *
 * rewriter.iree replaces each sort whose comparator it reads into keys
 * (rewriter/iree/sorts.py) by one flow.dispatch of a hand-written executable
 * (rewriter/iree/sort_dispatches.py) whose code calls the executable import `rw_iree_sort_S`,
 * one name per sort (IREE links a module's executables together, and one import name has
 * one signature in all of them). IREE resolves these imports, when it loads the executable,
 * through the executable plugin (abi/iree_ffi_plugin.c), which serves every import of the
 * prefix `rw_iree_sort_` by `rw_iree_sort` below. Its shared object
 * (rewriter/iree/sort_library.py) is this file linked with sort_calls.c, built with
 * -DRW_SORT=rw_iree_sort_table so that the sort's entry has a name of its own.
 *
 * The arguments of the import, in the order the dispatch code passes them, all 8 bytes
 * wide (C's natural alignment packs them as IREE does):
 *
 *   operands, rank, dimension, keys, wanted,
 *   keys x (operand, code),
 *   sizes[rank]                       (of every operand: the sort's operands share a shape)
 *   operands x element bytes,
 *   operands x (base, offset)         the inputs' bindings (offsets in elements)
 *   operands x (base, offset)         the results' bindings
 *
 * Every tensor is row-major and contiguous. A result holds the whole sorted line (wanted 0)
 * or its first `wanted` entries (the sort of lax.top_k, whose results the program reads
 * only there): the inputs are copied, sorted along `dimension` in place as sort_calls.c
 * does for the compiled path (stable, the first key deciding first), and the results
 * written. The function returns 0, or 1 (IREE then fails the call) when the copies of a
 * top_k's inputs cannot be allocated or the description is beyond its limits;
 * sort_calls.c's own allocations abort the process when memory runs out, as on the
 * compiled path.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter_sort_table.h"

#define RW_EXPORT __attribute__((visibility("default")))
enum { MAX_OPERANDS = 16, MAX_RANK = 16 };

void _mlir_ciface_rw_iree_sort_table(table_view *view);

RW_EXPORT int rw_iree_sort(void *params, void *context, void *reserved) {
    (void)context;
    (void)reserved;
    const int64_t *p = params;
    int64_t count = p[0], rank = p[1], dimension = p[2], keys = p[3], wanted = p[4];
    const int64_t *key = p + 5;
    const int64_t *sizes = key + 2 * keys;
    const int64_t *bytes = sizes + rank;
    const int64_t *bindings = bytes + count; /* inputs, then results: (base, offset) */
    if (count < 1 || count > MAX_OPERANDS || rank < 1 || rank > MAX_RANK)
        return 1; /* sort_dispatches.py routes no other */
    int64_t n = sizes[dimension];
    int64_t kept = wanted > 0 && wanted < n ? wanted : n;
    int64_t before = 1, after = 1; /* the elements of the dimensions before and after it */
    for (int64_t r = 0; r < dimension; r++)
        before *= sizes[r];
    for (int64_t r = dimension + 1; r < rank; r++)
        after *= sizes[r];
    int64_t elements = before * n * after;
    int64_t strides[MAX_RANK];
    for (int64_t r = rank - 1, stride = 1; r >= 0; r--) {
        strides[r] = stride;
        stride *= sizes[r];
    }
    /* the table of sort_calls.c: rank, dimension, operands, keys, keys x (operand, code),
     * operands x (bytes, address, offset, sizes, strides), wanted */
    int64_t table[4 + 2 * 2 * MAX_OPERANDS + MAX_OPERANDS * (3 + 2 * MAX_RANK) + 1];
    int64_t *t = table;
    *t++ = rank;
    *t++ = dimension;
    *t++ = count;
    *t++ = keys;
    for (int64_t k = 0; k < 2 * keys; k++)
        *t++ = key[k];
    char *sorted[MAX_OPERANDS]; /* where each operand is sorted: its result, or a copy */
    for (int64_t o = 0; o < count; o++) {
        const char *input =
            (const char *)(intptr_t)bindings[2 * o] + bindings[2 * o + 1] * bytes[o];
        char *result = (char *)(intptr_t)bindings[2 * (count + o)] +
                       bindings[2 * (count + o) + 1] * bytes[o];
        size_t size = (size_t)(elements * bytes[o]);
        sorted[o] = kept == n ? result : malloc(size ? size : 1);
        if (!sorted[o]) { /* only a copy is allocated */
            for (int64_t q = 0; q < o; q++)
                free(sorted[q]);
            return 1;
        }
        memcpy(sorted[o], input, size);
        *t++ = bytes[o];
        *t++ = (int64_t)(intptr_t)sorted[o];
        *t++ = 0;
        for (int64_t r = 0; r < rank; r++)
            *t++ = sizes[r];
        for (int64_t r = 0; r < rank; r++)
            *t++ = strides[r];
    }
    *t++ = kept;
    table_view view = {table, table, 0, {t - table}, {1}};
    _mlir_ciface_rw_iree_sort_table(&view);
    if (kept == n)
        return 0;
    for (int64_t o = 0; o < count; o++) { /* the first `kept` of each line */
        char *result = (char *)(intptr_t)bindings[2 * (count + o)] +
                       bindings[2 * (count + o) + 1] * bytes[o];
        size_t line = (size_t)(kept * after * bytes[o]), whole = (size_t)(n * after * bytes[o]);
        for (int64_t b = 0; b < before; b++)
            memcpy(result + b * line, sorted[o] + b * whole, line);
        free(sorted[o]);
    }
    return 0;
}
