// Zero results (`-> ()`): the func.call binds no result and the extern returns nothing
// (`-> ()` may be spelled out or left off: the two are the same function type).
//
// RUN: %rewrite %s | %verify --iree | filecheck %s --match-full-lines

module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    stablehlo.custom_call @sink(%arg0) {has_side_effect = true, mhlo.backend_config = {level = 2 : i32}} : (tensor<4xf32>) -> ()
    stablehlo.custom_call @tick() {has_side_effect = true, mhlo.backend_config = {}} : () -> ()
    return %arg0 : tensor<4xf32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @sink(tensor<4xf32> {bufferization.access = "read"}, i32){{( -> \(\))?}} attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func private @tick(){{( -> \(\))?}} attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     %level = arith.constant 2 : i32
// CHECK-NEXT:     func.call @sink(%arg0, %level) : (tensor<4xf32>, i32) -> ()
// CHECK-NEXT:     func.call @tick() : () -> ()
// CHECK-NEXT:     return %arg0 : tensor<4xf32>
