"""rewriter.plan.mlir_text, the one writer of the MLIR text the rewrite adds. Each expected
text is MLIR's own spelling of the op or attribute (as in the goldens under samples/)."""

from __future__ import annotations

from rewriter.plan import mlir_text


def test_types():
    assert mlir_text.tensor_type([2, "?", 3], "f32") == "tensor<2x?x3xf32>"
    assert mlir_text.tensor_type([], "i8") == "tensor<i8>"
    assert mlir_text.results_text(["f32"]) == "f32"
    assert mlir_text.results_text(["f32", "i8"]) == "(f32, i8)"
    assert mlir_text.results_text([]) == "()"
    assert mlir_text.function_type(["f32", "i8"], ["f32"]) == "(f32, i8) -> f32"
    assert mlir_text.function_type([], []) == "() -> ()"
    # A result part as written is kept as it is (spacing included).
    assert mlir_text.function_type(["f32"], "( f32 )") == "(f32) -> ( f32 )"


def test_ops():
    assert mlir_text.func_call("k", ["%0", "%c"], "(f32, i8) -> f32") == (
        "func.call @k(%0, %c) : (f32, i8) -> f32"
    )
    assert mlir_text.func_call("k", [], "() -> ()") == "func.call @k() : () -> ()"
    assert mlir_text.arith_constant("%c", "2.0", "f32") == "%c = arith.constant 2.0 : f32"
    assert mlir_text.arith_constant("%t", "true") == "%t = arith.constant true"
    assert mlir_text.arith_bitcast("%b", "%c", "f16", "i16") == "%b = arith.bitcast %c : f16 to i16"
    assert mlir_text.transpose("%0", "%arg0", [1, 0], "tensor<2x3xf32>", "tensor<3x2xf32>") == (
        "%0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>"
    )
    assert mlir_text.func_return([], []) == "return"
    assert mlir_text.func_return(["%0", "%1"], ["f32", "i8"]) == "return %0, %1 : f32, i8"


def test_declarations():
    attributes = mlir_text.function_attributes([("llvm.emit_c_interface", None)])
    assert attributes == "attributes {llvm.emit_c_interface}"
    assert mlir_text.private_function(
        "k", ["tensor<4xf32>", "f32"], ["tensor<4xf32>"], attributes
    ) == (
        "func.func private @k(tensor<4xf32>, f32) -> tensor<4xf32> "
        "attributes {llvm.emit_c_interface}"
    )
    # No results: no arrow; no attributes: nothing after the parameters.
    assert mlir_text.private_function("k", ["%arg0: f32"], []) == "func.func private @k(%arg0: f32)"


def test_attributes():
    assert mlir_text.dictionary([("a", "1"), ("b.c", '"x"'), ("unit", None)]) == (
        '{a = 1, b.c = "x", unit}'
    )
    # A key MLIR cannot read bare is a quoted string.
    assert mlir_text.dictionary([("has space", "1"), ("9lives", "2")]) == (
        '{"has space" = 1, "9lives" = 2}'
    )
    assert mlir_text.string_list(["f32[3]{0}", 'a"b']) == '["f32[3]{0}", "a\\22b"]'
    assert mlir_text.integer_list([0, 2]) == "[0, 2]"
    assert mlir_text.i64_array([2, 0, 1]) == "array<i64: 2, 0, 1>"
    assert mlir_text.i64_array([]) == "array<i64>"
    assert mlir_text.dense_string(b"hi\n") == 'dense<"0x68690A">'
    assert mlir_text.dense_string(b"") == "dense<>"
    assert mlir_text.dense_list(["1", "-2"]) == "dense<[1, -2]>"
    assert mlir_text.dense_list([]) == "dense<>"
