// Calls inside the bodies of `stablehlo.reduce`, `stablehlo.sort` (its comparator) and
// `stablehlo.scatter` (its update computation) are rewritten in place like any other, and
// the module verifies. IREE's input pipeline cannot lower such a module: it turns these
// bodies into scalar code and has no way to pass a scalar to a call that takes tensor<f32>
// ("failed to legalize unresolved materialization from ('f32') to ('tensor<f32>')"), so
// there is no --iree here. jax itself never puts an FFI call in these bodies.
//
// RUN: %verify < %s > /dev/null
// RUN: %rewrite %s | %verify | filecheck %s --match-full-lines

module {
  func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<2x1xi32>, %arg2: tensor<2xf32>) -> (tensor<f32>, tensor<4xf32>, tensor<4xf32>) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
     reducer(%a: tensor<f32>, %b: tensor<f32>)  {
      %s = stablehlo.custom_call @combine(%a, %b) {mhlo.backend_config = {}} : (tensor<f32>, tensor<f32>) -> tensor<f32>
      stablehlo.return %s : tensor<f32>
    }
    %1 = "stablehlo.sort"(%arg0) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %lt = stablehlo.custom_call @less(%x, %y) {mhlo.backend_config = {}} : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    }) : (tensor<4xf32>) -> tensor<4xf32>
    %2 = "stablehlo.scatter"(%arg0, %arg1, %arg2) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
    ^bb0(%old: tensor<f32>, %new: tensor<f32>):
      %m = stablehlo.custom_call @combine(%old, %new) {mhlo.backend_config = {}} : (tensor<f32>, tensor<f32>) -> tensor<f32>
      stablehlo.return %m : tensor<f32>
    }) : (tensor<4xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<4xf32>
    return %0, %1, %2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @combine(tensor<f32> {bufferization.access = "read"}, tensor<f32> {bufferization.access = "read"}) -> tensor<f32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func private @less(tensor<f32> {bufferization.access = "read"}, tensor<f32> {bufferization.access = "read"}) -> tensor<i1> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK:        %s = func.call @combine(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK-NEXT:       stablehlo.return %s : tensor<f32>
// CHECK:        %lt = func.call @less(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<i1>
// CHECK-NEXT:       stablehlo.return %lt : tensor<i1>
// CHECK:        %m = func.call @combine(%old, %new) : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK-NEXT:       stablehlo.return %m : tensor<f32>
