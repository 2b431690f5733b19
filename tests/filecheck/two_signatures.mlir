// Rules 4 and 5: one extern per distinct (target, signature). The first signature keeps
// the target's name, each further one gets the next `_N` (with a warning); calls with a
// signature seen before reuse its extern, whatever their attribute values. An
// attribute's type is part of the signature (f32 vs f64 below).
//
// RUN: %rewrite %s -o %t 2>&1 | filecheck %s --check-prefix=WARN
// RUN: %verify --iree < %t | filecheck %s --match-full-lines

module {
  func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<8xf32>) -> (tensor<4xf32>, tensor<8xf32>) {
    %0 = stablehlo.custom_call @scale(%arg0) {mhlo.backend_config = {factor = 2.000000e+00 : f32}} : (tensor<4xf32>) -> tensor<4xf32>
    %1 = stablehlo.custom_call @scale(%arg1) {mhlo.backend_config = {factor = 3.000000e+00 : f32}} : (tensor<8xf32>) -> tensor<8xf32>
    %2 = stablehlo.custom_call @scale(%0) {mhlo.backend_config = {factor = 4.000000e+00 : f32}} : (tensor<4xf32>) -> tensor<4xf32>
    %3 = stablehlo.custom_call @scale(%2) {mhlo.backend_config = {factor = 5.000000e+00 : f64}} : (tensor<4xf32>) -> tensor<4xf32>
    return %3, %1 : tensor<4xf32>, tensor<8xf32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @scale(tensor<4xf32> {bufferization.access = "read"}, f32) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func private @scale_1(tensor<8xf32> {bufferization.access = "read"}, f32) -> tensor<8xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func private @scale_2(tensor<4xf32> {bufferization.access = "read"}, f64) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<8xf32>) -> (tensor<4xf32>, tensor<8xf32>) {
// CHECK-NEXT:     %factor = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:     %0 = func.call @scale(%arg0, %factor) : (tensor<4xf32>, f32) -> tensor<4xf32>
// CHECK-NEXT:     %factor_1 = arith.constant 3.000000e+00 : f32
// CHECK-NEXT:     %1 = func.call @scale_1(%arg1, %factor_1) : (tensor<8xf32>, f32) -> tensor<8xf32>
// CHECK-NEXT:     %factor_2 = arith.constant 4.000000e+00 : f32
// CHECK-NEXT:     %2 = func.call @scale(%0, %factor_2) : (tensor<4xf32>, f32) -> tensor<4xf32>
// CHECK-NEXT:     %factor_3 = arith.constant 5.000000e+00 : f64
// CHECK-NEXT:     %3 = func.call @scale_2(%2, %factor_3) : (tensor<4xf32>, f64) -> tensor<4xf32>
// CHECK-NEXT:     return %3, %1 : tensor<4xf32>, tensor<8xf32>

// WARN:     two_signatures.mlir:12:32: warning: {{.*}}'scale'{{.*}}@scale_1
// WARN:     two_signatures.mlir:14:32: warning: {{.*}}'scale'{{.*}}@scale_2
// WARN-NOT: warning
