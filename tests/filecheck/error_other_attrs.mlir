// Rule 3: symbol references, types and dialect attributes have no constant form either.
// Each is an error at its value, in its own call, and all three are reported.
//
// RUN: %verify < %s > /dev/null
// RUN: not %rewrite %s 2>&1 | filecheck %s

module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @k(%arg0) {mhlo.backend_config = {fn = @main}} : (tensor<4xf32>) -> tensor<4xf32>
    %1 = stablehlo.custom_call @k(%0) {mhlo.backend_config = {ty = f32}} : (tensor<4xf32>) -> tensor<4xf32>
    %2 = stablehlo.custom_call @k(%1) {mhlo.backend_config = {dir = #stablehlo<comparison_direction LT>}} : (tensor<4xf32>) -> tensor<4xf32>
    return %2 : tensor<4xf32>
  }
}

// CHECK:     error_other_attrs.mlir:9:71: error: {{.*}}'fn'
// CHECK:     error_other_attrs.mlir:10:68: error: {{.*}}'ty'
// CHECK:     error_other_attrs.mlir:11:69: error: {{.*}}'dir'
// CHECK-NOT: Traceback
