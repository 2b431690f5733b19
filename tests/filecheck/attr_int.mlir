// Rule 3, integers: `v : iN`, `v : siN` and `v : uiN` all become `arith.constant v : iN`
// (arith.constant takes signless integers only; the bits are the same); an untyped
// integer is i64. Values are copied as written: negative, hexadecimal, ui64's maximum.
//
// RUN: %rewrite %s | %verify --iree | filecheck %s --match-full-lines

module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @ints(%arg0) {mhlo.backend_config = {hex = 0xFF, i1 = 1 : i1, i32 = 2147483647 : i32, i8 = -128 : i8, si32 = -5 : si32, ui64 = 18446744073709551615 : ui64, ui8 = 76 : ui8, untyped = -7}} : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @ints(tensor<4xf32> {bufferization.access = "read"}, i64, i1, i32, i8, i32, i64, i8, i64) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     %hex = arith.constant 0xFF : i64
// CHECK-NEXT:     %i1 = arith.constant 1 : i1
// CHECK-NEXT:     %i32 = arith.constant 2147483647 : i32
// CHECK-NEXT:     %i8 = arith.constant -128 : i8
// CHECK-NEXT:     %si32 = arith.constant -5 : i32
// CHECK-NEXT:     %ui64 = arith.constant 18446744073709551615 : i64
// CHECK-NEXT:     %ui8 = arith.constant 76 : i8
// CHECK-NEXT:     %untyped = arith.constant -7 : i64
// CHECK-NEXT:     %0 = func.call @ints(%arg0, %hex, %i1, %i32, %i8, %si32, %ui64, %ui8, %untyped) : (tensor<4xf32>, i64, i1, i32, i8, i32, i64, i8, i64) -> tensor<4xf32>
// CHECK-NEXT:     return %0 : tensor<4xf32>
