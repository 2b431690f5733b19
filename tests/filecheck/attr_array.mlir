// Rule 3, dense arrays: `array<T: a, b>` becomes `arith.constant dense<[a, b]> :
// tensor<2xT>`; an empty `array<T>` becomes `dense<> : tensor<0xT>`.
//
// RUN: %rewrite %s | %verify --iree | filecheck %s --match-full-lines

module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @arrays(%arg0) {mhlo.backend_config = {bools = array<i1: true, false>, empty = array<f32>, f64 = array<f64: 1.5, -2.0>, i32 = array<i32: -3>, i64 = array<i64: 1, 2>}} : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @arrays(tensor<4xf32> {bufferization.access = "read"}, tensor<2xi1> {bufferization.access = "read"}, tensor<0xf32> {bufferization.access = "read"}, tensor<2xf64> {bufferization.access = "read"}, tensor<1xi32> {bufferization.access = "read"}, tensor<2xi64> {bufferization.access = "read"}) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     %bools = arith.constant dense<[true, false]> : tensor<2xi1>
// CHECK-NEXT:     %empty = arith.constant dense<> : tensor<0xf32>
// CHECK-NEXT:     %f64 = arith.constant dense<[1.5, -2.0]> : tensor<2xf64>
// CHECK-NEXT:     %i32 = arith.constant dense<[-3]> : tensor<1xi32>
// CHECK-NEXT:     %i64 = arith.constant dense<[1, 2]> : tensor<2xi64>
// CHECK-NEXT:     %0 = func.call @arrays(%arg0, %bools, %empty, %f64, %i32, %i64) : (tensor<4xf32>, tensor<2xi1>, tensor<0xf32>, tensor<2xf64>, tensor<1xi32>, tensor<2xi64>) -> tensor<4xf32>
// CHECK-NEXT:     return %0 : tensor<4xf32>
