// Rule 3: numbers pass only as iN/siN/uiN integers and f16/bf16/f32/f64 floats; an
// `index` integer or an f8 float is an error at its value.
//
// RUN: %verify < %s > /dev/null
// RUN: not %rewrite %s 2>&1 | filecheck %s

module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @k(%arg0) {mhlo.backend_config = {idx = 5 : index}} : (tensor<4xf32>) -> tensor<4xf32>
    %1 = stablehlo.custom_call @k(%0) {mhlo.backend_config = {f8 = 1.000000e+00 : f8E4M3FN}} : (tensor<4xf32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}

// CHECK:     error_number_types.mlir:9:72: error: {{.*}}'idx'{{.*}}index
// CHECK:     error_number_types.mlir:10:68: error: {{.*}}'f8'{{.*}}f8E4M3FN
// CHECK-NOT: Traceback
