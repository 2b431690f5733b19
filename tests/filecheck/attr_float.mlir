// Rule 3, floats: an f32 or f64 attribute becomes `arith.constant v : fN` with the literal
// copied as written (decimal, exponent, hexadecimal bit patterns such as NaN and -inf);
// an untyped float is f64.
//
// RUN: %rewrite %s | %verify --iree | filecheck %s --match-full-lines

module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @floats(%arg0) {mhlo.backend_config = {f32 = 1.500000e+00 : f32, f64 = -2.500000e-01 : f64, nan = 0x7FC00000 : f32, ninf = 0xFFF0000000000000 : f64, tiny = 9.99999974E-6 : f32, untyped = 2.500000e+00}} : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @floats(tensor<4xf32> {bufferization.access = "read"}, f32, f64, f32, f64, f32, f64) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     %f32 = arith.constant 1.500000e+00 : f32
// CHECK-NEXT:     %f64 = arith.constant -2.500000e-01 : f64
// CHECK-NEXT:     %nan = arith.constant 0x7FC00000 : f32
// CHECK-NEXT:     %ninf = arith.constant 0xFFF0000000000000 : f64
// CHECK-NEXT:     %tiny = arith.constant 9.99999974E-6 : f32
// CHECK-NEXT:     %untyped = arith.constant 2.500000e+00 : f64
// CHECK-NEXT:     %0 = func.call @floats(%arg0, %f32, %f64, %nan, %ninf, %tiny, %untyped) : (tensor<4xf32>, f32, f64, f32, f64, f32, f64) -> tensor<4xf32>
// CHECK-NEXT:     return %0 : tensor<4xf32>
