// Operands or bound results that the call's type does not list: MLIR rejects such an op
// (jaxlib too: the first RUN line), and the rewrite reports each call as an error in
// MLIR's format, instead of stopping with a traceback or writing a func.call whose
// arguments and types disagree. Results left unbound are no error (MLIR allows that).
//
// RUN: not %verify < %s > /dev/null 2>&1
// RUN: not %rewrite %s 2>&1 | filecheck %s --strict-whitespace
// RUN: not %rewrite %s 2> /dev/null | filecheck %s --allow-empty --check-prefix=NOOUT

module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @k() {mhlo.backend_config = {eps = 1.0 : f32}} : (tensor<4xf32>) -> tensor<4xf32>
    %1 = stablehlo.custom_call @k(%arg0, %0) : (tensor<4xf32>) -> tensor<4xf32>
    %2:2 = stablehlo.custom_call @k(%1) : (tensor<4xf32>) -> tensor<4xf32>
    stablehlo.custom_call @k(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    return %2#0 : tensor<4xf32>
  }
}

// CHECK:{{^}}{{.*}}error_arity.mlir:12:5: error: custom call @k has 0 operands but its type lists 1 operand type{{$}}
// CHECK-NEXT:{{^}}    %0 = stablehlo.custom_call @k() {mhlo.backend_config = {eps = 1.0 : f32}} : (tensor<4xf32>) -> tensor<4xf32>{{$}}
// CHECK-NEXT:{{^}}    ^{{$}}
// CHECK:{{^}}{{.*}}error_arity.mlir:13:5: error: custom call @k has 2 operands but its type lists 1 operand type{{$}}
// CHECK:{{^}}{{.*}}error_arity.mlir:14:5: error: custom call @k binds 2 results but its type lists 1 result type{{$}}
// CHECK-NOT: error_arity.mlir:15
// CHECK-NOT: Traceback

// NOOUT-NOT: {{.}}
