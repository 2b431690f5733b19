// Rule 4, "indented like it": when a comment line comes before the module's first op,
// the extern is still indented like that op (two spaces here), not like the comment.
// Where it goes, before or after the comment, the contract leaves open.
//
// RUN: %rewrite %s | %verify --iree | filecheck %s --match-full-lines --strict-whitespace

module {
// The entry point.
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @k(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// CHECK:{{^}}module {
// CHECK-NOT:{{^}}func.func private @k({{.*}}
// CHECK:{{^}}  func.func private @k(tensor<4xf32> {bufferization.access = "read"}) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK:{{^}}  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
