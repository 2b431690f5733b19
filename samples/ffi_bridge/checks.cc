// Handlers for the bridge's error paths, JAX-callable like any other.
//
// CheckedSqrt: y = sqrt(x) for a float32 array, or an FFI error naming the first negative
// element; the error travels back as the handler's message, in JAX and through the bridge.
// FutureVersion: answers XLA's metadata probe with API version 0.99, which no host of the
// 0.x C API may accept; written against the raw C API, as a handler from the future would be.
#include <cmath>
#include <cstdint>
#include <string>

#include "xla/ffi/api/c_api.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

ffi::Error CheckedSqrtImpl(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  const float *in = x.typed_data();
  float *out = y->typed_data();
  for (size_t i = 0; i < x.element_count(); ++i) {
    if (in[i] < 0.0f) {
      return ffi::Error::InvalidArgument("checked_sqrt: element " + std::to_string(i) +
                                         " is negative");
    }
    out[i] = std::sqrt(in[i]);
  }
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(CheckedSqrt, CheckedSqrtImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

extern "C" XLA_FFI_Error *FutureVersion(XLA_FFI_CallFrame *frame) {
  if (frame->extension_start != nullptr &&
      frame->extension_start->type == XLA_FFI_Extension_Metadata) {
    auto *extension = reinterpret_cast<XLA_FFI_Metadata_Extension *>(frame->extension_start);
    extension->metadata->api_version =
        XLA_FFI_Api_Version{XLA_FFI_Api_Version_STRUCT_SIZE, nullptr, 0, 99};
  }
  return nullptr;
}
