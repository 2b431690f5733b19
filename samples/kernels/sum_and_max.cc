// sum_and_max: two results per row (last axis) of a float32 array: the row sum times the
// f32 attribute `scale` (float32) and the index of the row's first maximum (int32).
#include <cstdint>

#include "kernels.h"
#include "views.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

// The shared implementation: x's rows into the dense outputs sums[rows], argmax[rows].
void SumAndMaxRows(float scale, kernels::View2D<float> x, float* sums, int32_t* argmax) {
  for (int64_t r = 0; r < x.rows; ++r) {
    kernels::View1D<float> row = x.row(r);
    float sum = 0.0f;
    int32_t best = 0;
    for (int64_t c = 0; c < row.size; ++c) {
      sum += row[c];
      if (row[c] > row[best]) best = static_cast<int32_t>(c);
    }
    sums[r] = sum * scale;
    argmax[r] = best;
  }
}

ffi::Error SumAndMaxImpl(float scale, ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> sums,
                         ffi::ResultBuffer<ffi::S32> argmax) {
  if (x.dimensions().size() == 0 || x.dimensions().back() == 0) {
    return ffi::Error::InvalidArgument("SumAndMax input must have a non-empty last axis");
  }
  SumAndMaxRows(scale, kernels::rows_of<float>(x), sums->typed_data(), argmax->typed_data());
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(SumAndMax, SumAndMaxImpl,
                              ffi::Ffi::Bind()
                                  .Attr<float>("scale")
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::S32>>());

extern "C" void _mlir_ciface_sum_and_max(sum_and_max_results* results, rw_memref_f32_2d* x,
                                         float scale) {
  if (x->sizes[1] == 0) std::abort();
  kernels::check_alloc(rw_memref_f32_1d_alloc(&results->result0, x->sizes));
  kernels::check_alloc(rw_memref_i32_1d_alloc(&results->result1, x->sizes));
  SumAndMaxRows(scale, kernels::view2d<float>(x), results->result0.aligned, results->result1.aligned);
}
