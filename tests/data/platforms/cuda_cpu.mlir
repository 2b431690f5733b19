module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<i32> {jax.global_constant = "_platform_index"} loc(unknown), %arg1: tensor<4xf32> loc("x")) -> (tensor<4xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<1> : tensor<i32> loc(#loc)
    %c_0 = stablehlo.constant dense<0> : tensor<i32> loc(#loc)
    %0 = "stablehlo.case"(%arg0) ({
      stablehlo.return %c_0 : tensor<i32> loc(#loc)
    }, {
      stablehlo.return %c : tensor<i32> loc(#loc)
    }) : (tensor<i32>) -> tensor<i32> loc(#loc)
    %1 = "stablehlo.case"(%0) ({
      %3 = stablehlo.custom_call @gpu_kernel(%arg1) {mhlo.backend_config = {eps = 1.000000e-05 : f32}} : (tensor<4xf32>) -> tensor<4xf32> loc(#loc1)
      stablehlo.return %3 : tensor<4xf32> loc(#loc)
    }, {
      %3 = stablehlo.custom_call @cpu_kernel(%arg1) {mhlo.backend_config = {eps = 1.000000e-05 : f32}} : (tensor<4xf32>) -> tensor<4xf32> loc(#loc2)
      stablehlo.return %3 : tensor<4xf32> loc(#loc)
    }) : (tensor<i32>) -> tensor<4xf32> loc(#loc)
    %2 = call @inner(%arg0, %1) : (tensor<i32>, tensor<4xf32>) -> tensor<4xf32> loc(#loc)
    return %2 : tensor<4xf32> loc(#loc)
  } loc(#loc)
  func.func private @inner(%arg0: tensor<i32> {jax.global_constant = "_platform_index"} loc(unknown), %arg1: tensor<4xf32> loc(unknown)) -> tensor<4xf32> {
    %c = stablehlo.constant dense<1> : tensor<i32> loc(#loc)
    %c_0 = stablehlo.constant dense<0> : tensor<i32> loc(#loc)
    %0 = "stablehlo.case"(%arg0) ({
      stablehlo.return %c_0 : tensor<i32> loc(#loc)
    }, {
      stablehlo.return %c : tensor<i32> loc(#loc)
    }) : (tensor<i32>) -> tensor<i32> loc(#loc)
    %1 = "stablehlo.case"(%0) ({
      %2 = stablehlo.custom_call @gpu_kernel(%arg1) {mhlo.backend_config = {eps = 1.000000e-05 : f32}} : (tensor<4xf32>) -> tensor<4xf32> loc(#loc1)
      stablehlo.return %2 : tensor<4xf32> loc(#loc)
    }, {
      %2 = stablehlo.custom_call @cpu_kernel(%arg1) {mhlo.backend_config = {eps = 1.000000e-05 : f32}} : (tensor<4xf32>) -> tensor<4xf32> loc(#loc2)
      stablehlo.return %2 : tensor<4xf32> loc(#loc)
    }) : (tensor<i32>) -> tensor<4xf32> loc(#loc)
    return %1 : tensor<4xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc1 = loc("gpu")
#loc2 = loc("cpu")
