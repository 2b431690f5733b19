// Rule 4, "once per module": the extern is declared in the module that holds the call,
// here each of two nested modules, and nowhere else; both keep the target's name, since
// each module is its own symbol table.
//
// RUN: %rewrite %s | %verify --iree | filecheck %s --match-full-lines

module @outer {
  module @a {
    func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
      %0 = stablehlo.custom_call @k(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
  module @b {
    func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
      %0 = stablehlo.custom_call @k(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
}

// CHECK:      module @outer {
// CHECK-NEXT:   module @a {
// CHECK-NEXT:     func.func private @k(tensor<4xf32> {bufferization.access = "read"}) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:     func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:       %0 = func.call @k(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:       return %0 : tensor<4xf32>
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT:   module @b {
// CHECK-NEXT:     func.func private @k(tensor<4xf32> {bufferization.access = "read"}) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:     func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:       %0 = func.call @k(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:       return %0 : tensor<4xf32>
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT: }
