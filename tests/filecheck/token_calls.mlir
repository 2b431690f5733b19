// Token operands and results (rule 7 allows them; mpi4jax's calls thread one, as jax
// writes ordered effects): the extern takes and gives no token. The call's results are
// bound again by a stablehlo.optimization_barrier: the extern's results, and for each
// token result the call's token operand (after_all of several, create_token of none).
// The description keeps the tokens where the handler gets them ("token[]"). The tokens
// left in main are the paths' to erase (rewriter/compile/tokens.py): IREE's input
// pipeline alone has no lowering for after_all, so the output is verified without it.
//
// RUN: %verify < %s > /dev/null
// RUN: %rewrite %s | %verify | filecheck %s --match-full-lines

module {
  func.func @main(%arg0: tensor<4xf32>, %t: !stablehlo.token, %u: !stablehlo.token) -> (tensor<4xf32>, !stablehlo.token) {
    %0:2 = stablehlo.custom_call @k(%arg0, %t) {has_side_effect = true, mhlo.backend_config = {n = 4 : i64}} : (tensor<4xf32>, !stablehlo.token) -> (tensor<4xf32>, !stablehlo.token)
    %1 = stablehlo.custom_call @fence(%0#1, %u) {has_side_effect = true, mhlo.backend_config = {}} : (!stablehlo.token, !stablehlo.token) -> !stablehlo.token
    %2 = stablehlo.custom_call @make(%0#0) {mhlo.backend_config = {}} : (tensor<4xf32>) -> !stablehlo.token
    stablehlo.custom_call @sink(%0#0, %2) {has_side_effect = true, mhlo.backend_config = {}} : (tensor<4xf32>, !stablehlo.token) -> ()
    return %0#0, %1 : tensor<4xf32>, !stablehlo.token
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @k(tensor<4xf32> {bufferization.access = "read"}, i64) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {attributes = {n = "s64"}, operands = ["f32[4]{0}", "token[]"], results = ["f32[4]{0}", "token[]"], target = "k"}}
// CHECK-NEXT:   func.func private @fence() attributes {llvm.emit_c_interface, rewriter.xla_ffi = {attributes = {}, operands = ["token[]", "token[]"], results = ["token[]"], target = "fence"}}
// CHECK-NEXT:   func.func private @make(tensor<4xf32> {bufferization.access = "read"}) attributes {llvm.emit_c_interface, rewriter.xla_ffi = {attributes = {}, operands = ["f32[4]{0}"], results = ["token[]"], target = "make"}}
// CHECK-NEXT:   func.func private @sink(tensor<4xf32> {bufferization.access = "read"}) attributes {llvm.emit_c_interface, rewriter.xla_ffi = {attributes = {}, operands = ["f32[4]{0}", "token[]"], results = [], target = "sink"}}
// CHECK-NEXT:   func.func @main(%arg0: tensor<4xf32>, %t: !stablehlo.token, %u: !stablehlo.token) -> (tensor<4xf32>, !stablehlo.token) {
// CHECK-NEXT:     %n = arith.constant 4 : i64
// CHECK-NEXT:     %ffi_results = func.call @k(%arg0, %n) : (tensor<4xf32>, i64) -> tensor<4xf32>
// CHECK-NEXT:     %0:2 = stablehlo.optimization_barrier %ffi_results, %t : tensor<4xf32>, !stablehlo.token
// CHECK-NEXT:     %token = stablehlo.after_all %0#1, %u : !stablehlo.token
// CHECK-NEXT:     func.call @fence() : () -> ()
// CHECK-NEXT:     %1 = stablehlo.optimization_barrier %token : !stablehlo.token
// CHECK-NEXT:     %token_1 = stablehlo.create_token : !stablehlo.token
// CHECK-NEXT:     func.call @make(%0#0) : (tensor<4xf32>) -> ()
// CHECK-NEXT:     %2 = stablehlo.optimization_barrier %token_1 : !stablehlo.token
// CHECK-NEXT:     func.call @sink(%0#0) : (tensor<4xf32>) -> ()
// CHECK-NEXT:     return %0#0, %1 : tensor<4xf32>, !stablehlo.token
// CHECK-NEXT:   }
// CHECK-NEXT: }
