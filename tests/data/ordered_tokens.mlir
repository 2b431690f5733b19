// A program with an ordered effect as jax.export writes it (mpi4jax's, without MPI): main
// takes and returns a token, threaded through calls whose handlers take and give one
// (samples/ffi_bridge/checks.cc: Fence, OrderedScale). tests/test_ffi_bridge.py runs it.
module @jit_ordered {
  func.func public @main(%arg0: !stablehlo.token {jax.token = true}, %arg1: tensor<4xf32>) -> (!stablehlo.token {jax.token = true}, tensor<4xf32> {jax.result_info = "result"}) {
    %0:2 = call @_wrapped_jax_export_main(%arg0, %arg1) : (!stablehlo.token, tensor<4xf32>) -> (!stablehlo.token, tensor<4xf32>)
    return %0#0, %0#1 : !stablehlo.token, tensor<4xf32>
  }
  func.func private @_wrapped_jax_export_main(%arg0: !stablehlo.token, %arg1: tensor<4xf32>) -> (!stablehlo.token, tensor<4xf32>) {
    %0 = stablehlo.custom_call @fence(%arg0) {has_side_effect = true, mhlo.backend_config = {id = 1 : i64}} : (!stablehlo.token) -> !stablehlo.token
    %1:2 = stablehlo.custom_call @ordered_scale(%arg1, %0) {has_side_effect = true, mhlo.backend_config = {factor = 3.0 : f32}} : (tensor<4xf32>, !stablehlo.token) -> (tensor<4xf32>, !stablehlo.token)
    %2 = stablehlo.custom_call @fence(%1#1) {has_side_effect = true, mhlo.backend_config = {id = 2 : i64}} : (!stablehlo.token) -> !stablehlo.token
    %3:2 = stablehlo.custom_call @ordered_scale(%1#0, %2) {has_side_effect = true, mhlo.backend_config = {factor = 0.5 : f32}} : (tensor<4xf32>, !stablehlo.token) -> (tensor<4xf32>, !stablehlo.token)
    %4 = stablehlo.custom_call @fence(%3#1) {has_side_effect = true, mhlo.backend_config = {id = 3 : i64}} : (!stablehlo.token) -> !stablehlo.token
    return %4, %3#0 : !stablehlo.token, tensor<4xf32>
  }
}
