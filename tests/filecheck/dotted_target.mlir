// Rule 5: MLIR symbols may hold `.` and `$`, C identifiers may not: @my.kernel becomes
// @my_kernel and @ns$op.v2 becomes @ns_op_v2, each with a warning on stderr.
//
// RUN: %rewrite %s -o %t 2>&1 | filecheck %s --check-prefix=WARN
// RUN: %verify --iree < %t | filecheck %s --match-full-lines

module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @my.kernel(%arg0) {mhlo.backend_config = {n = 1 : i32}} : (tensor<4xf32>) -> tensor<4xf32>
    %1 = stablehlo.custom_call @ns$op.v2(%0) : (tensor<4xf32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @my_kernel(tensor<4xf32> {bufferization.access = "read"}, i32) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func private @ns_op_v2(tensor<4xf32> {bufferization.access = "read"}) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     %n = arith.constant 1 : i32
// CHECK-NEXT:     %0 = func.call @my_kernel(%arg0, %n) : (tensor<4xf32>, i32) -> tensor<4xf32>
// CHECK-NEXT:     %1 = func.call @ns_op_v2(%0) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:     return %1 : tensor<4xf32>

// WARN:     dotted_target.mlir:9:32: warning: {{.*}}'my.kernel'{{.*}}@my_kernel
// WARN:     dotted_target.mlir:10:32: warning: {{.*}}'ns$op.v2'{{.*}}@ns_op_v2
// WARN-NOT: warning
