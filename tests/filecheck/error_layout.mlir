// Rule 7: a non-default operand or result layout (here column-major [0, 1], as jaxlib's
// LAPACK kernels declare) is an error pointing at that layout.
//
// RUN: %verify < %s > /dev/null
// RUN: not %rewrite %s 2>&1 | filecheck %s

module {
  func.func @main(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = stablehlo.custom_call @lapack_kernel(%arg0) {mhlo.backend_config = {},
        operand_layouts = [dense<[0, 1]> : tensor<2xindex>],
        result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }
}

// CHECK:     error_layout.mlir:10:28: error: {{.*}}layout
// CHECK-NOT: error:
// CHECK-NOT: Traceback
