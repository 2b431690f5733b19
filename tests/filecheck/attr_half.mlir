// Rule 3, half floats: f16 and bf16 are written as `arith.constant v` in their own type
// and passed as their bits, `arith.bitcast ... to i16` (C has no half type, and LLVM
// passes `half` in SSE registers; see abi/README.md). The bitcast result's name is not
// part of the contract, so it is captured.
//
// RUN: %rewrite %s | %verify --iree | filecheck %s --match-full-lines

module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @halves(%arg0) {mhlo.backend_config = {bf16 = -1.500000e+00 : bf16, bf16_nan = 0x7FC0 : bf16, f16 = 6.550400e+04 : f16}} : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @halves(tensor<4xf32> {bufferization.access = "read"}, i16, i16, i16) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     %bf16 = arith.constant -1.500000e+00 : bf16
// CHECK-NEXT:     [[B1:%[A-Za-z0-9_]+]] = arith.bitcast %bf16 : bf16 to i16
// CHECK-NEXT:     %bf16_nan = arith.constant 0x7FC0 : bf16
// CHECK-NEXT:     [[B2:%[A-Za-z0-9_]+]] = arith.bitcast %bf16_nan : bf16 to i16
// CHECK-NEXT:     %f16 = arith.constant 6.550400e+04 : f16
// CHECK-NEXT:     [[B3:%[A-Za-z0-9_]+]] = arith.bitcast %f16 : f16 to i16
// CHECK-NEXT:     %0 = func.call @halves(%arg0, [[B1]], [[B2]], [[B3]]) : (tensor<4xf32>, i16, i16, i16) -> tensor<4xf32>
// CHECK-NEXT:     return %0 : tensor<4xf32>
