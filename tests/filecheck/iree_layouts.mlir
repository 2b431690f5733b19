// --abi iree with a non-default layout: the private wrapper keeps the contract order in its
// own signature (the call site is the C ABI's) and reorders when it calls the import.
//   operand 0: tensor<2x3xf32> in layout [0, 1]: the import takes tensor<3x2xf32>
//   attributes (sorted): flag = 1 : i32 (contract index 1), scale = 2.0 : f64 (index 2)
//   import order: tensor 0, 8-byte 2, then 1  ->  rewriter.order = [0, 2, 1]
// A call without attributes records an empty attribute list and the identity.
//
// RUN: %rewrite --abi iree %s | %verify --iree-compile | filecheck %s --match-full-lines

module {
  func.func @main(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
    %0 = stablehlo.custom_call @col_major(%arg0) {mhlo.backend_config = {flag = 1 : i32, scale = 2.000000e+00 : f64}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %1 = stablehlo.custom_call @plain(%arg0) {mhlo.backend_config = {}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @ffi.col_major(tensor<3x2xf32> {bufferization.access = "read"}, f64, i32) -> tensor<2x3xf32> attributes {rewriter.attribute_types = ["i32", "f64"], rewriter.order = array<i64: 0, 2, 1>, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func private @col_major_layout(%arg0: tensor<2x3xf32>, %arg1: i32, %arg2: f64) -> tensor<2x3xf32> {
// CHECK-NEXT:     %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:     %1 = func.call @ffi.col_major(%0, %arg2, %arg1) : (tensor<3x2xf32>, f64, i32) -> tensor<2x3xf32>
// CHECK-NEXT:     return %1 : tensor<2x3xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func private @ffi.plain(tensor<2x3xf32> {bufferization.access = "read"}) -> tensor<2x3xf32> attributes {rewriter.attribute_types = [], rewriter.order = array<i64: 0>, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func @main(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
// CHECK-NEXT:     %flag = arith.constant 1 : i32
// CHECK-NEXT:     %scale = arith.constant 2.000000e+00 : f64
// CHECK-NEXT:     %0 = func.call @col_major_layout(%arg0, %flag, %scale) : (tensor<2x3xf32>, i32, f64) -> tensor<2x3xf32>
// CHECK-NEXT:     %1 = func.call @ffi.plain(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:     return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
