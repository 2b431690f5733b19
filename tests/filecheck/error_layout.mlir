// A layout that is not a permutation of the tensor's dimensions is an error pointing at it.
//
// RUN: not %rewrite %s 2>&1 | filecheck %s

module {
  func.func @main(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = stablehlo.custom_call @lapack_kernel(%arg0) {mhlo.backend_config = {},
        operand_layouts = [dense<[0, 0]> : tensor<2xindex>],
        result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }
}

// CHECK:     error_layout.mlir:8:28: error: custom call @lapack_kernel: operand_layouts entry 0 is not a permutation of the 2 dimensions of tensor<2x3xf32>
// CHECK-NOT: error:
// CHECK-NOT: Traceback
