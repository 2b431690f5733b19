// A call inside a `stablehlo.case` branch: the constants and the call stay in the branch,
// at the call's indentation; the extern is declared once at module level.
//
// RUN: %verify < %s > /dev/null
// RUN: %rewrite %s | %verify --iree | filecheck %s --match-full-lines

module {
  func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<i32>) -> tensor<4xf32> {
    %0 = "stablehlo.case"(%arg1) ({
      %c = stablehlo.custom_call @branch(%arg0) {mhlo.backend_config = {k = 1 : i32}} : (tensor<4xf32>) -> tensor<4xf32>
      stablehlo.return %c : tensor<4xf32>
    }, {
      stablehlo.return %arg0 : tensor<4xf32>
    }) : (tensor<i32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @branch(tensor<4xf32> {bufferization.access = "read"}, i32) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<i32>) -> tensor<4xf32> {
// CHECK-NEXT:     %0 = "stablehlo.case"(%arg1) ({
// CHECK-NEXT:       %k = arith.constant 1 : i32
// CHECK-NEXT:       %c = func.call @branch(%arg0, %k) : (tensor<4xf32>, i32) -> tensor<4xf32>
// CHECK-NEXT:       stablehlo.return %c : tensor<4xf32>
// CHECK-NEXT:     }, {
