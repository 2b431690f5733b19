"""Limits: deep nesting, odd bytes and line endings give a result or a clear diagnostic."""

from __future__ import annotations

import time

import pytest

import rewriter

DEPTH = 10_000


def call_with(config: str) -> str:
    return (
        "module {\n"
        "  func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
        f"    %0 = stablehlo.custom_call @k(%a) {{mhlo.backend_config = {config}}} : "
        "(tensor<2xf32>) -> tensor<2xf32>\n"
        "    return %0 : tensor<2xf32>\n"
        "  }\n"
        "}\n"
    )


DEEP = {
    "regions": "module {\n  func.func @f() {\n"
    + '"x.op"() ({\n' * DEPTH
    + '"x.end"() : () -> ()\n'
    + "}) : () -> ()\n" * DEPTH
    + "    return\n  }\n}\n",
    "brackets": "module {\n  func.func @f() {\n" + "(" * DEPTH + ")" * DEPTH + "\n  }\n}\n",
    "dictionaries": call_with("{x = " + "{y = " * DEPTH + "1 : i32" + "}" * DEPTH + "}"),
    "unclosed": "module {\n" + "[" * DEPTH + "\n}\n",
}


@pytest.mark.parametrize("name", sorted(DEEP))
def test_ten_thousand_levels_give_a_result_or_a_diagnostic(name: str):
    started = time.perf_counter()
    try:
        rewriter.rewrite(DEEP[name])
    except rewriter.RewriteError as error:
        assert error.diagnostics[0].line >= 1
        if name == "dictionaries":
            assert "nests too deeply" in error.message
    assert time.perf_counter() - started < 5


def test_byte_order_mark_is_a_clear_error():
    with pytest.raises(rewriter.RewriteError) as caught:
        rewriter.rewrite("\ufeff" + call_with("{}"))
    assert (caught.value.line, caught.value.column) == (1, 1)
    assert "byte order mark" in caught.value.message


def test_crlf_and_tabs_are_kept():
    text = call_with("{eps = 1.0 : f32}").replace("\n", "\r\n").replace("    ", "\t")
    result = rewriter.rewrite(text)
    assert result.text.count("\r\n") == result.text.count("\n")  # every line ends in CRLF
    assert "\t%eps = arith.constant 1.0 : f32\r\n\tfunc.call" in result.text.replace(
        "%0 = func.call", "func.call"
    )
