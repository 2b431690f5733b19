/*
 * sort_calls.c - the sorts of a compiled module, as a stable radix or merge sort.
 *
 * `python -m rewriter.compile` reads the comparators jax writes (rewriter/compile/sorts.py:
 * one key or several, lexicographic; signed, unsigned, floats in total order, made
 * canonical as jax does it or not; ascending or descending) and replaces each such sort,
 * after bufferization, by a call of rw_sort (rewriter/compile/library_calls.py) with a table
 * of int64 values describing it:
 *
 *   rank, dimension, operands, keys,
 *   keys x (operand, code),
 *   operands x (element bytes, aligned address, offset, sizes[rank], strides[rank]),
 *   wanted
 *
 * A key's code is format | CANONICAL | DESCENDING | part << PART_SHIFT (sorts.py). Every
 * operand is sorted in place along `dimension`, each line of it (one per index of the other
 * dimensions) on its own: the lines' keys become unsigned codes as wide as the key whose
 * order is the key's order; consecutive keys whose widths add up to 64 bits at most are
 * packed into one code (an i32 and an f32 key of a lexsort: one code), one stable sort per
 * code from the last to the first orders the line's positions (so ties keep their order,
 * and the first key decides first), and each operand is permuted by the result. A line of
 * RADIX_FROM entries or more is sorted by a radix sort, a byte of the code at a time, O(n)
 * per byte; a shorter one by a merge sort, O(n log n). A line of one code whose operands'
 * elements take 16 bytes at most (an argsort of f32 keys, a lexsort of two 32-bit keys)
 * has them carried through the radix sort with the codes, and written in order
 * (sort_carried_line).
 *
 * `wanted` is how many first positions of each line the program reads (n for a sort; k for
 * the sort of lax.top_k, whose results are only sliced to their first k: sorts.py,
 * keep_marked_sorts_whole). When it is below n and the keys pack into one code, the line is
 * selected rather than sorted, and only its first k positions written (the others keep
 * what they held): up to 256, a max-heap of the k first in (code, position) order as the
 * line goes by, O(n log k), its codes made and tested 512 at a time (a block none of
 * whose codes goes in is passed over after one vector comparison per entry); above, the
 * k-th smallest code by quickselect, the positions below it and the first of those equal to it (in
 * their order), and a stable merge sort of these k alone, O(n + k log k) per line.
 */
#define _GNU_SOURCE /* posix_memalign and MADV_HUGEPAGE under -std=c11 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "rewriter_sort_table.h"

enum { SIGNED = 1, UNSIGNED, F16, BF16, F32, F64 };
#define FORMAT_MASK 0xff
#define CANONICAL (1 << 8)
#define DESCENDING (1 << 9)
#define PART_SHIFT 10

typedef struct {
    uint64_t code;
    int64_t position;
} entry;

typedef struct {
    char *data; /* the element at index 0 of every dimension */
    int64_t bytes;
    const int64_t *sizes;
    const int64_t *strides; /* in elements */
} operand;

static uint64_t read_bits(const char *p, int64_t bytes) {
    switch (bytes) {
    case 1: { uint8_t v; memcpy(&v, p, 1); return v; }
    case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
    case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
    }
}

/* The bits of a key's code: those of the element, or of its real or imaginary part. */
static int key_bits(int64_t element_bytes, int64_t code) {
    return 8 * (int)((code >> PART_SHIFT) ? element_bytes / 2 : element_bytes);
}

