// Rule 5: a quoted target that is no C identifier is sanitised: characters outside
// [A-Za-z0-9_] become `_` ("my kernel/v2" -> my_kernel_v2) and a leading digit gets a
// `_` prefix ("2d_conv" -> _2d_conv). Each rename is a warning on stderr, at the target.
//
// RUN: %rewrite %s -o %t 2>&1 | filecheck %s --check-prefix=WARN
// RUN: %verify --iree < %t | filecheck %s --match-full-lines

module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @"my kernel/v2"(%arg0) {mhlo.backend_config = {n = 1 : i32}} : (tensor<4xf32>) -> tensor<4xf32>
    %1 = stablehlo.custom_call @"2d_conv"(%0) : (tensor<4xf32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @my_kernel_v2(tensor<4xf32> {bufferization.access = "read"}, i32) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func private @_2d_conv(tensor<4xf32> {bufferization.access = "read"}) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     %n = arith.constant 1 : i32
// CHECK-NEXT:     %0 = func.call @my_kernel_v2(%arg0, %n) : (tensor<4xf32>, i32) -> tensor<4xf32>
// CHECK-NEXT:     %1 = func.call @_2d_conv(%0) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:     return %1 : tensor<4xf32>

// WARN:      quoted_target.mlir:10:32: warning: {{.*}}'my kernel/v2'{{.*}}@my_kernel_v2
// WARN-NEXT: %0 = stablehlo.custom_call @"my kernel/v2"(%arg0)
// WARN-NEXT: {{^ {31}\^$}}
// WARN:      quoted_target.mlir:11:32: warning: {{.*}}'2d_conv'{{.*}}@_2d_conv
// WARN-NOT:  warning
