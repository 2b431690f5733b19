// The rewriter.xla_ffi description on each extern (rewriter/ffi_facts.py), derived by hand:
// - target: the custom call's own name, "my.kernel", although the extern is @my_kernel;
// - operands/results: XLA shapes of the *logical* tensors: ui8 -> u8, dims 2x3, and the
//   declared minor-to-major layout {0,1} (the extern itself takes the transposed 3x2);
// - attributes: the backend_config's tree, sorted by name bytewise at every level
//   (nested < "odd key" < s < v; a < b), each with its FFI kind: dense<...> : tensor<2xi64>
//   -> array "s64[2]", true -> "pred", 1 : i32 -> "s32", a string -> "string",
//   array<i32: 1, 2, 3> -> array "s32[3]";
// - shape_operands: operand 1 of @dyn only gives the result's shape (XLA drops it).
//
// RUN: %rewrite %s 2>/dev/null | %verify --iree | filecheck %s --match-full-lines

module {
  func.func @main(%arg0: tensor<2x3xui8>, %arg1: tensor<?x4xf32>, %arg2: tensor<2xi32>) -> (tensor<2x3xui8>, tensor<?x4xf32>) {
    %0 = stablehlo.custom_call @"my.kernel"(%arg0) {mhlo.backend_config = {"odd key" = 1 : i32, nested = {b = true, a = dense<[1, 2]> : tensor<2xi64>}, s = "x", v = array<i32: 1, 2, 3>}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]} : (tensor<2x3xui8>) -> tensor<2x3xui8>
    %1 = stablehlo.custom_call @dyn(%arg1, %arg2) {indices_of_shape_operands = dense<1> : tensor<1xi64>, mhlo.backend_config = {}} : (tensor<?x4xf32>, tensor<2xi32>) -> tensor<?x4xf32>
    return %0, %1 : tensor<2x3xui8>, tensor<?x4xf32>
  }
}

// CHECK:   func.func private @my_kernel(tensor<3x2xui8> {bufferization.access = "read"}, tensor<2xi64> {bufferization.access = "read"}, i1, i32, tensor<1xi8> {bufferization.access = "read"}, tensor<3xi32> {bufferization.access = "read"}) -> tensor<3x2xui8> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {attributes = {nested = {a = "s64[2]", b = "pred"}, "odd key" = "s32", s = "string", v = "s32[3]"}, operands = ["u8[2,3]{0,1}"], results = ["u8[2,3]{0,1}"], target = "my.kernel"}}
// CHECK:   func.func private @dyn(tensor<?x4xf32> {bufferization.access = "read"}, tensor<2xi32> {bufferization.access = "read"}) -> tensor<?x4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {attributes = {}, operands = ["f32[?,4]{1,0}", "s32[2]{0}"], results = ["f32[?,4]{1,0}"], shape_operands = [1], target = "dyn"}}
