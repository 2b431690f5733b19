// views.h - strided views shared by the two entry points of every kernel (C++17).
//
// A kernel's implementation reads its inputs through these views, so it does not care
// whether they come from an XLA FFI buffer (dense, row-major) or from a memref descriptor
// (`aligned + offset`, any strides).
#ifndef SAMPLES_KERNELS_VIEWS_H
#define SAMPLES_KERNELS_VIEWS_H

#include <cstdint>
#include <cstdlib>

#include "xla/ffi/api/ffi.h"

namespace kernels {

template <typename T>
struct View1D {
  const T* data;
  int64_t size;
  int64_t stride;  // in elements
  T operator[](int64_t i) const { return data[i * stride]; }
};

template <typename T>
struct View2D {
  const T* data;
  int64_t rows, cols;
  int64_t row_stride, col_stride;  // in elements
  View1D<T> row(int64_t r) const { return {data + r * row_stride, cols, col_stride}; }
};

// From a memref descriptor (rw_memref_*_1d / _2d of abi/include/rewriter/memref.h).
template <typename T, typename M>
View1D<T> view1d(const M* m) {
  return {reinterpret_cast<const T*>(m->aligned + m->offset), m->sizes[0], m->strides[0]};
}

template <typename T, typename M>
View2D<T> view2d(const M* m) {
  return {m->aligned + m->offset, m->sizes[0], m->sizes[1], m->strides[0], m->strides[1]};
}

// From a dense row-major XLA FFI buffer: all but the last axis become rows.
template <typename T, typename B>
View2D<T> rows_of(const B& buffer) {
  auto dims = buffer.dimensions();
  int64_t cols = dims.size() == 0 ? 1 : dims.back();
  int64_t rows = cols == 0 ? 0 : static_cast<int64_t>(buffer.element_count()) / cols;
  return {buffer.typed_data(), rows, cols, cols, 1};
}

template <typename T>
View1D<T> span_of(xla::ffi::Span<const T> span) {
  return {span.begin(), static_cast<int64_t>(span.size()), 1};
}

// The contract has no error channel: a kernel that cannot allocate its result aborts.
inline void check_alloc(int status) {
  if (status != 0) std::abort();
}

}  // namespace kernels

#endif  // SAMPLES_KERNELS_VIEWS_H
