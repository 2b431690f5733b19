// Rule 6, --target GLOB and --skip GLOB (both repeatable): --target rewrites only the
// targets it matches, --skip leaves out the ones it matches; what is not selected stays
// a custom call, and its target gets no extern. Nothing selected: output = input.
//
// RUN: %rewrite --target 'rms_*' %s | %verify | filecheck %s --match-full-lines --check-prefix=TARGET
// RUN: %rewrite --skip 'rms_*' %s | %verify | filecheck %s --match-full-lines --check-prefix=SKIP
// RUN: %rewrite --target rms_a --target other %s | %verify | filecheck %s --match-full-lines --check-prefix=TWO
// RUN: %rewrite --target 'rms_*' --skip rms_b %s | %verify | filecheck %s --match-full-lines --check-prefix=BOTH
// RUN: %rewrite --target 'nothing*' %s | diff %s -
// RUN: %rewrite --skip '*' %s | diff %s -

module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @rms_a(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = stablehlo.custom_call @rms_b(%0) : (tensor<4xf32>) -> tensor<4xf32>
    %2 = stablehlo.custom_call @other(%1) : (tensor<4xf32>) -> tensor<4xf32>
    return %2 : tensor<4xf32>
  }
}

// TARGET:      module {
// TARGET-NEXT:   func.func private @rms_a(tensor<4xf32> {bufferization.access = "read"}) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// TARGET-NEXT:   func.func private @rms_b(tensor<4xf32> {bufferization.access = "read"}) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// TARGET-NEXT:   func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// TARGET-NEXT:     %0 = func.call @rms_a(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
// TARGET-NEXT:     %1 = func.call @rms_b(%0) : (tensor<4xf32>) -> tensor<4xf32>
// TARGET-NEXT:     %2 = stablehlo.custom_call @other(%1) : (tensor<4xf32>) -> tensor<4xf32>
// TARGET-NEXT:     return %2 : tensor<4xf32>

// SKIP:      module {
// SKIP-NEXT:   func.func private @other(tensor<4xf32> {bufferization.access = "read"}) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// SKIP-NEXT:   func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// SKIP-NEXT:     %0 = stablehlo.custom_call @rms_a(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
// SKIP-NEXT:     %1 = stablehlo.custom_call @rms_b(%0) : (tensor<4xf32>) -> tensor<4xf32>
// SKIP-NEXT:     %2 = func.call @other(%1) : (tensor<4xf32>) -> tensor<4xf32>
// SKIP-NEXT:     return %2 : tensor<4xf32>

// TWO:      module {
// TWO-NEXT:   func.func private @rms_a(tensor<4xf32> {bufferization.access = "read"}) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// TWO-NEXT:   func.func private @other(tensor<4xf32> {bufferization.access = "read"}) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// TWO-NEXT:   func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// TWO-NEXT:     %0 = func.call @rms_a(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
// TWO-NEXT:     %1 = stablehlo.custom_call @rms_b(%0) : (tensor<4xf32>) -> tensor<4xf32>
// TWO-NEXT:     %2 = func.call @other(%1) : (tensor<4xf32>) -> tensor<4xf32>
// TWO-NEXT:     return %2 : tensor<4xf32>

// BOTH:      module {
// BOTH-NEXT:   func.func private @rms_a(tensor<4xf32> {bufferization.access = "read"}) -> tensor<4xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// BOTH-NEXT:   func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// BOTH-NEXT:     %0 = func.call @rms_a(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
// BOTH-NEXT:     %1 = stablehlo.custom_call @rms_b(%0) : (tensor<4xf32>) -> tensor<4xf32>
// BOTH-NEXT:     %2 = stablehlo.custom_call @other(%1) : (tensor<4xf32>) -> tensor<4xf32>
// BOTH-NEXT:     return %2 : tensor<4xf32>
