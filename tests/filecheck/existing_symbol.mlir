// Rule 5: a target named like a symbol that already exists in the file (here a nested
// jax.jit, @t, and @t_1 too) gets the first free `_N` suffix; so does a sanitised name
// that clashes (@my.kernel -> my_kernel is taken -> my_kernel_1). The existing
// functions and the calls to them are untouched. Each rename is a warning.
//
// RUN: %rewrite %s -o %t 2>&1 | filecheck %s --check-prefix=WARN
// RUN: %verify --iree < %t | filecheck %s --match-full-lines

module @jit_f {
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @t(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = stablehlo.custom_call @t(%0) {mhlo.backend_config = {}} : (tensor<4xf32>) -> tensor<4xf32>
    %2 = stablehlo.custom_call @my.kernel(%1) : (tensor<4xf32>) -> tensor<4xf32>
    %3 = call @my_kernel(%2) : (tensor<4xf32>) -> tensor<4xf32>
    return %3 : tensor<4xf32>
  }
  func.func private @t(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.negate %arg0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
  func.func private @t_1(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    return %arg0 : tensor<4xf32>
  }
  func.func private @my_kernel(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    return %arg0 : tensor<4xf32>
  }
}

// CHECK:      module @jit_f {
// CHECK-NEXT:   func.func private @t_2(tensor<4xf32> {bufferization.access = "read"}) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func private @my_kernel_1(tensor<4xf32> {bufferization.access = "read"}) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:     %0 = call @t(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:     %1 = func.call @t_2(%0) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:     %2 = func.call @my_kernel_1(%1) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:     %3 = call @my_kernel(%2) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:     return %3 : tensor<4xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func private @t(%arg0: tensor<4xf32>) -> tensor<4xf32> {

// WARN:     existing_symbol.mlir:12:32: warning: {{.*}}'t'{{.*}}@t_2
// WARN:     existing_symbol.mlir:13:32: warning: {{.*}}'my.kernel'{{.*}}@my_kernel_1
// WARN-NOT: warning
