// Rule 2, order: FFI attributes are passed in dictionary order, sorted by name (bytewise,
// so `Beta` < `alpha`; nested entries sorted too), whatever order the text lists them
// in. MLIR itself sorts a dictionary when it parses one (jaxlib prints this one as
// {Beta, alpha, mid = {x, y}, zeta}), and XLA hands attributes to a handler in that
// order. jax.export always prints sorted dictionaries; hand-written text need not.
//
// RUN: %rewrite %s | %verify --iree | filecheck %s --match-full-lines

module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @order(%arg0) {mhlo.backend_config = {zeta = 1 : i32, alpha = 2.000000e+00 : f32, Beta = 3 : i8, mid = {y = 4 : i16, x = 5 : i64}}} : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @order(tensor<4xf32> {bufferization.access = "read"}, i8, f32, i64, i16, i32) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     %Beta = arith.constant 3 : i8
// CHECK-NEXT:     %alpha = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:     %mid_x = arith.constant 5 : i64
// CHECK-NEXT:     %mid_y = arith.constant 4 : i16
// CHECK-NEXT:     %zeta = arith.constant 1 : i32
// CHECK-NEXT:     %0 = func.call @order(%arg0, %Beta, %alpha, %mid_x, %mid_y, %zeta) : (tensor<4xf32>, i8, f32, i64, i16, i32) -> tensor<4xf32>
// CHECK-NEXT:     return %0 : tensor<4xf32>
