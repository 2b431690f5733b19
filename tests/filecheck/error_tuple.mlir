// Rule 7: a selected call with a tuple type is an error in MLIR's format,
// `file:line:col: error: message`, then the source line and a caret under the call;
// the exit status is nonzero and nothing is written to stdout. Read from stdin, the
// file is called <stdin>. Left out with --skip, the same call is no error.
//
// RUN: %verify < %s > /dev/null
// RUN: not %rewrite %s 2>&1 | filecheck %s --strict-whitespace
// RUN: not %rewrite < %s 2>&1 | filecheck %s --check-prefix=STDIN
// RUN: not %rewrite %s 2> /dev/null | filecheck %s --allow-empty --check-prefix=NOOUT
// RUN: %rewrite --skip k %s | diff %s -

module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @k(%arg0) : (tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<i32>>
    %1 = stablehlo.get_tuple_element %0[0] : (tuple<tensor<4xf32>, tensor<i32>>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}

// CHECK:{{^}}{{.*}}error_tuple.mlir:14:5: error: {{.*}}tuple{{.*}}
// CHECK-NEXT:{{^}}    %0 = stablehlo.custom_call @k(%arg0) : (tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<i32>>{{$}}
// CHECK-NEXT:{{^}}    ^{{$}}
// CHECK-NOT: Traceback

// STDIN: <stdin>:14:5: error: {{.*}}tuple

// NOOUT-NOT: {{.}}
