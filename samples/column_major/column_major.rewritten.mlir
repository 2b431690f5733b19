#loc1 = loc("x")
module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func private @col_major_kernel(tensor<5x3xf32> {bufferization.access = "read"}) -> tensor<5x3xf32> attributes {llvm.emit_c_interface, rewriter.xla_ffi = {attributes = {}, operands = ["f32[3,5]{0,1}"], results = ["f32[3,5]{0,1}"], target = "col_major_kernel"}}
  func.func private @col_major_kernel_layout(%arg0: tensor<3x5xf32>) -> tensor<3x5xf32> {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<3x5xf32>) -> tensor<5x3xf32>
    %1 = func.call @col_major_kernel(%0) : (tensor<5x3xf32>) -> tensor<5x3xf32>
    %2 = stablehlo.transpose %1, dims = [1, 0] : (tensor<5x3xf32>) -> tensor<3x5xf32>
    return %2 : tensor<3x5xf32>
  }
  func.func public @main(%arg0: tensor<3x5xf32> loc("x")) -> (tensor<3x5xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32> loc(#loc18)
    %0 = stablehlo.tanh %arg0 : tensor<3x5xf32> loc(#loc22)
    %1 = func.call @col_major_kernel_layout(%0) : (tensor<3x5xf32>) -> tensor<3x5xf32> loc(#loc25)
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x5xf32> loc(#loc24)
    %3 = stablehlo.add %1, %2 : tensor<3x5xf32> loc(#loc24)
    return %3 : tensor<3x5xf32> loc(#loc18)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("samples/_export_util.py":52:10 to 56:12)
#loc3 = loc("samples/_export_util.py":62:28 to :68)
#loc4 = loc("samples/column_major/export.py":33:4 to :96)
#loc5 = loc("samples/column_major/export.py":26:28 to :39)
#loc6 = loc("samples/column_major/export.py":21:16 to :23)
#loc7 = loc("samples/column_major/export.py":26:11 to :40)
#loc8 = loc("samples/column_major/export.py":26:11 to :46)
#loc9 = loc("export_text"(#loc2))
#loc10 = loc("export_and_print"(#loc3))
#loc11 = loc("<module>"(#loc4))
#loc12 = loc("f"(#loc5))
#loc13 = loc("col_major_kernel"(#loc6))
#loc14 = loc("f"(#loc7))
#loc15 = loc("f"(#loc8))
#loc16 = loc(callsite(#loc10 at #loc11))
#loc17 = loc(callsite(#loc9 at #loc16))
#loc18 = loc("jit(f)"(#loc17))
#loc19 = loc(callsite(#loc12 at #loc17))
#loc20 = loc(callsite(#loc14 at #loc17))
#loc21 = loc(callsite(#loc15 at #loc17))
#loc22 = loc("jit(f)/tanh"(#loc19))
#loc23 = loc(callsite(#loc13 at #loc20))
#loc24 = loc("jit(f)/add"(#loc21))
#loc25 = loc("jit(f)/ffi_call"(#loc23))
