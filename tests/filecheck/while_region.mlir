// A call inside a region (the body of a stablehlo.while): its constants are written in
// the region, right before the call and indented like it; the extern goes to the
// module, not into the region.
//
// RUN: %rewrite %s | %verify --iree | filecheck %s --match-full-lines
// RUN: %rewrite %s | filecheck %s --match-full-lines --strict-whitespace --check-prefix=INDENT

module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %c = stablehlo.constant dense<0> : tensor<i64>
    %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %c) : tensor<4xf32>, tensor<i64>
     cond {
      %c_1 = stablehlo.constant dense<3> : tensor<i64>
      %1 = stablehlo.compare  LT, %iterArg_0, %c_1,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    } do {
      %1 = stablehlo.custom_call @step(%iterArg) {mhlo.backend_config = {scale = 2.000000e+00 : f32}} : (tensor<4xf32>) -> tensor<4xf32>
      %c_1 = stablehlo.constant dense<1> : tensor<i64>
      %2 = stablehlo.add %iterArg_0, %c_1 : tensor<i64>
      stablehlo.return %1, %2 : tensor<4xf32>, tensor<i64>
    }
    return %0#0 : tensor<4xf32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @step(tensor<4xf32> {bufferization.access = "read"}, f32) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     %c = stablehlo.constant dense<0> : tensor<i64>
// CHECK-NEXT:     %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %c) : tensor<4xf32>, tensor<i64>
// CHECK-NEXT:      cond {
// CHECK-NEXT:       %c_1 = stablehlo.constant dense<3> : tensor<i64>
// CHECK-NEXT:       %1 = stablehlo.compare  LT, %iterArg_0, %c_1,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
// CHECK-NEXT:       stablehlo.return %1 : tensor<i1>
// CHECK-NEXT:     } do {
// CHECK-NEXT:       %scale = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:       %1 = func.call @step(%iterArg, %scale) : (tensor<4xf32>, f32) -> tensor<4xf32>
// CHECK-NEXT:       %c_1 = stablehlo.constant dense<1> : tensor<i64>
// CHECK-NEXT:       %2 = stablehlo.add %iterArg_0, %c_1 : tensor<i64>
// CHECK-NEXT:       stablehlo.return %1, %2 : tensor<4xf32>, tensor<i64>
// CHECK-NEXT:     }
// CHECK-NEXT:     return %0#0 : tensor<4xf32>

// INDENT:{{^}}  func.func private @step({{.*}}
// INDENT:{{^}}    } do {
// INDENT-NEXT:{{^}}      %scale = arith.constant {{.*}}
// INDENT-NEXT:{{^}}      %1 = func.call @step({{.*}}