/* An unsigned code of the element at p, below 2^key_bits, whose order is the key's order. */
static uint64_t key_code(const char *p, int64_t element_bytes, int64_t code) {
    int format = (int)(code & FORMAT_MASK);
    int part = (int)(code >> PART_SHIFT);
    int64_t bytes = part ? element_bytes / 2 : element_bytes;
    if (part == 2)
        p += bytes;
    uint64_t bits = read_bits(p, bytes);
    int width = 8 * (int)bytes;
    uint64_t sign = UINT64_C(1) << (width - 1);
    uint64_t mask = width == 64 ? ~UINT64_C(0) : (UINT64_C(1) << width) - 1;
    uint64_t result;
    if (format == SIGNED) {
        result = bits ^ sign; /* two's complement to offset binary */
    } else if (format == UNSIGNED) {
        result = bits;
    } else {
        int mantissa = format == F16 ? 10 : format == BF16 ? 7 : format == F32 ? 23 : 52;
        uint64_t exponent = (sign - 1) & ~((UINT64_C(1) << mantissa) - 1);
        int nan = (bits & exponent) == exponent && (bits & ((UINT64_C(1) << mantissa) - 1));
        if ((code & CANONICAL) && nan) {
            result = mask; /* every NaN equal, after everything else */
        } else {
            if ((code & CANONICAL) && bits == sign)
                bits = 0; /* -0 is 0 */
            result = (bits & sign) ? (~bits & mask) : (bits | sign);
        }
    }
    return (code & DESCENDING) ? (~result & mask) : result;
}

static void insertion_sort(entry *a, int64_t n) {
    for (int64_t i = 1; i < n; i++) {
        entry x = a[i];
        int64_t j = i;
        while (j > 0 && a[j - 1].code > x.code) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
}

/* Stable: of two equal codes the one first in `a` stays first. */
static void merge_sort(entry *a, entry *scratch, int64_t n) {
    const int64_t run = 32;
    for (int64_t start = 0; start < n; start += run)
        insertion_sort(a + start, n - start < run ? n - start : run);
    entry *from = a, *to = scratch;
    for (int64_t width = run; width < n; width *= 2) {
        for (int64_t low = 0; low < n; low += 2 * width) {
            int64_t middle = low + width < n ? low + width : n;
            int64_t high = low + 2 * width < n ? low + 2 * width : n;
            int64_t i = low, j = middle, k = low;
            if (middle == high || from[middle - 1].code <= from[middle].code) {
                memcpy(to + low, from + low, (size_t)(high - low) * sizeof(entry));
                continue;
            }
            while (i < middle && j < high)
                to[k++] = from[j].code < from[i].code ? from[j++] : from[i++];
            while (i < middle)
                to[k++] = from[i++];
            while (j < high)
                to[k++] = from[j++];
        }
        entry *swap = from;
        from = to;
        to = swap;
    }
    if (from != a)
        memcpy(a, from, (size_t)n * sizeof(entry));
}

/* From 2 MB on, a buffer on huge pages where Linux gives them on request: one page fault
 * in 512 when the sort first writes it (the faults took a quarter of an argsort of 4M). */
#define HUGE_FROM ((size_t)2 << 20)

static void *allocate(size_t bytes) {
    void *p = NULL;
#if defined(MADV_HUGEPAGE)
    if (bytes >= HUGE_FROM) {
        if (posix_memalign(&p, HUGE_FROM, bytes) == 0)
            madvise(p, bytes, MADV_HUGEPAGE);
        else
            p = NULL;
    }
#endif
    if (!p)
        p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "rw_sort: out of memory (%zu bytes)\n", bytes);
        abort();
    }
    return p;
}

#if defined(__GNUC__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif

/* Stable, as merge_sort: a least significant digit radix sort of n records of `size`
 * bytes, each starting with its code, by the code's low `bits` bits a byte at a time, each
 * byte's counts made in one pass over the codes before the first; a byte all codes share
 * is passed over. O(n) per byte: from RADIX_FROM entries on, fewer steps than the merge
 * sort's log n passes (f32 keys: at most 4 passes). Inlined where `size` is a constant,
 * so that a record moves in a few instructions. */
