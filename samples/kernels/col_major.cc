// col_major_kernel: a kernel written for column-major data, like jaxlib's LAPACK kernels.
// out[i, j] = x[i, j] * (i + 1) + j for a float32 matrix of logical shape [m, n]; both
// the input and the output are column-major (element (i, j) at index j * m + i).
#include <cstdint>
#include <cstdlib>

#include "kernels.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

// The shared implementation, on column-major storage. `x_at(i, j)` reads the input.
template <typename Read>
void ColMajorKernel(int64_t m, int64_t n, Read x_at, float* out) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) out[j * m + i] = x_at(i, j) * float(i + 1) + float(j);
}

// XLA hands over the declared layout: the buffer of logical dims [m, n] is column-major.
ffi::Error ColMajorImpl(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> out) {
  auto dims = x.dimensions();
  if (dims.size() != 2) return ffi::Error::InvalidArgument("col_major_kernel takes a matrix");
  const int64_t m = dims[0], n = dims[1];
  const float* data = x.typed_data();
  ColMajorKernel(m, n, [&](int64_t i, int64_t j) { return data[j * m + i]; },
                 out->typed_data());
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(ColMajor, ColMajorImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

// The rewrite transposes around the call: the descriptor holds the logical dims in the
// order (1, 0), sizes = [n, m], which in row-major order are the column-major bytes.
extern "C" void _mlir_ciface_col_major_kernel(rw_memref_f32_2d* result, rw_memref_f32_2d* x) {
  const int64_t n = x->sizes[0], m = x->sizes[1];
  if (rw_memref_f32_2d_alloc(result, x->sizes) != 0) std::abort();
  const float* base = x->aligned + x->offset;
  auto x_at = [&](int64_t i, int64_t j) { return base[j * x->strides[0] + i * x->strides[1]]; };
  ColMajorKernel(m, n, x_at, result->aligned);
}
