// Non-default layouts: the kernel sees each operand and result in its declared physical
// order. A layout is a minor-to-major list; the tensor's bytes in layout L are its
// transpose by reversed(L) in row-major order. So the extern takes and returns the
// transposed (physical) shapes, and a private wrapper transposes around it; the call site
// only calls the wrapper, so no other line changes.
//   [0, 1] on 2x3 (column-major): physical 3x2, transpose dims [1, 0] (its own inverse).
//   [1, 2, 0] on 4x2x3 (batched column-major): reversed = [0, 2, 1], physical 4x3x2; the
//   inverse of [0, 2, 1] is [0, 2, 1].
//   dense<0> (rank 1) and dense<> (rank 0) are the default layouts: nothing to transpose.
//
// RUN: %rewrite %s | %verify --iree | filecheck %s --match-full-lines

module {
  func.func @main(%arg0: tensor<2x3xf32>, %arg1: tensor<4x2x3xf32>) -> (tensor<2x3xf32>, tensor<4x2x3xf32>, tensor<i32>) {
    %0 = stablehlo.custom_call @col_major(%arg0) {mhlo.backend_config = {}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %1:2 = stablehlo.custom_call @batched(%arg1) {mhlo.backend_config = {uplo = 76 : ui8}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<> : tensor<0xindex>]} : (tensor<4x2x3xf32>) -> (tensor<4x2x3xf32>, tensor<i32>)
    return %0, %1#0, %1#1 : tensor<2x3xf32>, tensor<4x2x3xf32>, tensor<i32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @col_major(tensor<3x2xf32> {bufferization.access = "read"}) -> tensor<2x3xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func private @col_major_layout(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:     %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:     %1 = func.call @col_major(%0) : (tensor<3x2xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:     return %1 : tensor<2x3xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func private @batched(tensor<4x3x2xf32> {bufferization.access = "read"}, i8) -> (tensor<4x3x2xf32>, tensor<i32>) attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func private @batched_layout(%arg0: tensor<4x2x3xf32>, %arg1: i8) -> (tensor<4x2x3xf32>, tensor<i32>) {
// CHECK-NEXT:     %0 = stablehlo.transpose %arg0, dims = [0, 2, 1] : (tensor<4x2x3xf32>) -> tensor<4x3x2xf32>
// CHECK-NEXT:     %1:2 = func.call @batched(%0, %arg1) : (tensor<4x3x2xf32>, i8) -> (tensor<4x3x2xf32>, tensor<i32>)
// CHECK-NEXT:     %2 = stablehlo.transpose %1#0, dims = [0, 2, 1] : (tensor<4x3x2xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT:     return %2, %1#1 : tensor<4x2x3xf32>, tensor<i32>
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func @main(%arg0: tensor<2x3xf32>, %arg1: tensor<4x2x3xf32>) -> (tensor<2x3xf32>, tensor<4x2x3xf32>, tensor<i32>) {
// CHECK-NEXT:     %0 = func.call @col_major_layout(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:     %uplo = arith.constant 76 : i8
// CHECK-NEXT:     %1:2 = func.call @batched_layout(%arg1, %uplo) : (tensor<4x2x3xf32>, i8) -> (tensor<4x2x3xf32>, tensor<i32>)
// CHECK-NEXT:     return %0, %1#0, %1#1 : tensor<2x3xf32>, tensor<4x2x3xf32>, tensor<i32>
// CHECK-NEXT:   }
// CHECK-NEXT: }
