// count_calls: no results, only a side effect: every call adds the int32 attribute `tag`
// to a global counter, read with count_calls_value() and cleared with count_calls_reset().
#include <atomic>
#include <cstdint>

#include "kernels.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

std::atomic<int64_t> counter{0};

// The shared implementation. The operand only orders the call after its producer.
void CountCall(int32_t tag) { counter += tag; }

ffi::Error CountCallsImpl(ffi::Buffer<ffi::F32> /*x*/, int32_t tag) {
  CountCall(tag);
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(CountCalls, CountCallsImpl,
                              ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F32>>().Attr<int32_t>("tag"));

extern "C" void _mlir_ciface_count_calls(rw_memref_f32_1d* /*x*/, int32_t tag) { CountCall(tag); }

extern "C" int64_t count_calls_value(void) { return counter.load(); }

extern "C" void count_calls_reset(void) { counter.store(0); }
