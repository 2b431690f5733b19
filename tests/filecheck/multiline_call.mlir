// Rule 1 on a custom call written over several lines: the whole statement, up to and
// including its loc, is replaced; the lines around it are untouched.
//
// RUN: %rewrite %s | %verify --iree | filecheck %s --match-full-lines

module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @k(%arg0) {
        mhlo.backend_config = {n = 1 : i32},
        operand_layouts = [dense<0> : tensor<1xindex>],
        result_layouts = [dense<0> : tensor<1xindex>]}
        : (tensor<4xf32>) -> tensor<4xf32> loc("multi")
    %1 = stablehlo.negate %0 : tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @k(tensor<4xf32> {bufferization.access = "read"}, i32) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     %n = arith.constant 1 : i32 loc("multi")
// CHECK-NEXT:     %0 = func.call @k(%arg0, %n) : (tensor<4xf32>, i32) -> tensor<4xf32> loc("multi")
// CHECK-NEXT:     %1 = stablehlo.negate %0 : tensor<4xf32>
// CHECK-NEXT:     return %1 : tensor<4xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }
