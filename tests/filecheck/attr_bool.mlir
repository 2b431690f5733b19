// Rule 3, booleans: `true` and `false` become `arith.constant true` / `false`, of type i1.
//
// RUN: %rewrite %s | %verify --iree | filecheck %s --match-full-lines

module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @flags(%arg0) {mhlo.backend_config = {enabled = true, verbose = false}} : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @flags(tensor<4xf32> {bufferization.access = "read"}, i1, i1) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     %enabled = arith.constant true
// CHECK-NEXT:     %verbose = arith.constant false
// CHECK-NEXT:     %0 = func.call @flags(%arg0, %enabled, %verbose) : (tensor<4xf32>, i1, i1) -> tensor<4xf32>
// CHECK-NEXT:     return %0 : tensor<4xf32>
