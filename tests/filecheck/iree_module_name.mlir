// --iree-module NAME prefixes every import with NAME. Rule 5 applies to the whole symbol:
// @scale already exists but @kernels.scale does not, so `scale` keeps its name; the
// existing @kernels.offset makes `offset` become @kernels.offset_1; a target that is not a
// C identifier is sanitised. Each rename is a warning naming the import.
//
// RUN: %rewrite --abi iree --iree-module kernels %s 2>%t.err | %verify | filecheck %s --match-full-lines
// RUN: filecheck %s --check-prefix=WARN < %t.err

module {
  func.func private @scale(%arg0: tensor<3xf32>) -> tensor<3xf32> {
    return %arg0 : tensor<3xf32>
  }
  func.func private @kernels.offset(tensor<3xf32>) -> tensor<3xf32>
  func.func @main(%arg0: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
    %0 = stablehlo.custom_call @scale(%arg0) {mhlo.backend_config = {}} : (tensor<3xf32>) -> tensor<3xf32>
    %1 = stablehlo.custom_call @offset(%arg0) {mhlo.backend_config = {}} : (tensor<3xf32>) -> tensor<3xf32>
    %2 = stablehlo.custom_call @"my.kernel"(%arg0) {mhlo.backend_config = {}} : (tensor<3xf32>) -> tensor<3xf32>
    return %0, %1, %2 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  }
}

// CHECK:      module {
// CHECK-NEXT:   func.func private @kernels.scale(tensor<3xf32> {bufferization.access = "read"}) -> tensor<3xf32> attributes {rewriter.attribute_types = [], rewriter.order = array<i64: 0>, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func private @kernels.offset_1(tensor<3xf32> {bufferization.access = "read"}) -> tensor<3xf32> attributes {rewriter.attribute_types = [], rewriter.order = array<i64: 0>, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func private @kernels.my_kernel(tensor<3xf32> {bufferization.access = "read"}) -> tensor<3xf32> attributes {rewriter.attribute_types = [], rewriter.order = array<i64: 0>, rewriter.xla_ffi = {{.*}}}
// CHECK:          %0 = func.call @kernels.scale(%arg0) : (tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:     %1 = func.call @kernels.offset_1(%arg0) : (tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:     %2 = func.call @kernels.my_kernel(%arg0) : (tensor<3xf32>) -> tensor<3xf32>

// WARN-NOT: 'scale'
// WARN: warning: custom call target 'offset' becomes extern @kernels.offset_1 (function offset_1 of IREE module kernels): a symbol named 'kernels.offset' already exists in the module
// WARN: warning: custom call target 'my.kernel' becomes extern @kernels.my_kernel (function my_kernel of IREE module kernels): 'my.kernel' is not a valid C identifier
