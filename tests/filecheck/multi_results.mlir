// Several results: the result group `%0:2` is kept as written, so its uses (`%0#1`)
// stay valid; the extern returns the same tuple of types.
//
// RUN: %rewrite %s | %verify --iree | filecheck %s --match-full-lines

module {
  func.func @main(%arg0: tensor<4xf32>) -> (tensor<2xf32>, tensor<i32>) {
    %0:2 = stablehlo.custom_call @split(%arg0) {mhlo.backend_config = {axis = 0 : i64}} : (tensor<4xf32>) -> (tensor<2xf32>, tensor<i32>)
    %1 = stablehlo.negate %0#0 : tensor<2xf32>
    return %1, %0#1 : tensor<2xf32>, tensor<i32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @split(tensor<4xf32> {bufferization.access = "read"}, i64) -> (tensor<2xf32>, tensor<i32>) attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func @main(%arg0: tensor<4xf32>) -> (tensor<2xf32>, tensor<i32>) {
// CHECK-NEXT:     %axis = arith.constant 0 : i64
// CHECK-NEXT:     %0:2 = func.call @split(%arg0, %axis) : (tensor<4xf32>, i64) -> (tensor<2xf32>, tensor<i32>)
// CHECK-NEXT:     %1 = stablehlo.negate %0#0 : tensor<2xf32>
// CHECK-NEXT:     return %1, %0#1 : tensor<2xf32>, tensor<i32>
