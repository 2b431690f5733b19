// Rules 1 and 2, nested dictionaries: flattened depth first in dictionary order; each
// leaf's constant is named after its path joined with `_` (cfg.a -> %cfg_a), and a
// later clash with that name (the top-level cfg_a) gets `_1`. An empty nested
// dictionary adds nothing.
//
// RUN: %rewrite %s | %verify --iree | filecheck %s --match-full-lines

module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @nested(%arg0) {mhlo.backend_config = {cfg = {a = 1 : i32, inner = {x = 2.500000e-01 : f32}, none = {}}, cfg_a = 2 : i64, z = true}} : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @nested(tensor<4xf32> {bufferization.access = "read"}, i32, f32, i64, i1) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     %cfg_a = arith.constant 1 : i32
// CHECK-NEXT:     %cfg_inner_x = arith.constant 2.500000e-01 : f32
// CHECK-NEXT:     %cfg_a_1 = arith.constant 2 : i64
// CHECK-NEXT:     %z = arith.constant true
// CHECK-NEXT:     %0 = func.call @nested(%arg0, %cfg_a, %cfg_inner_x, %cfg_a_1, %z) : (tensor<4xf32>, i32, f32, i64, i1) -> tensor<4xf32>
// CHECK-NEXT:     return %0 : tensor<4xf32>