#define RADIX_FROM 256
static ALWAYS_INLINE void radix_sort_records(char *a, char *scratch, int64_t n, int bits,
                                             size_t size) {
    int digits = (bits + 7) / 8;
    int64_t *counts = allocate((size_t)digits * 256 * sizeof(int64_t));
    memset(counts, 0, (size_t)digits * 256 * sizeof(int64_t));
    for (int64_t j = 0; j < n; j++) {
        uint64_t code;
        memcpy(&code, a + (size_t)j * size, 8);
        for (int d = 0; d < digits; d++)
            counts[d * 256 + ((code >> (8 * d)) & 0xff)]++;
    }
    char *from = a, *to = scratch;
    for (int d = 0; d < digits; d++) {
        int64_t *count = counts + d * 256;
        int shift = 8 * d;
        uint64_t first;
        memcpy(&first, from, 8);
        if (count[(first >> shift) & 0xff] == n)
            continue;
        for (int64_t digit = 0, sum = 0; digit < 256; digit++) {
            int64_t here = count[digit];
            count[digit] = sum;
            sum += here;
        }
        for (int64_t j = 0; j < n; j++) {
            uint64_t code;
            memcpy(&code, from + (size_t)j * size, 8);
            memcpy(to + (size_t)count[(code >> shift) & 0xff]++ * size, from + (size_t)j * size,
                   size);
        }
        char *swap = from;
        from = to;
        to = swap;
    }
    if (from != a)
        memcpy(a, from, (size_t)n * size);
    free(counts);
}

static void radix_sort(entry *a, entry *scratch, int64_t n, int bits) {
    radix_sort_records((char *)a, (char *)scratch, n, bits, sizeof(entry));
}

/* The code of keys first to last packed into one, the first key highest, of the elements
 * at `position` along `dimension` (each line's elements start at `start`). */
static ALWAYS_INLINE uint64_t packed_code(const operand *operands, char *const *start,
                                          const int64_t *key, int64_t first, int64_t last,
                                          int64_t dimension, int64_t position) {
    uint64_t packed = 0;
    for (int64_t k = first; k <= last; k++) {
        const operand *o = &operands[key[2 * k]];
        const char *at = start[key[2 * k]] + position * o->strides[dimension] * o->bytes;
        int width = key_bits(o->bytes, key[2 * k + 1]);
        packed = (width == 64 ? 0 : packed << width) | key_code(at, o->bytes, key[2 * k + 1]);
    }
    return packed;
}

/* One element of `bytes` bytes copied, in one move for each size an element has. */
static ALWAYS_INLINE void copy_element(char *to, const char *from, int64_t bytes) {
    switch (bytes) {
    case 1: memcpy(to, from, 1); break;
    case 2: memcpy(to, from, 2); break;
    case 4: memcpy(to, from, 4); break;
    case 8: memcpy(to, from, 8); break;
    default: memcpy(to, from, (size_t)bytes);
    }
}

/* A line whose keys pack into one code and whose operands' elements take CARRIED_MOST
 * bytes at most (an argsort of f32 keys: the keys and the positions; a lexsort of two
 * 32-bit keys: three operands): each record holds the code and the elements of every
 * operand at its position, the radix sort moves them together, and the sorted line is
 * written from the records in order. No element is read at a random position (the
 * permutation's random reads took two thirds of an argsort of 4M entries). Records of 16
 * bytes (elements of 8 bytes at most) or 24, as `record_bytes` says. */
#define CARRIED_MOST 16
static size_t record_bytes(int64_t elements_bytes) { return elements_bytes <= 8 ? 16 : 24; }

static void sort_carried_line(char *records, char *scratch, int64_t n, int bits,
                             const operand *operands, char *const *start, int64_t count,
                             const int64_t *key, int64_t keys, int64_t dimension,
                             int64_t all_bytes) {
    size_t size = record_bytes(all_bytes);
    for (int64_t j = 0; j < n; j++) {
        char *record = records + (size_t)j * size;
        uint64_t packed = packed_code(operands, start, key, 0, keys - 1, dimension, j);
        memcpy(record, &packed, 8);
        char *element = record + 8;
        for (int64_t o = 0; o < count; element += operands[o].bytes, o++)
            copy_element(element, start[o] + j * operands[o].strides[dimension] * operands[o].bytes,
                         operands[o].bytes);
    }
    if (size == 16)
        radix_sort_records(records, scratch, n, bits, 16);
    else
        radix_sort_records(records, scratch, n, bits, 24);
    for (int64_t j = 0; j < n; j++) {
        const char *element = records + (size_t)j * size + 8;
        for (int64_t o = 0; o < count; element += operands[o].bytes, o++)
            copy_element(start[o] + j * operands[o].strides[dimension] * operands[o].bytes, element,
                         operands[o].bytes);
    }
}

