module {
  func.func @main(%arg0: tensor<2xf32>) -> tuple<tensor<2xf32>> {
    %0 = stablehlo.custom_call @pack(%arg0) {mhlo.backend_config = {}} : (tensor<2xf32>) -> tuple<tensor<2xf32>>
    return %0 : tuple<tensor<2xf32>>
  }
}
