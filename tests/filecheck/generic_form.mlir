// Generic-form custom calls (what MLIR tools print with --mlir-print-op-generic): the
// target comes from call_target_name in the <{...}> properties; the FFI attributes are
// the api_version 4 backend_config dictionary, or an mhlo.backend_config dictionary in
// the attribute dictionary after the properties. Zero and several results work as in
// the pretty form.
//
// RUN: %rewrite %s | %verify --iree | filecheck %s --match-full-lines

module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<i32> {
    %0 = "stablehlo.custom_call"(%arg0) <{api_version = 4 : i32, backend_config = {eps = 1.000000e-05 : f32, n = 3 : i32}, call_target_name = "t"}> : (tensor<4xf32>) -> tensor<4xf32> loc("generic")
    %1 = "stablehlo.custom_call"(%0) <{call_target_name = "u"}> {mhlo.backend_config = {k = 7 : i64}} : (tensor<4xf32>) -> tensor<4xf32>
    "stablehlo.custom_call"(%1) <{api_version = 4 : i32, backend_config = {}, call_target_name = "sink", has_side_effect = true}> : (tensor<4xf32>) -> ()
    %2:2 = "stablehlo.custom_call"(%1, %0) <{api_version = 4 : i32, backend_config = {}, call_target_name = "pair"}> : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<i32>)
    return %2#1 : tensor<i32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @t(tensor<4xf32> {bufferization.access = "read"}, f32, i32) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func private @u(tensor<4xf32> {bufferization.access = "read"}, i64) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func private @sink(tensor<4xf32> {bufferization.access = "read"}){{( -> \(\))?}} attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func private @pair(tensor<4xf32> {bufferization.access = "read"}, tensor<4xf32> {bufferization.access = "read"}) -> (tensor<4xf32>, tensor<i32>) attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func @main(%arg0: tensor<4xf32>) -> tensor<i32> {
// CHECK-NEXT:     %eps = arith.constant 1.000000e-05 : f32 loc("generic")
// CHECK-NEXT:     %n = arith.constant 3 : i32 loc("generic")
// CHECK-NEXT:     %0 = func.call @t(%arg0, %eps, %n) : (tensor<4xf32>, f32, i32) -> tensor<4xf32> loc("generic")
// CHECK-NEXT:     %k = arith.constant 7 : i64
// CHECK-NEXT:     %1 = func.call @u(%0, %k) : (tensor<4xf32>, i64) -> tensor<4xf32>
// CHECK-NEXT:     func.call @sink(%1) : (tensor<4xf32>) -> ()
// CHECK-NEXT:     %2:2 = func.call @pair(%1, %0) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<i32>)
// CHECK-NEXT:     return %2#1 : tensor<i32>
// CHECK-NEXT:   }
// CHECK-NEXT: }
