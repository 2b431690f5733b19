// scale, offset, step: small elementwise float32 kernels on rank-1 arrays, used by the
// two_targets and while_and_private samples. y = x * factor, y = x + delta,
// y = x * (1 + rate).
#include <cstdint>

#include "kernels.h"
#include "views.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

enum class Op { kScale, kOffset, kStep };

// The shared implementation: one parameter, one elementwise formula.
void Elementwise(Op op, float parameter, kernels::View1D<float> x, float* y) {
  for (int64_t i = 0; i < x.size; ++i) {
    switch (op) {
      case Op::kScale: y[i] = x[i] * parameter; break;
      case Op::kOffset: y[i] = x[i] + parameter; break;
      case Op::kStep: y[i] = x[i] * (1.0f + parameter); break;
    }
  }
}

template <Op op>
ffi::Error ElementwiseImpl(float parameter, ffi::Buffer<ffi::F32> x,
                           ffi::ResultBuffer<ffi::F32> y) {
  kernels::View1D<float> flat{x.typed_data(), static_cast<int64_t>(x.element_count()), 1};
  Elementwise(op, parameter, flat, y->typed_data());
  return ffi::Error::Success();
}

template <Op op>
void ElementwiseEntry(rw_memref_f32_1d* result, rw_memref_f32_1d* x, float parameter) {
  kernels::check_alloc(rw_memref_f32_1d_alloc(result, x->sizes));
  Elementwise(op, parameter, kernels::view1d<float>(x), result->aligned);
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(Scale, ElementwiseImpl<Op::kScale>,
                              ffi::Ffi::Bind()
                                  .Attr<float>("factor")
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(Offset, ElementwiseImpl<Op::kOffset>,
                              ffi::Ffi::Bind()
                                  .Attr<float>("delta")
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(Step, ElementwiseImpl<Op::kStep>,
                              ffi::Ffi::Bind()
                                  .Attr<float>("rate")
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

extern "C" void _mlir_ciface_scale(rw_memref_f32_1d* result, rw_memref_f32_1d* x, float factor) {
  ElementwiseEntry<Op::kScale>(result, x, factor);
}

extern "C" void _mlir_ciface_offset(rw_memref_f32_1d* result, rw_memref_f32_1d* x, float delta) {
  ElementwiseEntry<Op::kOffset>(result, x, delta);
}

extern "C" void _mlir_ciface_step(rw_memref_f32_1d* result, rw_memref_f32_1d* x, float rate) {
  ElementwiseEntry<Op::kStep>(result, x, rate);
}
