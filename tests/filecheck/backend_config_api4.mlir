// Rule 2: StableHLO's canonical typed-FFI form, api_version = 4 with a backend_config
// dictionary, in the pretty form. Its entries are the FFI attributes; api_version itself
// is not one.
//
// RUN: %rewrite %s | %verify --iree | filecheck %s --match-full-lines

module {
  func.func @main(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = stablehlo.custom_call @softmax(%arg0) {api_version = 4 : i32, backend_config = {alpha = 2.000000e+00 : f32, axis = 1 : i64}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @softmax(tensor<2x3xf32> {bufferization.access = "read"}, f32, i64) -> tensor<2x3xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func @main(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:     %alpha = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:     %axis = arith.constant 1 : i64
// CHECK-NEXT:     %0 = func.call @softmax(%arg0, %alpha, %axis) : (tensor<2x3xf32>, f32, i64) -> tensor<2x3xf32>
// CHECK-NEXT:     return %0 : tensor<2x3xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }
