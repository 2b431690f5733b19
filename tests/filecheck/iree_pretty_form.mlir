// The seed case with --abi iree: the extern is @ffi.rms_norm, an import of the IREE runtime
// module `ffi` (IREE needs the module prefix), without llvm.emit_c_interface. The
// declaration records the contract: the attribute's own type (f32) and, per parameter, its
// index in contract order (tensor then f32: already in import order, 0 and 1). The call
// site and constants are those of the C ABI. iree-compile turns the result into a .vmfb.
//
// RUN: %rewrite --abi iree %s | %verify --iree-compile | filecheck %s --match-full-lines
// RUN: %rewrite --abi iree %s 2>&1 >/dev/null | filecheck %s --allow-empty --check-prefix=QUIET

#loc1 = loc("x")
module @jit_rms_norm attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10x10xf32> loc("x")) -> (tensor<10x10xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @rms_norm(%arg0) {mhlo.backend_config = {eps = 9.99999974E-6 : f32}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<10x10xf32>) -> tensor<10x10xf32> loc(#loc2)
    return %0 : tensor<10x10xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(rms_norm)/ffi_call"(#loc1))

// CHECK:      #loc1 = loc("x")
// CHECK-NEXT: module @jit_rms_norm attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
// CHECK-NEXT:   func.func private @ffi.rms_norm(tensor<10x10xf32> {bufferization.access = "read"}, f32) -> tensor<10x10xf32> attributes {rewriter.attribute_types = ["f32"], rewriter.order = array<i64: 0, 1>, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func public @main(%arg0: tensor<10x10xf32> loc("x")) -> (tensor<10x10xf32> {jax.result_info = "result"}) {
// CHECK-NEXT:     %eps = arith.constant 9.99999974E-6 : f32 loc(#loc2)
// CHECK-NEXT:     %0 = func.call @ffi.rms_norm(%arg0, %eps) : (tensor<10x10xf32>, f32) -> tensor<10x10xf32> loc(#loc2)
// CHECK-NEXT:     return %0 : tensor<10x10xf32> loc(#loc)
// CHECK-NEXT:   } loc(#loc)
// CHECK-NEXT: } loc(#loc)
// CHECK-NOT:  llvm.emit_c_interface

// QUIET-NOT: {{.}}
