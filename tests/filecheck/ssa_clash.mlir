// Rule 1, SSA names: a constant is named after its attribute, with `_1`, `_2`, ... when
// the name is already used anywhere in the file (%eps and %eps_1 in another function,
// %arg0 as an argument), and never twice among the constants themselves.
//
// RUN: %rewrite %s | %verify --iree | filecheck %s --match-full-lines

module {
  func.func @helper(%eps: tensor<4xf32>) -> tensor<4xf32> {
    %eps_1 = stablehlo.add %eps, %eps : tensor<4xf32>
    return %eps_1 : tensor<4xf32>
  }
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @k(%arg0) {mhlo.backend_config = {arg0 = 1 : i32, eps = 1.000000e-05 : f32}} : (tensor<4xf32>) -> tensor<4xf32>
    %1 = stablehlo.custom_call @k(%0) {mhlo.backend_config = {arg0 = 2 : i32, eps = 2.000000e-05 : f32}} : (tensor<4xf32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @k(tensor<4xf32> {bufferization.access = "read"}, i32, f32) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func @helper(%eps: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     %eps_1 = stablehlo.add %eps, %eps : tensor<4xf32>
// CHECK-NEXT:     return %eps_1 : tensor<4xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     %arg0_1 = arith.constant 1 : i32
// CHECK-NEXT:     %eps_2 = arith.constant 1.000000e-05 : f32
// CHECK-NEXT:     %0 = func.call @k(%arg0, %arg0_1, %eps_2) : (tensor<4xf32>, i32, f32) -> tensor<4xf32>
// CHECK-NEXT:     %arg0_2 = arith.constant 2 : i32
// CHECK-NEXT:     %eps_3 = arith.constant 2.000000e-05 : f32
// CHECK-NEXT:     %1 = func.call @k(%0, %arg0_2, %eps_3) : (tensor<4xf32>, i32, f32) -> tensor<4xf32>
// CHECK-NEXT:     return %1 : tensor<4xf32>
