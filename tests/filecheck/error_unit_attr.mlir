// Rule 3: a unit attribute (a name without a value) is an error at that name.
//
// RUN: %verify < %s > /dev/null
// RUN: not %rewrite %s 2>&1 | filecheck %s

module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @k(%arg0) {mhlo.backend_config = {flag}} : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// CHECK:     error_unit_attr.mlir:8:66: error: {{.*}}'flag'{{.*}}unit
// CHECK-NOT: Traceback
