// attr_kernel: one attribute of every kind of the contract, each decoded into a float64
// slot of the result, in dictionary (sorted-name) order, so each one visibly matters:
//
//   0 bf16     1 boolean  2 f16   3 f32   4 f64   5 sum(farr)  6 i16  7 i32  8 i64  9 i8
//   10 sum(iarr)  11 byte length of text  12 sum of text's bytes (unsigned)
//   13 u16    14 u32     15 u64  16 u8   17 x[0] + x[1]
//
// XLA (jaxlib 0.10.2) refuses f16/bf16 scalar attributes at run time, so the handler also
// accepts them as uint16 bit patterns; the compiled entry gets them as bits anyway.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

#include "kernels.h"
#include "views.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

constexpr int64_t kSlots = 18;

struct Attributes {
  uint16_t bf16;
  bool boolean;
  uint16_t f16;
  float f32;
  double f64;
  kernels::View1D<float> farr;
  int16_t i16;
  int32_t i32;
  int64_t i64;
  int8_t i8;
  kernels::View1D<int64_t> iarr;
  kernels::View1D<uint8_t> text;
  uint16_t u16;
  uint32_t u32;
  uint64_t u64;
  uint8_t u8;
};

double HalfToDouble(uint16_t h) {
  int exponent = (h >> 10) & 0x1f;
  int mantissa = h & 0x3ff;
  double magnitude = exponent == 0    ? std::ldexp(mantissa, -24)
                     : exponent == 31 ? (mantissa != 0 ? NAN : INFINITY)
                                      : std::ldexp(mantissa + 1024, exponent - 25);
  return (h & 0x8000) ? -magnitude : magnitude;
}

double BFloat16ToDouble(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// The shared implementation.
void DecodeAttributes(const Attributes& a, kernels::View1D<float> x, double* out) {
  double farr = 0.0;
  for (int64_t i = 0; i < a.farr.size; ++i) farr += a.farr[i];
  int64_t iarr = 0;
  for (int64_t i = 0; i < a.iarr.size; ++i) iarr += a.iarr[i];
  int64_t text_sum = 0;
  for (int64_t i = 0; i < a.text.size; ++i) text_sum += a.text[i];
  const double slots[kSlots] = {
      BFloat16ToDouble(a.bf16),
      a.boolean ? 1.0 : 0.0,
      HalfToDouble(a.f16),
      a.f32,
      a.f64,
      farr,
      static_cast<double>(a.i16),
      static_cast<double>(a.i32),
      static_cast<double>(a.i64),
      static_cast<double>(a.i8),
      static_cast<double>(iarr),
      static_cast<double>(a.text.size),
      static_cast<double>(text_sum),
      static_cast<double>(a.u16),
      static_cast<double>(a.u32),
      static_cast<double>(a.u64),
      static_cast<double>(a.u8),
      static_cast<double>(x[0]) + static_cast<double>(x[1]),
  };
  std::memcpy(out, slots, sizeof slots);
}

// A 16-bit float attribute as its bits: a scalar of dtype `kType`, or of U16 (the bits).
template <XLA_FFI_DataType kType>
struct Bits16 {
  uint16_t bits;
};

}  // namespace

namespace xla::ffi {
template <XLA_FFI_DataType kType>
struct AttrDecoding<Bits16<kType>> {
  using Type = Bits16<kType>;
  static std::optional<Type> Decode(XLA_FFI_AttrType type, void* attr,
                                    DiagnosticEngine& diagnostic) {
    auto* scalar = reinterpret_cast<XLA_FFI_Scalar*>(attr);
    if (type != XLA_FFI_AttrType_SCALAR ||
        (scalar->dtype != kType && scalar->dtype != XLA_FFI_DataType_U16)) {
      return diagnostic.Emit("Wrong attribute: expected a 16-bit float or its uint16 bits");
    }
    Type value;
    std::memcpy(&value.bits, scalar->value, sizeof value.bits);
    return value;
  }
};
}  // namespace xla::ffi

namespace {

// Rank-1 buffers (named, as the handler macro cannot take a comma in a type).
using Vector = ffi::Buffer<ffi::F32, 1>;
using Slots = ffi::Buffer<ffi::F64, 1>;

ffi::Error AttrKernelImpl(Vector x, ffi::Result<Slots> out,
                          Bits16<XLA_FFI_DataType_BF16> bf16, bool boolean,
                          Bits16<XLA_FFI_DataType_F16> f16, float f32, double f64,
                          ffi::Span<const float> farr, int16_t i16, int32_t i32, int64_t i64,
                          int8_t i8, ffi::Span<const int64_t> iarr, std::string_view text,
                          uint16_t u16, uint32_t u32, uint64_t u64, uint8_t u8) {
  if (x.element_count() != 2 || out->element_count() != kSlots) {
    return ffi::Error::InvalidArgument("AttrKernel takes float32[2] and gives float64[18]");
  }
  kernels::View1D<uint8_t> bytes{reinterpret_cast<const uint8_t*>(text.data()),
                                 static_cast<int64_t>(text.size()), 1};
  Attributes a{bf16.bits, boolean, f16.bits, f32, f64, kernels::span_of(farr), i16, i32, i64,
               i8, kernels::span_of(iarr), bytes, u16, u32, u64, u8};
  DecodeAttributes(a, {x.typed_data(), 2, 1}, out->typed_data());
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(AttrKernel, AttrKernelImpl,
                              ffi::Ffi::Bind()
                                  .Arg<Vector>()
                                  .Ret<Slots>()
                                  .Attr<Bits16<XLA_FFI_DataType_BF16>>("bf16")
                                  .Attr<bool>("boolean")
                                  .Attr<Bits16<XLA_FFI_DataType_F16>>("f16")
                                  .Attr<float>("f32")
                                  .Attr<double>("f64")
                                  .Attr<ffi::Span<const float>>("farr")
                                  .Attr<int16_t>("i16")
                                  .Attr<int32_t>("i32")
                                  .Attr<int64_t>("i64")
                                  .Attr<int8_t>("i8")
                                  .Attr<ffi::Span<const int64_t>>("iarr")
                                  .Attr<std::string_view>("text")
                                  .Attr<uint16_t>("u16")
                                  .Attr<uint32_t>("u32")
                                  .Attr<uint64_t>("u64")
                                  .Attr<uint8_t>("u8"));

extern "C" void _mlir_ciface_attr_kernel(rw_memref_f64_1d* result, rw_memref_f32_1d* x,
                                         uint16_t bf16, bool boolean, uint16_t f16, float f32,
                                         double f64, rw_memref_f32_1d* farr, int16_t i16,
                                         int32_t i32, int64_t i64, int8_t i8,
                                         rw_memref_i64_1d* iarr, rw_memref_i8_1d* text,
                                         uint16_t u16, uint32_t u32, uint64_t u64, uint8_t u8) {
  if (x->sizes[0] != 2) std::abort();
  const int64_t sizes[1] = {kSlots};
  kernels::check_alloc(rw_memref_f64_1d_alloc(result, sizes));
  Attributes a{bf16, boolean, f16, f32, f64, kernels::view1d<float>(farr), i16, i32, i64, i8,
               kernels::view1d<int64_t>(iarr), kernels::view1d<uint8_t>(text), u16, u32, u64,
               u8};
  DecodeAttributes(a, kernels::view1d<float>(x), result->aligned);
}
