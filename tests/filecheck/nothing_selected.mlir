// Rule 6: a module without custom calls is copied byte for byte, even where the words
// stablehlo.custom_call appear in a string attribute and in this comment, and lines
// keep their odd spacing.
//
// RUN: %verify < %s > /dev/null
// RUN: %rewrite %s | diff %s -

module @jit_f attributes {jax.note = "stablehlo.custom_call @k(%arg0) : (tensor<4xf32>) -> tensor<4xf32>"} {
  func.func public @main(%arg0: tensor<4xf32>)   ->   tensor<4xf32> {
    // stablehlo.custom_call @k(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %0 = stablehlo.negate %arg0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
