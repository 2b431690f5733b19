// Rule 7: token operands and results are errors; every offending call is reported, in
// order, not only the first.
//
// RUN: %verify < %s > /dev/null
// RUN: not %rewrite %s 2>&1 | filecheck %s

module {
  func.func @main(%arg0: tensor<4xf32>, %t: !stablehlo.token) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @k(%arg0, %t) : (tensor<4xf32>, !stablehlo.token) -> tensor<4xf32>
    %1 = stablehlo.custom_call @fence(%0) : (tensor<4xf32>) -> !stablehlo.token
    return %0 : tensor<4xf32>
  }
}

// CHECK:     error_token.mlir:9:5: error: {{.*}}token
// CHECK:     error_token.mlir:10:5: error: {{.*}}token
// CHECK-NOT: Traceback
