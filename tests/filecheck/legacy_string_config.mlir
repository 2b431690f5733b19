// Rule 2, legacy calls: a backend_config that is a non-empty string is passed as its
// bytes, one extra tensor<Nxi8> operand after the call's operands (named after the
// attribute, backend_config, with `_1` on the second use); an empty string adds nothing.
//   "opaque\00cfg" = 6F 70 61 71 75 65 00 63 66 67 (10 bytes);  "k=1" = 6B 3D 31.
//
// RUN: %rewrite %s | %verify --iree | filecheck %s --match-full-lines

module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @legacy(%arg0) {backend_config = "opaque\00cfg"} : (tensor<4xf32>) -> tensor<4xf32>
    %1 = stablehlo.custom_call @legacy_empty(%0) {backend_config = ""} : (tensor<4xf32>) -> tensor<4xf32>
    %2 = stablehlo.custom_call @legacy_v2(%1) {api_version = 2 : i32, backend_config = "k=1"} : (tensor<4xf32>) -> tensor<4xf32>
    return %2 : tensor<4xf32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @legacy(tensor<4xf32> {bufferization.access = "read"}, tensor<10xi8> {bufferization.access = "read"}) -> tensor<4xf32> attributes {llvm.emit_c_interface}
// CHECK-NEXT:   func.func private @legacy_empty(tensor<4xf32> {bufferization.access = "read"}) -> tensor<4xf32> attributes {llvm.emit_c_interface}
// CHECK-NEXT:   func.func private @legacy_v2(tensor<4xf32> {bufferization.access = "read"}, tensor<3xi8> {bufferization.access = "read"}) -> tensor<4xf32> attributes {llvm.emit_c_interface}
// CHECK-NEXT:   func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     %backend_config = arith.constant dense<"0x6F706171756500636667"> : tensor<10xi8>
// CHECK-NEXT:     %0 = func.call @legacy(%arg0, %backend_config) : (tensor<4xf32>, tensor<10xi8>) -> tensor<4xf32>
// CHECK-NEXT:     %1 = func.call @legacy_empty(%0) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:     %backend_config_1 = arith.constant dense<"0x6B3D31"> : tensor<3xi8>
// CHECK-NEXT:     %2 = func.call @legacy_v2(%1, %backend_config_1) : (tensor<4xf32>, tensor<3xi8>) -> tensor<4xf32>
// CHECK-NEXT:     return %2 : tensor<4xf32>
