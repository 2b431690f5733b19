// Rule 3, strings: a string attribute becomes `arith.constant dense<"0xHEX"> :
// tensor<Nxi8>` of its bytes, with MLIR's escapes decoded (\22 \00 \0A \\ \n \t) and
// raw UTF-8 kept as its bytes; the empty string becomes `dense<> : tensor<0xi8>`.
//   "\n\t" = 0A 09;  "a\22\00\0A\\" = 61 22 00 0A 5C;  "abc" = 61 62 63;
//   "é" = C3 A9;  "h\C3\A9llo" = 68 C3 A9 6C 6C 6F;  "x" = 78.
//
// RUN: %rewrite %s | %verify --iree | filecheck %s --match-full-lines

module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @strings(%arg0) {mhlo.backend_config = {ctrl = "\n\t", empty = "", escaped = "a\22\00\0A\\", one = "x", plain = "abc", raw = "é", utf8 = "h\C3\A9llo"}} : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @strings(tensor<4xf32> {bufferization.access = "read"}, tensor<2xi8> {bufferization.access = "read"}, tensor<0xi8> {bufferization.access = "read"}, tensor<5xi8> {bufferization.access = "read"}, tensor<1xi8> {bufferization.access = "read"}, tensor<3xi8> {bufferization.access = "read"}, tensor<2xi8> {bufferization.access = "read"}, tensor<6xi8> {bufferization.access = "read"}) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     %ctrl = arith.constant dense<"0x0A09"> : tensor<2xi8>
// CHECK-NEXT:     %empty = arith.constant dense<> : tensor<0xi8>
// CHECK-NEXT:     %escaped = arith.constant dense<"0x6122000A5C"> : tensor<5xi8>
// CHECK-NEXT:     %one = arith.constant dense<"0x78"> : tensor<1xi8>
// CHECK-NEXT:     %plain = arith.constant dense<"0x616263"> : tensor<3xi8>
// CHECK-NEXT:     %raw = arith.constant dense<"0xC3A9"> : tensor<2xi8>
// CHECK-NEXT:     %utf8 = arith.constant dense<"0x68C3A96C6C6F"> : tensor<6xi8>
// CHECK-NEXT:     %0 = func.call @strings(%arg0, %ctrl, %empty, %escaped, %one, %plain, %raw, %utf8) : (tensor<4xf32>, tensor<2xi8>, tensor<0xi8>, tensor<5xi8>, tensor<1xi8>, tensor<3xi8>, tensor<2xi8>, tensor<6xi8>) -> tensor<4xf32>
// CHECK-NEXT:     return %0 : tensor<4xf32>
