// Rule 4 without a `module` op: top-level functions live in MLIR's implicit module, so
// the extern goes before the first top-level op (after the location alias, which is no
// op), at the top level's indentation: none.
//
// RUN: %rewrite %s | %verify --iree | filecheck %s --match-full-lines
// RUN: %rewrite %s | filecheck %s --match-full-lines --strict-whitespace --check-prefix=INDENT

#loc1 = loc("x")
func.func @main(%arg0: tensor<4xf32> loc(#loc1)) -> tensor<4xf32> {
  %0 = stablehlo.custom_call @k(%arg0) {mhlo.backend_config = {n = 1 : i32}} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = call @second(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
func.func private @second(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.custom_call @k(%arg0) {mhlo.backend_config = {n = 2 : i32}} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// CHECK:      #loc1 = loc("x")
// CHECK-NEXT: func.func private @k(tensor<4xf32> {bufferization.access = "read"}, i32) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT: func.func @main(%arg0: tensor<4xf32> loc(#loc1)) -> tensor<4xf32> {
// CHECK-NEXT:   %n = arith.constant 1 : i32
// CHECK-NEXT:   %0 = func.call @k(%arg0, %n) : (tensor<4xf32>, i32) -> tensor<4xf32>
// CHECK-NEXT:   %1 = call @second(%0) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:   return %1 : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.func private @second(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:   %n_1 = arith.constant 2 : i32
// CHECK-NEXT:   %0 = func.call @k(%arg0, %n_1) : (tensor<4xf32>, i32) -> tensor<4xf32>
// CHECK-NEXT:   return %0 : tensor<4xf32>
// CHECK-NEXT: }

// INDENT:{{^}}func.func private @k({{.*}}
// INDENT-NEXT:{{^}}func.func @main({{.*}}
// INDENT-NEXT:{{^}}  %n = arith.constant {{.*}}
// INDENT-NEXT:{{^}}  %0 = func.call {{.*}}
