// Rule 6 next to rule 1: in one function, the shape_assertion (compiler meaning) is left
// exactly as written while the user kernel next to it is rewritten. IREE implements
// shape_assertion itself, so the result still goes through its input pipeline.
//
// RUN: %rewrite %s | %verify --iree | filecheck %s --match-full-lines

module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %c = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.custom_call @shape_assertion(%c) {api_version = 2 : i32, error_message = "dimension mismatch", has_side_effect = true} : (tensor<i1>) -> ()
    %0 = stablehlo.custom_call @kernel(%arg0) {mhlo.backend_config = {n = 1 : i32}} : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @kernel(tensor<4xf32> {bufferization.access = "read"}, i32) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     %c = stablehlo.constant dense<true> : tensor<i1>
// CHECK-NEXT:     stablehlo.custom_call @shape_assertion(%c) {api_version = 2 : i32, error_message = "dimension mismatch", has_side_effect = true} : (tensor<i1>) -> ()
// CHECK-NEXT:     %n = arith.constant 1 : i32
// CHECK-NEXT:     %0 = func.call @kernel(%arg0, %n) : (tensor<4xf32>, i32) -> tensor<4xf32>
// CHECK-NEXT:     return %0 : tensor<4xf32>
