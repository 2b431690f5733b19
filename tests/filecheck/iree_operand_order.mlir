// --abi iree orders the import's parameters so that iree.runtime's Python module interface
// (3.13) reads them right: tensors first, then 8-byte scalars (i64, f64), then the rest
// (i32, f32 and i1/i8/i16, which the VM widens to 4 bytes); stable within each group.
// The constants are made in dictionary order as with the C ABI; only the call's operand
// list and the extern's parameters are reordered.
//
// Contract order (operands, then attributes sorted by name), derived by hand:
//   0 %arg0 tensor<4xf32>      1 %arg1 tensor<4xf32>     2 a_i32 i32       3 b_i64 i64
//   4 c_f32 f32                5 d_dense tensor<2xi32>   6 e_f64 f64       7 f_bool i1
//   8 g_u8 i8 (ui8)            9 h_str tensor<2xi8> ("hi")
// Import order: tensors 0 1 5 9, 8-byte 3 6, the rest 2 4 7 8.
//
// RUN: %rewrite --abi iree %s | %verify --iree-compile | filecheck %s --match-full-lines
// The C ABI keeps the contract order.
// RUN: %rewrite %s | filecheck %s --match-full-lines --check-prefix=C

module {
  func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @mixed(%arg0, %arg1) {mhlo.backend_config = {a_i32 = 1 : i32, b_i64 = 2 : i64, c_f32 = 1.500000e+00 : f32, d_dense = dense<[1, 2]> : tensor<2xi32>, e_f64 = 2.500000e+00 : f64, f_bool = true, g_u8 = 200 : ui8, h_str = "hi"}} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @ffi.mixed(tensor<4xf32> {bufferization.access = "read"}, tensor<4xf32> {bufferization.access = "read"}, tensor<2xi32> {bufferization.access = "read"}, tensor<2xi8> {bufferization.access = "read"}, i64, f64, i32, f32, i1, i8) -> tensor<4xf32> attributes {rewriter.attribute_types = ["i32", "i64", "f32", "tensor<2xi32>", "f64", "i1", "ui8", "string"], rewriter.order = array<i64: 0, 1, 5, 9, 3, 6, 2, 4, 7, 8>, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     %a_i32 = arith.constant 1 : i32
// CHECK-NEXT:     %b_i64 = arith.constant 2 : i64
// CHECK-NEXT:     %c_f32 = arith.constant 1.500000e+00 : f32
// CHECK-NEXT:     %d_dense = arith.constant dense<[1, 2]> : tensor<2xi32>
// CHECK-NEXT:     %e_f64 = arith.constant 2.500000e+00 : f64
// CHECK-NEXT:     %f_bool = arith.constant true
// CHECK-NEXT:     %g_u8 = arith.constant 200 : i8
// CHECK-NEXT:     %h_str = arith.constant dense<"0x6869"> : tensor<2xi8>
// CHECK-NEXT:     %0 = func.call @ffi.mixed(%arg0, %arg1, %d_dense, %h_str, %b_i64, %e_f64, %a_i32, %c_f32, %f_bool, %g_u8) : (tensor<4xf32>, tensor<4xf32>, tensor<2xi32>, tensor<2xi8>, i64, f64, i32, f32, i1, i8) -> tensor<4xf32>
// CHECK-NEXT:     return %0 : tensor<4xf32>

// C:      func.func private @mixed(tensor<4xf32> {bufferization.access = "read"}, tensor<4xf32> {bufferization.access = "read"}, i32, i64, f32, tensor<2xi32> {bufferization.access = "read"}, f64, i1, i8, tensor<2xi8> {bufferization.access = "read"}) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// C:      %0 = func.call @mixed(%arg0, %arg1, %a_i32, %b_i64, %c_f32, %d_dense, %e_f64, %f_bool, %g_u8, %h_str) : (tensor<4xf32>, tensor<4xf32>, i32, i64, f32, tensor<2xi32>, f64, i1, i8, tensor<2xi8>) -> tensor<4xf32>
