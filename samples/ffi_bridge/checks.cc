// Handlers for the bridge's error paths, JAX-callable like any other.
//
// CheckedSqrt: y = sqrt(x) for a float32 array, or an FFI error naming the first negative
// element; the error travels back as the handler's message, in JAX and through the bridge.
// ConfiguredAffine: y = x * cfg.scale + offset + size(cfg.tag), negated when `flip`, where
// offset is cfg.offset or, nested one level deeper, cfg.inner.offset.  JAX passes a dict
// kwarg as a dictionary attribute (flat: its values must be hashable), so the bridge's
// dictionaries are checked against XLA's own, and a nested one against the handler's view.
// OrderedScale and Fence take and give a token, as mpi4jax's handlers do (jax writes an
// ordered effect as a token threaded through the calls; XLA hands each a TOKEN buffer).
// OrderedScale: y = x * factor. Fence: appends its `id` to a log that FenceLog reads back
// (FenceReset empties it), so a test sees in which order the calls ran.
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

ffi::Error ConfiguredAffineImpl(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y,
                                ffi::Dictionary cfg, bool flip) {
  auto scale = cfg.get<float>("scale");
  auto tag = cfg.get<std::string_view>("tag");
  if (!scale.has_value() || !tag.has_value() || cfg.size() != 3) {
    return ffi::Error::InvalidArgument("configured_affine: cfg needs scale, tag and offset");
  }
  auto inner = cfg.get<ffi::Dictionary>("inner");
  auto offset = inner.has_value() ? inner->get<int32_t>("offset") : cfg.get<int32_t>("offset");
  if (!offset.has_value() || (inner.has_value() && inner->size() != 1)) {
    return ffi::Error::InvalidArgument("configured_affine: no offset (or cfg.inner.offset)");
  }
  const float shift = static_cast<float>(*offset) + static_cast<float>(tag->size());
  for (size_t i = 0; i < x.element_count(); ++i) {
    const float value = x.typed_data()[i] * *scale + shift;
    y->typed_data()[i] = flip ? -value : value;
  }
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(ConfiguredAffine, ConfiguredAffineImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<ffi::Dictionary>("cfg")
                                  .Attr<bool>("flip"));

ffi::Error OrderedScaleImpl(ffi::Buffer<ffi::F32> x, ffi::Token, ffi::ResultBuffer<ffi::F32> y,
                            ffi::Result<ffi::Token>, float factor) {
  for (size_t i = 0; i < x.element_count(); ++i) {
    y->typed_data()[i] = x.typed_data()[i] * factor;
  }
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(OrderedScale, OrderedScaleImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Token>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Token>()
                                  .Attr<float>("factor"));

static int64_t fence_log[64];
static int64_t fence_count = 0;

ffi::Error FenceImpl(ffi::Token, ffi::Result<ffi::Token>, int64_t id) {
  if (fence_count < 64) fence_log[fence_count++] = id;
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(Fence, FenceImpl,
                              ffi::Ffi::Bind().Arg<ffi::Token>().Ret<ffi::Token>().Attr<int64_t>(
                                  "id"));

extern "C" int64_t FenceLog(int64_t index) {
  return index < fence_count ? fence_log[index] : -1;
}

extern "C" void FenceReset(void) { fence_count = 0; }

extern "C" XLA_FFI_Error *FutureVersion(XLA_FFI_CallFrame *frame) {
  if (frame->extension_start != nullptr &&
      frame->extension_start->type == XLA_FFI_Extension_Metadata) {
    auto *extension = reinterpret_cast<XLA_FFI_Metadata_Extension *>(frame->extension_start);
    extension->metadata->api_version =
        XLA_FFI_Api_Version{XLA_FFI_Api_Version_STRUCT_SIZE, nullptr, 0, 99};
  }
  return nullptr;
}