/* The k-th smallest (k from 0) of the n codes in a, which it reorders. */
static uint64_t select_code(uint64_t *a, int64_t n, int64_t k) {
    int64_t low = 0, high = n - 1;
    while (low < high) {
        /* the median of three as pivot, then a three-way partition of [low, high] */
        uint64_t x = a[low], y = a[low + (high - low) / 2], z = a[high];
        uint64_t pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        int64_t lt = low, i = low, gt = high;
        while (i <= gt) {
            if (a[i] < pivot) {
                uint64_t t = a[lt]; a[lt++] = a[i]; a[i++] = t;
            } else if (a[i] > pivot) {
                uint64_t t = a[gt]; a[gt--] = a[i]; a[i] = t;
            } else {
                i++;
            }
        }
        if (k < lt)
            high = lt - 1;
        else if (k > gt)
            low = gt + 1;
        else
            return pivot;
    }
    return a[low];
}

/* Up to this many wanted, a heap selects them; above, quickselect. */
#define HEAP_LARGEST 256

/* Is a after b: a greater code, or an equal one at a later position? */
static int after(entry a, entry b) {
    return a.code > b.code || (a.code == b.code && a.position > b.position);
}

static void sift_down(entry *heap, int64_t size, int64_t i) {
    for (;;) {
        int64_t largest = i, l = 2 * i + 1, r = l + 1;
        if (l < size && after(heap[l], heap[largest]))
            largest = l;
        if (r < size && after(heap[r], heap[largest]))
            largest = r;
        if (largest == i)
            return;
        entry t = heap[i];
        heap[i] = heap[largest];
        heap[largest] = t;
        i = largest;
    }
}

/* Few wanted: the `wanted` first entries in (code, position) order kept in a max-heap as
   the line goes by; an entry not before the heap's last is passed over with one
   comparison (as the positions grow, an equal code comes after). O(n log wanted). */
static void heap_first(entry *entries, entry *heap, int64_t n, int64_t wanted) {
    for (int64_t j = 0; j < wanted; j++)
        heap[j] = entries[j];
    for (int64_t i = wanted / 2 - 1; i >= 0; i--)
        sift_down(heap, wanted, i);
    for (int64_t j = wanted; j < n; j++) {
        if (entries[j].code >= heap[0].code)
            continue;
        heap[0] = entries[j];
        sift_down(heap, wanted, 0);
    }
    for (int64_t size = wanted; size > 0; size--) {
        entries[size - 1] = heap[0];
        heap[0] = heap[size - 1];
        sift_down(heap, size - 1, 0);
    }
}

/* The codes of m consecutive elements of one key from p. Contiguous f32 keys (lax.top_k's
   usual operand) take a branch-free form of key_code that the compiler vectorizes: the
   line's scan is then a few instructions per element rather than key_code's branches. */
static void block_codes(uint64_t *codes, const char *p, int64_t step, int64_t bytes,
                        int64_t code, int64_t m) {
    if (bytes == 4 && step == 4 && (code & FORMAT_MASK) == F32 && !(code >> PART_SHIFT)) {
        int canonical = (code & CANONICAL) != 0;
        uint32_t flip = (code & DESCENDING) ? UINT32_MAX : 0, sign = UINT32_C(1) << 31;
        for (int64_t i = 0; i < m; i++) {
            uint32_t bits;
            memcpy(&bits, p + 4 * i, 4);
            int nan = (bits & (sign - 1)) > UINT32_C(0x7f800000);
            bits = canonical && bits == sign ? 0 : bits;
            uint32_t result = (bits & sign) ? ~bits : (bits | sign);
            result = canonical && nan ? UINT32_MAX : result;
            codes[i] = result ^ flip;
        }
        return;
    }
    for (int64_t i = 0; i < m; i++)
        codes[i] = key_code(p + i * step, bytes, code);
}

/* Elements whose codes a line's scan computes at once, then checks against the heap. */
#define SCAN_BLOCK 512

/* heap_first on the codes of one key read as the line goes by (no code stored for the
   entries passed over): entries[0, wanted) become the first `wanted`, in order. A block
   of codes none of which is before the heap's last is passed over with one test. */
