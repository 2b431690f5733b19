/*
 * memref_copy.c - MLIR's `memrefCopy`, compiled into the module that calls it.
 *
 * `memref.copy` between views that no loop took lowers (finalize-memref-to-llvm) to a
 * call of `memrefCopy(element size, source, destination)`, each an unranked descriptor:
 * the rank and a pointer to the ranked descriptor {allocated, aligned, offset,
 * sizes[rank], strides[rank]}.  MLIR defines it in libmlir_c_runner_utils, which a
 * machine that runs a compiled model does not have; `python -m rewriter.compile` compiles
 * this file into a module whose LLVM IR calls it, and the symbol stays local to the
 * module.  Same semantics as MLIR's (CRunnerUtils.cpp): an empty shape copies nothing,
 * the copy walks the source and destination strides, element by element.
 */
#include <stdint.h>
#include <string.h>

typedef struct {
    int64_t rank;
    void *descriptor;
} rw_unranked_memref;

typedef struct {
    char *allocated;
    char *aligned;
    int64_t offset;
    int64_t sizes_and_strides[]; /* sizes[rank], then strides[rank] */
} rw_ranked_memref;

void memrefCopy(int64_t element_size, rw_unranked_memref *source, rw_unranked_memref *target)
{
    const rw_ranked_memref *from = source->descriptor;
    const rw_ranked_memref *to = target->descriptor;
    int64_t rank = source->rank;
    const int64_t *sizes = from->sizes_and_strides;
    const int64_t *from_strides = from->sizes_and_strides + rank;
    const int64_t *to_strides = to->sizes_and_strides + rank;
    int64_t index[64] = {0};
    const char *in = from->aligned + from->offset * element_size;
    char *out = to->aligned + to->offset * element_size;
    int64_t d;

    for (d = 0; d < rank; ++d)
        if (sizes[d] == 0)
            return;
    if (rank > 64)
        return; /* MLIR's ranks are far below; never index past `index` */
    for (;;) {
        memcpy(out, in, (size_t)element_size);
        /* the next index, last dimension fastest */
        for (d = rank - 1; d >= 0; --d) {
            if (++index[d] < sizes[d]) {
                in += from_strides[d] * element_size;
                out += to_strides[d] * element_size;
                break;
            }
            in -= (sizes[d] - 1) * from_strides[d] * element_size;
            out -= (sizes[d] - 1) * to_strides[d] * element_size;
            index[d] = 0;
        }
        if (d < 0)
            return;
    }
}
