// Rule 3: a list attribute has no constant form: an error at the attribute's value,
// naming the attribute.
//
// RUN: %verify < %s > /dev/null
// RUN: not %rewrite %s 2>&1 | filecheck %s

module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @k(%arg0) {mhlo.backend_config = {a = 1 : i32, dims = [1, 2]}} : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// CHECK:     error_list_attr.mlir:9:86: error: {{.*}}'dims'{{.*}}list
// CHECK-NOT: Traceback
