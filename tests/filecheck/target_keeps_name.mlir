// Rule 5: a target that is a valid C identifier, with no symbol of that name in the
// file, keeps its name, even when a sanitised name met earlier in the file would be the
// same: @a_b stays a_b, and @a.b (not a C identifier) is the one that moves on, to a_b_1.
// Otherwise a kernel `_mlir_ciface_a_b` written for target a_b would be called for a.b.
//
// RUN: %rewrite %s -o %t 2>&1 | filecheck %s --check-prefix=WARN
// RUN: %verify --iree < %t | filecheck %s --match-full-lines

module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @a.b(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = stablehlo.custom_call @a_b(%0) : (tensor<4xf32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @a_b_1(tensor<4xf32> {bufferization.access = "read"}) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func private @a_b(tensor<4xf32> {bufferization.access = "read"}) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     %0 = func.call @a_b_1(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:     %1 = func.call @a_b(%0) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:     return %1 : tensor<4xf32>

// WARN:     target_keeps_name.mlir:11:32: warning: {{.*}}'a.b'{{.*}}@a_b_1
// WARN-NOT: warning
