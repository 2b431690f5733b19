// The seed case (rule 1): one pretty-form FFI call as jax.export prints it. Only the
// custom call's text changes: one arith.constant per attribute, carrying the call's
// loc, then func.call with the same results, operands first; the extern goes first in
// the module body, indented like the op it precedes; nothing is said on stderr.
//
// RUN: %rewrite %s | %verify --iree | filecheck %s --match-full-lines
// RUN: %rewrite %s | filecheck %s --match-full-lines --strict-whitespace --check-prefix=INDENT
// RUN: %rewrite %s 2>&1 >/dev/null | filecheck %s --allow-empty --check-prefix=QUIET

#loc1 = loc("x")
module @jit_rms_norm attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10x10xf32> loc("x")) -> (tensor<10x10xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.custom_call @rms_norm(%arg0) {mhlo.backend_config = {eps = 9.99999974E-6 : f32}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<10x10xf32>) -> tensor<10x10xf32> loc(#loc2)
    return %0 : tensor<10x10xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(rms_norm)/ffi_call"(#loc1))

// The checks sit below the module: the rewriter copies comments through, and checks
// written between the ops would show up between the output lines.

// CHECK:      #loc1 = loc("x")
// CHECK-NEXT: module @jit_rms_norm attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
// CHECK-NEXT:   func.func private @rms_norm(tensor<10x10xf32> {bufferization.access = "read"}, f32) -> tensor<10x10xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {{.*}}}
// CHECK-NEXT:   func.func public @main(%arg0: tensor<10x10xf32> loc("x")) -> (tensor<10x10xf32> {jax.result_info = "result"}) {
// CHECK-NEXT:     %eps = arith.constant 9.99999974E-6 : f32 loc(#loc2)
// CHECK-NEXT:     %0 = func.call @rms_norm(%arg0, %eps) : (tensor<10x10xf32>, f32) -> tensor<10x10xf32> loc(#loc2)
// CHECK-NEXT:     return %0 : tensor<10x10xf32> loc(#loc)
// CHECK-NEXT:   } loc(#loc)
// CHECK-NEXT: } loc(#loc)
// CHECK-NEXT: #loc = loc(unknown)
// CHECK-NEXT: #loc2 = loc("jit(rms_norm)/ffi_call"(#loc1))

// INDENT:{{^}}module @jit_rms_norm {{.*}}
// INDENT-NEXT:{{^}}  func.func private @rms_norm({{.*}}
// INDENT-NEXT:{{^}}  func.func public @main({{.*}}
// INDENT-NEXT:{{^}}    %eps = arith.constant {{.*}}
// INDENT-NEXT:{{^}}    %0 = func.call {{.*}}
// INDENT-NEXT:{{^}}    return %0 {{.*}}

// QUIET-NOT: {{.}}