static void heap_of_line(entry *entries, entry *heap, const char *base, int64_t step,
                         int64_t bytes, int64_t code, int64_t n, int64_t wanted) {
    for (int64_t j = 0; j < wanted; j++) {
        heap[j].code = key_code(base + j * step, bytes, code);
        heap[j].position = j;
    }
    for (int64_t i = wanted / 2 - 1; i >= 0; i--)
        sift_down(heap, wanted, i);
    uint64_t codes[SCAN_BLOCK];
    for (int64_t j = wanted; j < n; j += SCAN_BLOCK) {
        int64_t m = n - j < SCAN_BLOCK ? n - j : SCAN_BLOCK;
        block_codes(codes, base + j * step, step, bytes, code, m);
        uint64_t last = heap[0].code;
        int before = 0;
        for (int64_t i = 0; i < m; i++)
            before |= codes[i] < last;
        if (!before)
            continue;
        for (int64_t i = 0; i < m; i++) {
            if (codes[i] >= heap[0].code)
                continue;
            heap[0].code = codes[i];
            heap[0].position = j + i;
            sift_down(heap, wanted, 0);
        }
    }
    for (int64_t size = wanted; size > 0; size--) {
        entry top = heap[0];
        heap[0] = heap[size - 1];
        sift_down(heap, size - 1, 0);
        entries[size - 1] = top;
    }
}

/* The first `wanted` entries (positions in order, their codes) made the `wanted` smallest
   codes, stably sorted; the entries after them are left as they are (not read). */
static void select_first(entry *entries, entry *scratch, uint64_t *codes, int64_t n,
                         int64_t wanted) {
    if (wanted <= HEAP_LARGEST) {
        heap_first(entries, scratch, n, wanted);
        return;
    }
    for (int64_t j = 0; j < n; j++)
        codes[j] = entries[j].code;
    uint64_t kth = select_code(codes, n, wanted - 1);
    int64_t below = 0;
    for (int64_t j = 0; j < n; j++)
        below += entries[j].code < kth;
    int64_t equal_taken = wanted - below, taken = 0;
    for (int64_t j = 0; j < n && taken < wanted; j++) {
        entry e = entries[j];
        if (e.code < kth || (e.code == kth && equal_taken-- > 0))
            scratch[taken++] = e;
    }
    memcpy(entries, scratch, (size_t)wanted * sizeof(entry));
    merge_sort(entries, scratch, wanted);
}


/* The helper's name: rw_sort, or rw_sort1, ... for a module with a symbol @rw_sort. */
#ifndef RW_SORT
#define RW_SORT rw_sort
#endif
#define RW_PASTE(a, b) a##b
#define RW_NAME(a, b) RW_PASTE(a, b)

