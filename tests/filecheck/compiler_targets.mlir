// Rule 6: targets that carry compiler meaning (NOTES section 2) are not user kernels and
// stay as they are, even with an FFI-looking dictionary backend_config and even when
// --target asks for everything; so does a call with called_computations. Nothing
// selected: the output is the input, byte for byte, and stderr is quiet.
//
// RUN: %verify < %s > /dev/null
// RUN: %rewrite %s | diff %s -
// RUN: %rewrite --target '*' %s | diff %s -
// RUN: %rewrite %s 2>&1 > /dev/null | filecheck %s --allow-empty --check-prefix=QUIET

module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @Sharding(%arg0) {backend_config = "", mhlo.sharding = "{replicated}"} : (tensor<4xf32>) -> tensor<4xf32>
    %1 = stablehlo.custom_call @annotate_device_placement(%0) {has_side_effect = true, mhlo.backend_config = {}, mhlo.frontend_attributes = {_xla_buffer_placement = "device"}} : (tensor<4xf32>) -> tensor<4xf32>
    %c = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.custom_call @shape_assertion(%c) {api_version = 2 : i32, error_message = "dimension mismatch", has_side_effect = true} : (tensor<i1>) -> ()
    %2 = stablehlo.custom_call @dce_sink(%1) {mhlo.backend_config = {level = 1 : i32}} : (tensor<4xf32>) -> tensor<4xf32>
    %3 = stablehlo.custom_call @kernel(%2) {called_computations = [@helper], mhlo.backend_config = {n = 1 : i32}} : (tensor<4xf32>) -> tensor<4xf32>
    return %3 : tensor<4xf32>
  }
  func.func private @helper(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    return %arg0 : tensor<4xf32>
  }
}

// QUIET-NOT: {{.}}
