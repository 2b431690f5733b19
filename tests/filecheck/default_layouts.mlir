// Rule 7, the allowed side: default (row-major, minor-to-major descending) layouts are
// fine at every rank: dense<> for rank 0, dense<0> for rank 1, [1, 0], [2, 1, 0]. They
// are not FFI attributes and add no operand.
//
// RUN: %rewrite %s | %verify --iree | filecheck %s --match-full-lines

module {
  func.func @main(%arg0: tensor<f32>, %arg1: tensor<4xf32>, %arg2: tensor<2x3xf32>) -> tensor<2x3x4xf32> {
    %0 = stablehlo.custom_call @layouts(%arg0, %arg1, %arg2) {mhlo.backend_config = {}, operand_layouts = [dense<> : tensor<0xindex>, dense<0> : tensor<1xindex>, dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[2, 1, 0]> : tensor<3xindex>]} : (tensor<f32>, tensor<4xf32>, tensor<2x3xf32>) -> tensor<2x3x4xf32>
    return %0 : tensor<2x3x4xf32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @layouts(tensor<f32> {bufferization.access = "read"}, tensor<4xf32> {bufferization.access = "read"}, tensor<2x3xf32> {bufferization.access = "read"}) -> tensor<2x3x4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func @main(%arg0: tensor<f32>, %arg1: tensor<4xf32>, %arg2: tensor<2x3xf32>) -> tensor<2x3x4xf32> {
// CHECK-NEXT:     %0 = func.call @layouts(%arg0, %arg1, %arg2) : (tensor<f32>, tensor<4xf32>, tensor<2x3xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:     return %0 : tensor<2x3x4xf32>