void RW_NAME(_mlir_ciface_, RW_SORT)(table_view *view) {
    const int64_t *t = view->aligned + view->offset;
    int64_t rank = t[0], dimension = t[1], count = t[2], keys = t[3];
    const int64_t *key = t + 4;
    const int64_t *described = key + 2 * keys;
    operand operands[count > 0 ? count : 1];
    int64_t widest = 1, all_bytes = 0;
    for (int64_t o = 0; o < count; o++) {
        const int64_t *d = described + o * (3 + 2 * rank);
        operands[o].bytes = d[0];
        operands[o].data = (char *)(intptr_t)d[1] + d[2] * d[0];
        operands[o].sizes = d + 3;
        operands[o].strides = d + 3 + rank;
        if (d[0] > widest)
            widest = d[0];
        all_bytes += d[0];
    }
    int64_t n = operands[0].sizes[dimension];
    int64_t wanted = described[count * (3 + 2 * rank)];
    int64_t lines = 1;
    for (int64_t r = 0; r < rank; r++)
        if (r != dimension)
            lines *= operands[0].sizes[r];
    if (n < 2 || lines == 0)
        return;
    int one_code = 1; /* do the keys pack into one code? */
    int code_bits = 0;  /* when they do, that code's */
    for (int64_t k = 0; k < keys; k++) {
        code_bits += key_bits(operands[key[2 * k]].bytes, key[2 * k + 1]);
        one_code = one_code && code_bits <= 64;
    }
    int selecting = one_code && wanted > 0 && wanted < n;
    int streaming = selecting && keys == 1 && wanted <= HEAP_LARGEST; /* heap_of_line */
    /* the elements sorted with their codes (sort_carried_line) */
    int carrying = one_code && !selecting && n >= RADIX_FROM && all_bytes <= CARRIED_MOST;
    /* streaming, only the `wanted` first entries, the heap and their elements are held */
    int64_t held = streaming ? wanted : n;
    size_t record = carrying ? record_bytes(all_bytes) : sizeof(entry);
    entry *entries = allocate((size_t)held * record);
    entry *scratch = allocate((size_t)held * record);
    char *line = carrying ? NULL : allocate((size_t)(held * widest)); /* the permutation's */
    uint64_t *codes = selecting && !streaming ? allocate((size_t)n * sizeof(uint64_t)) : NULL;
    int64_t index[rank];
    memset(index, 0, sizeof index);
    for (int64_t l = 0; l < lines; l++) {
        /* the first element of this line, in every operand */
        char *start[count > 0 ? count : 1];
        for (int64_t o = 0; o < count; o++) {
            int64_t offset = 0;
            for (int64_t r = 0; r < rank; r++)
                offset += index[r] * operands[o].strides[r];
            start[o] = operands[o].data + offset * operands[o].bytes;
        }
        if (carrying) {
            sort_carried_line((char *)entries, (char *)scratch, n, code_bits, operands, start,
                              count, key, keys, dimension, all_bytes);
            goto next_line;
        }
        if (!streaming) /* the heap reads the positions as it goes */
            for (int64_t j = 0; j < n; j++)
                entries[j].position = j;
        /* codes from the last key: keys [first, last] packed into one, first key highest */
        for (int64_t last = keys - 1; last >= 0;) {
            int64_t first = last;
            int bits = key_bits(operands[key[2 * last]].bytes, key[2 * last + 1]);
            while (first > 0) {
                int more = key_bits(operands[key[2 * (first - 1)]].bytes, key[2 * first - 1]);
                if (bits + more > 64)
                    break;
                bits += more;
                first--;
            }
            if (first == last) { /* one key: its operand, step and code hoisted */
                const operand *o = &operands[key[2 * last]];
                int64_t step = o->strides[dimension] * o->bytes, bytes = o->bytes;
                int64_t code = key[2 * last + 1];
                const char *base = start[key[2 * last]];
                if (streaming) {
                    heap_of_line(entries, scratch, base, step, bytes, code, n, wanted);
                    last = first - 1;
                    continue;
                }
                for (int64_t j = 0; j < n; j++)
                    entries[j].code = key_code(base + entries[j].position * step, bytes, code);
            } else {
                for (int64_t j = 0; j < n; j++)
                    entries[j].code = packed_code(operands, start, key, first, last, dimension,
                                                  entries[j].position);
            }
            if (selecting)
                select_first(entries, scratch, codes, n, wanted);
            else if (n >= RADIX_FROM)
                radix_sort(entries, scratch, n, bits);
            else
                merge_sort(entries, scratch, n);
            last = first - 1;
        }
        /* selected: only the first `wanted` positions are written (nothing reads the others) */
        int64_t written = selecting ? wanted : n;
        for (int64_t o = 0; o < count; o++) {
            int64_t bytes = operands[o].bytes;
            int64_t step = operands[o].strides[dimension] * bytes;
            for (int64_t j = 0; j < written; j++)
                memcpy(line + j * bytes, start[o] + entries[j].position * step, (size_t)bytes);
            for (int64_t j = 0; j < written; j++)
                memcpy(start[o] + j * step, line + j * bytes, (size_t)bytes);
        }
    next_line:
        /* the next index of the other dimensions, the last one fastest */
        for (int64_t r = rank - 1; r >= 0; r--) {
            if (r == dimension)
                continue;
            if (++index[r] < operands[0].sizes[r])
                break;
            index[r] = 0;
        }
    }
    free(entries);
    free(scratch);
    free(line);
    free(codes);
}
