// Constructs the grammar must parse; every line here is accepted by jaxlib's MLIR too.
!vec = tensor<4xf32>
#map = affine_map<(d0, d1) -> (d1, d0)>
#loc_file = loc("model.py":5:11 to :39)
#loc_range = loc("model.py":8:4 to 15:18)
#loc_named = loc("layer/ffi_call"(#loc_file))
#loc_call = loc(callsite(#loc_named at #loc_range))
#loc_fused = loc(fused<"tag">[#loc_file, "other.py":1:2])
module @"kitchen sink" attributes {mhlo.num_partitions = 1 : i32, mhlo.note = "a\22b\00c\0A"} {
  func.func private @"helper.v2"(%arg0: !vec loc(unknown)) -> !vec {
    return %arg0 : !vec loc(#loc_fused)
  } loc(#loc_file)
  func.func public @main(%arg0: tensor<4xf32> {jax.arg_info = "x"} loc("x"), %arg1: tensor<0xindex>) -> (tensor<4xf32> {jax.result_info = "result"}, tensor<i32>) {
    %c = stablehlo.constant dense<0> : tensor<i32> loc(#loc_call)
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %w = stablehlo.constant dense_resource<weights> : tensor<2xf32>
    %0:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %arg0) : tensor<i32>, tensor<4xf32>
     cond {
      %c_1 = stablehlo.constant dense<3> : tensor<i32>
      %2 = stablehlo.compare  LT, %iterArg, %c_1,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %2 : tensor<i1>
    } do {
      %c_2 = stablehlo.constant dense<1> : tensor<i32>
      %2 = stablehlo.add %iterArg, %c_2 : tensor<i32>
      %3 = stablehlo.custom_call @"my kernel/v2"(%iterArg_0) {mhlo.backend_config = {cfg = {a = 1 : i32, b = array<i64: 1, 2>}, name = "k\22"}} : (tensor<4xf32>) -> tensor<4xf32>
      stablehlo.return %2, %3 : tensor<i32>, tensor<4xf32>
    } loc(#loc_named)
    %1 = stablehlo.reduce(%0#1 init: %cst) applies stablehlo.maximum across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    %s:2 = "stablehlo.sort"(%0#1, %0#1) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %x: tensor<f32>, %y: tensor<f32>):
      %lt = stablehlo.compare  LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    }) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    %4 = "stablehlo.custom_call"(%s#0) <{api_version = 4 : i32, backend_config = {scale = 0x7FC00000 : f32}, call_target_name = "my.kernel"}> : (tensor<4xf32>) -> tensor<4xf32> loc(#loc_call)
    %5 = func.call @"helper.v2"(%4) : (tensor<4xf32>) -> tensor<4xf32>
    return %5, %0#0 : tensor<4xf32>, tensor<i32> // trailing comment
  }
}

{-#
  dialect_resources: {
    builtin: {
      weights: "0x040000000000803F00000040"
    }
  }
#-}
