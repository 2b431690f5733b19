// Rule 3, dense elements: `dense<...> : tensor<...>` becomes a tensor constant with the
// same dense literal and the element type made signless (ui8 -> i8, si16 -> i16); 0-d,
// splat, empty, nested and hex literals are copied as written. Tensor constants are
// tensor parameters of the extern, so they get the read marker too.
//
// RUN: %rewrite %s | %verify --iree | filecheck %s --match-full-lines

module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @dense(%arg0) {mhlo.backend_config = {bools = dense<[true, false]> : tensor<2xi1>, bytes = dense<[1, 255]> : tensor<2xui8>, empty = dense<> : tensor<0xi32>, hexbytes = dense<"0x01FF"> : tensor<2xui8>, matrix = dense<[[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>, scalar = dense<4.000000e+00> : tensor<f32>, splat = dense<-7> : tensor<3xsi16>}} : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @dense(tensor<4xf32> {bufferization.access = "read"}, tensor<2xi1> {bufferization.access = "read"}, tensor<2xi8> {bufferization.access = "read"}, tensor<0xi32> {bufferization.access = "read"}, tensor<2xi8> {bufferization.access = "read"}, tensor<2x2xf32> {bufferization.access = "read"}, tensor<f32> {bufferization.access = "read"}, tensor<3xi16> {bufferization.access = "read"}) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     %bools = arith.constant dense<[true, false]> : tensor<2xi1>
// CHECK-NEXT:     %bytes = arith.constant dense<[1, 255]> : tensor<2xi8>
// CHECK-NEXT:     %empty = arith.constant dense<> : tensor<0xi32>
// CHECK-NEXT:     %hexbytes = arith.constant dense<"0x01FF"> : tensor<2xi8>
// CHECK-NEXT:     %matrix = arith.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT:     %scalar = arith.constant dense<4.000000e+00> : tensor<f32>
// CHECK-NEXT:     %splat = arith.constant dense<-7> : tensor<3xi16>
// CHECK-NEXT:     %0 = func.call @dense(%arg0, %bools, %bytes, %empty, %hexbytes, %matrix, %scalar, %splat) : (tensor<4xf32>, tensor<2xi1>, tensor<2xi8>, tensor<0xi32>, tensor<2xi8>, tensor<2x2xf32>, tensor<f32>, tensor<3xi16>) -> tensor<4xf32>
// CHECK-NEXT:     return %0 : tensor<4xf32>
