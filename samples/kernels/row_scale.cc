// row_scale: row r (first axis) of a float32 (b, n) array times (r + 1) * factor, for any
// batch size b; `factor` is an f32 attribute.
#include <cstdint>

#include "kernels.h"
#include "views.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

// The shared implementation: x into the dense row-major y.
void RowScaleRows(float factor, kernels::View2D<float> x, float* y) {
  for (int64_t r = 0; r < x.rows; ++r) {
    float s = static_cast<float>(r + 1) * factor;
    kernels::View1D<float> row = x.row(r);
    for (int64_t c = 0; c < row.size; ++c) y[r * x.cols + c] = row[c] * s;
  }
}

// Named, as the handler macro cannot take a comma in a type.
using Matrix = ffi::Buffer<ffi::F32, 2>;

ffi::Error RowScaleImpl(float factor, Matrix x, ffi::Result<Matrix> y) {
  RowScaleRows(factor, kernels::rows_of<float>(x), y->typed_data());
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(RowScale, RowScaleImpl,
                              ffi::Ffi::Bind()
                                  .Attr<float>("factor")
                                  .Arg<Matrix>()
                                  .Ret<Matrix>());

// The batch size comes from the descriptor (x->sizes[0]), not from the module's types.
// `result_shape` holds the result's dims as jax computed them; it must agree with x.
extern "C" void _mlir_ciface_row_scale(rw_memref_f32_2d* result, rw_memref_f32_2d* x,
                                       rw_memref_i32_1d* result_shape, float factor) {
  kernels::View1D<int32_t> shape = kernels::view1d<int32_t>(result_shape);
  if (shape.size != 2 || shape[0] != x->sizes[0] || shape[1] != x->sizes[1]) std::abort();
  kernels::check_alloc(rw_memref_f32_2d_alloc(result, x->sizes));
  RowScaleRows(factor, kernels::view2d<float>(x), result->aligned);
}
