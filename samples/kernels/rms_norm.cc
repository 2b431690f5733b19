// rms_norm: the JAX FFI tutorial's kernel. Each row (last axis) of a float32 array is
// divided by its root mean square: y = x / sqrt(mean(x^2) + eps).
#include <cmath>
#include <cstdint>

#include "kernels.h"
#include "views.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

// The tutorial's ComputeRmsNorm, reading x through a strided row.
float ComputeRmsNorm(float eps, kernels::View1D<float> x, float* y) {
  float sm = 0.0f;
  for (int64_t n = 0; n < x.size; ++n) sm += x[n] * x[n];
  float scale = 1.0f / std::sqrt(sm / float(x.size) + eps);
  for (int64_t n = 0; n < x.size; ++n) y[n] = x[n] * scale;
  return scale;
}

// The shared implementation: every row of x into the dense row-major y.
void RmsNormRows(float eps, kernels::View2D<float> x, float* y) {
  for (int64_t r = 0; r < x.rows; ++r) ComputeRmsNorm(eps, x.row(r), y + r * x.cols);
}

ffi::Error RmsNormImpl(float eps, ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  if (x.dimensions().size() == 0) {
    return ffi::Error::InvalidArgument("RmsNorm input must be an array");
  }
  RmsNormRows(eps, kernels::rows_of<float>(x), y->typed_data());
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(RmsNorm, RmsNormImpl,
                              ffi::Ffi::Bind()
                                  .Attr<float>("eps")
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

extern "C" void _mlir_ciface_rms_norm(rw_memref_f32_2d* result, rw_memref_f32_2d* x, float eps) {
  kernels::check_alloc(rw_memref_f32_2d_alloc(result, x->sizes));
  RmsNormRows(eps, kernels::view2d<float>(x), result->aligned);
}

// samples/name_clash: a nested jax.jit function named `rms_norm` already defines the symbol
// @rms_norm, so the rewrite names the extern @rms_norm_1 (contract rule 5, reported as a
// warning). One line makes the same kernel answer to that name too.
extern "C" void _mlir_ciface_rms_norm_1(rw_memref_f32_2d* result, rw_memref_f32_2d* x,
                                        float eps) {
  _mlir_ciface_rms_norm(result, x, eps);
}
