/*
 * kernels.h - the C entry points of the sample kernel library.
 *
 * Each kernel has one implementation, reachable two ways:
 *   - from JAX, through the XLA FFI handler symbol (e.g. `RmsNorm`), registered with
 *     jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(lib.RmsNorm), platform="cpu");
 *   - from a rewritten, compiled module, through `_mlir_ciface_<target>`, whose prototype
 *     follows abi/README.md for the extern in samples/<sample>/<sample>.rewritten.mlir.
 *
 * The handler symbols are `XLA_FFI_Error *NAME(XLA_FFI_CallFrame *)`, declared by
 * XLA_FFI_DEFINE_HANDLER_SYMBOL in each source; they are not repeated here so that this
 * header needs no XLA include.
 */
#ifndef SAMPLES_KERNELS_H
#define SAMPLES_KERNELS_H

#include <stdbool.h>
#include <stdint.h>

#include "rewriter/memref.h"

#ifdef __cplusplus
extern "C" {
#endif

/* samples/rms_norm: target rms_norm, handler RmsNorm. */
void _mlir_ciface_rms_norm(rw_memref_f32_2d *result, rw_memref_f32_2d *x, float eps);
/* samples/name_clash: the same kernel under the renamed extern @rms_norm_1 (rule 5). */
void _mlir_ciface_rms_norm_1(rw_memref_f32_2d *result, rw_memref_f32_2d *x, float eps);

/* samples/two_results: target sum_and_max, handler SumAndMax. */
typedef struct sum_and_max_results {
    rw_memref_f32_1d result0; /* sum(x, axis=-1) * scale */
    rw_memref_i32_1d result1; /* argmax(x, axis=-1), first maximum */
} sum_and_max_results;   /* as `python -m rewriter --emit-header` names it */
void _mlir_ciface_sum_and_max(sum_and_max_results *results, rw_memref_f32_2d *x, float scale);

/* samples/attribute_kernel: target attr_kernel, handler AttrKernel.  Attributes in
 * dictionary order; f16/bf16 as their bits, the string as its UTF-8 bytes. */
void _mlir_ciface_attr_kernel(rw_memref_f64_1d *result, rw_memref_f32_1d *x, uint16_t bf16,
                              bool boolean, uint16_t f16, float f32, double f64,
                              rw_memref_f32_1d *farr, int16_t i16, int32_t i32, int64_t i64,
                              int8_t i8, rw_memref_i64_1d *iarr, rw_memref_i8_1d *text,
                              uint16_t u16, uint32_t u32, uint64_t u64, uint8_t u8);

/* samples/side_effect: target count_calls, handler CountCalls.  No results. */
void _mlir_ciface_count_calls(rw_memref_f32_1d *x, int32_t tag);
int64_t count_calls_value(void); /* the sum of every `tag` seen since the last reset */
void count_calls_reset(void);

/* samples/dynamic_shape: target row_scale, handler RowScale.  `result_shape` is the
 * shape operand jax adds for a dynamic result (`indices_of_shape_operands`), which the
 * rewrite passes on as an ordinary operand; the XLA handler never sees it. */
void _mlir_ciface_row_scale(rw_memref_f32_2d *result, rw_memref_f32_2d *x,
                            rw_memref_i32_1d *result_shape, float factor);

/* samples/two_targets and samples/while_and_private: targets scale, offset and step,
 * handlers Scale, Offset and Step; rank-1 float32, any length. */
void _mlir_ciface_scale(rw_memref_f32_1d *result, rw_memref_f32_1d *x, float factor);
void _mlir_ciface_offset(rw_memref_f32_1d *result, rw_memref_f32_1d *x, float delta);
void _mlir_ciface_step(rw_memref_f32_1d *result, rw_memref_f32_1d *x, float rate);

/* samples/column_major: target col_major_kernel, handler ColMajor.  The operand and the
 * result are column-major (operand_layouts [0, 1]): the descriptors hold the transposed
 * logical matrix, sizes = [n, m], as `python -m rewriter --emit-header` says. */
void _mlir_ciface_col_major_kernel(rw_memref_f32_2d *result, rw_memref_f32_2d *x);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SAMPLES_KERNELS_H */
