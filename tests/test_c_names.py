"""What reaches C from the input: names made safe, types only from the table, errors at
their line.

Targets, attribute names and function names are any text MLIR accepts (quoted symbols and
attribute names with any character, C and C++ keywords, standard macros). Headers and
adapters made from them compile as C99 and C++17 after the standard headers a user's file
includes, and their code (comments and string literals aside) holds only names we chose.
Declaration types with no C type are errors at their line, not text copied into C.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rewriter
from rewriter.plan.c_names import RESERVED, is_safe_c_name, safe_c_name, unique_c_name

ROOT = Path(__file__).resolve().parent.parent
INCLUDE = ROOT / "abi" / "include"

# Standard headers a user's file may include before ours: their macros are live.
C_PRELUDE = (
    "#include <stdio.h>\n#include <stdlib.h>\n#include <errno.h>\n#include <math.h>\n"
    "#include <limits.h>\n#include <stdint.h>\n#include <inttypes.h>\n#include <stddef.h>\n"
    "#include <assert.h>\n#include <complex.h>\n#include <signal.h>\n#include <locale.h>\n"
)
CXX_PRELUDE = C_PRELUDE.replace("#include <complex.h>\n", "#include <new>\n#include <cmath>\n")

TRICKY_NAMES = [
    "new", "this", "true", "false", "NULL", "class", "delete", "template", "INT32_MAX",
    "__LINE__", "and", "not", "bool", "int", "result", "results", "errno", "EOF", "I",
    "complex", "linux", "unix", "stdin", "_Bool", "__x", "x__y", "_X", "0x", "uint8_t",
    "PRId64", "UINT64_C", "static_assert", "restrict", "asm", "typeof", "M_PI", "arg0",
]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("eps", "eps"),
        ("new", "new_"),
        ("INT32_MAX", "INT32_MAX_"),
        ("__LINE__", "LINE"),
        ("a.b-c", "a_b_c"),
        ('x  y*/"', "x_y"),
        ("9lives", "x9lives"),
        ("caf\u00e9", "caf"),
        ("___", "x"),
        ("_Bool", "Bool"),
        ("a__b", "a_b"),
    ],
)
def test_safe_c_name(text: str, name: str):
    assert safe_c_name(text) == name
    assert is_safe_c_name(name)


def test_unique_c_names_never_make_a_double_underscore():
    taken = {"result"}
    names = [unique_c_name(text, taken) for text in ["new", "new_", "new", "result", "x"]]
    assert names == ["new_", "new_1", "new_2", "result_1", "x"]
    assert all(is_safe_c_name(name) for name in names)


@pytest.mark.parametrize("name", sorted(RESERVED))
def test_no_reserved_word_is_safe(name: str):
    assert not is_safe_c_name(name)
    assert is_safe_c_name(safe_c_name(name))


def mlir_string(text: str) -> str:
    """``text`` as an MLIR string literal: letters, digits and ``_`` as they are, every
    other byte escaped (``\\22`` for a quote)."""
    return (
        '"'
        + "".join(
            chr(b) if chr(b).isascii() and (chr(b).isalnum() or b == 0x5F) else f"\\{b:02X}"
            for b in text.encode("utf-8")
        )
        + '"'
    )


def module_text(targets: list[str], attribute_names: list[list[str]]) -> str:
    calls = []
    value = "%arg0"
    for index, (target, names) in enumerate(zip(targets, attribute_names, strict=True)):
        attributes = ", ".join(
            f"{mlir_string(name)} = {position} : i32" for position, name in enumerate(names)
        )
        calls.append(
            f"    %{index} = stablehlo.custom_call @{mlir_string(target)}({value}) "
            f"{{mhlo.backend_config = {{{attributes}}}}} : (tensor<4xf32>) -> tensor<4xf32>"
        )
        value = f"%{index}"
    return (
        "module @m {\n"
        "  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
        + "\n".join(calls)
        + f"\n    return {value} : tensor<4xf32>\n  }}\n}}\n"
    )


def syntax_check(source: str, language: str, tmp_path: Path, *includes: str):
    suffix = ".c" if language == "c" else ".cc"
    path = tmp_path / f"check{suffix}"
    path.write_text(source)
    compiler = ["gcc", "-std=c99"] if language == "c" else ["g++", "-std=c++17"]
    flags = [f"-I{folder}" for folder in (INCLUDE, *includes)]
    return subprocess.run(
        [*compiler, "-Wall", "-Werror", "-fsyntax-only", *flags, str(path)],
        capture_output=True,
        text=True,
    )


_COMMENT_OR_STRING = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"', re.DOTALL)
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[(){}\[\];,*&=#<>.:\s-]")


def code_names(c_text: str) -> list[str]:
    """The identifiers of ``c_text`` outside comments and string literals; fails when
    anything else than identifiers, numbers and punctuation is left there."""
    code = _COMMENT_OR_STRING.sub(" ", c_text)
    position, names = 0, []
    while position < len(code):
        token = _TOKEN.match(code, position)
        assert token is not None, f"unexpected text in C code: {code[position : position + 40]!r}"
        if token.group()[0].isalpha() or token.group()[0] == "_":
            names.append(token.group())
        position = token.end()
    return names


# The words the header and adapter templates write themselves: directives, keywords, the
# types of the element table, the standard headers' names.
OUR_WORDS = frozenset(
    "ifndef define endif include ifdef __cplusplus extern C void typedef struct const "
    "static NULL bool char float double int8_t int16_t int32_t int64_t uint8_t uint16_t "
    "uint32_t uint64_t stdbool stdint stddef h rewriter memref xla_ffi_bridge".split()
)


def ours(name: str, prefixes: tuple[str, ...]) -> bool:
    return name in OUR_WORDS or name.startswith(prefixes) or is_safe_c_name(name)


ANY_NAME = st.one_of(
    st.sampled_from(TRICKY_NAMES),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12),
    st.text("abcXYZ_09", min_size=1, max_size=300),  # long names too
)


@st.composite
def named_modules(draw):
    count = draw(st.integers(1, 3))
    targets = draw(st.lists(ANY_NAME, min_size=count, max_size=count))
    names = [draw(st.lists(ANY_NAME, max_size=4, unique=True)) for _ in targets]
    return targets, names


@pytest.mark.slow
@pytest.mark.jax
@pytest.mark.toolchain("gcc", "g++")
@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(named_modules())
def test_any_names_give_headers_and_adapters_that_compile_and_hold_only_our_names(
    tmp_path: Path, module
):
    import jax

    text = module_text(*module)
    rewritten = rewriter.rewrite(text).text
    for source in (text, rewritten):
        header = rewriter.emit_header(source)
        for language, prelude in (("c", C_PRELUDE), ("c++", CXX_PRELUDE)):
            checked = syntax_check(prelude + header, language, tmp_path)
            assert checked.returncode == 0, checked.stderr + header
        for name in code_names(header):
            assert ours(name, ("_mlir_ciface_", "rw_", "REWRITER_")), name
    adapters = rewriter.emit_ffi_adapters(text)
    checked = syntax_check(adapters, "c", tmp_path, str(ROOT / "abi"), jax.ffi.include_dir())
    assert checked.returncode == 0, checked.stderr + adapters
    for name in code_names(adapters):
        assert ours(name, ("_mlir_ciface_", "rw_", "RW_", "XLA_FFI_")), name


@pytest.mark.toolchain("gcc", "g++")
def test_keyword_and_macro_attribute_names_give_a_header_both_compilers_take(tmp_path: Path):
    text = module_text(["rms_norm"], [TRICKY_NAMES])
    header = rewriter.emit_header(text)
    assert "int32_t new_," in header and "int32_t INT32_MAX_," in header
    for language, prelude in (("c", C_PRELUDE), ("c++", CXX_PRELUDE)):
        checked = syntax_check(prelude + header, language, tmp_path)
        assert checked.returncode == 0, checked.stderr


DECLARED = """\
module @m {
  func.func private @k(tensor<4xf32>, PARAMETER) -> RESULT attributes {llvm.emit_c_interface}
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    return %arg0 : tensor<4xf32>
  }
}
"""


@pytest.mark.parametrize(
    ("parameter", "result", "message"),
    [
        ("int /*(*/); int injected(void) { return 42; } void zz(int/*)*/", "tensor<4xf32>",
         "no scalar type of the calling contract"),
        ("index", "tensor<4xf32>", "index is no scalar type"),
        ("!llvm.ptr", "tensor<4xf32>", "!llvm.ptr is no scalar type"),
        ("none", "tensor<4xf32>", "none is no scalar type"),
        ("i128", "tensor<4xf32>", "i128 is no scalar type"),
        ("tensor<*xf32>", "tensor<4xf32>", "tensor<*xf32> is no ranked tensor"),
        ("tensor<4xf8E4M3FN>", "tensor<4xf32>", "tensor<4xf8E4M3FN> is no ranked tensor of"),
        ("tensor<4xindex>", "tensor<4xf32>", "tensor<4xindex> is no ranked tensor of"),
        ("f32", "i32", "i32 is no ranked tensor"),
    ],
)  # fmt: skip
def test_a_declaration_type_with_no_c_type_is_an_error_at_its_line(
    parameter: str, result: str, message: str, tmp_path: Path
):
    source = tmp_path / "declared.mlir"
    source.write_text(DECLARED.replace("PARAMETER", parameter).replace("RESULT", result))
    header = tmp_path / "out.h"
    run = subprocess.run(
        [sys.executable, "-m", "rewriter", "--emit-header", str(header), str(source)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1, run.stderr
    assert run.stderr.startswith(f"{source}:2:3: error: extern @k: no C prototype: ")
    assert message in run.stderr and "Traceback" not in run.stderr
    assert not header.exists()


@pytest.mark.parametrize("element", ["index", "i128", "f8E4M3FN", "i4"])
def test_a_call_with_an_element_type_of_no_c_type_is_an_error_at_the_call(element: str):
    text = (
        "module @m {\n  func.func public @main(%arg0: tensor<4xELEMENT>) -> tensor<4xELEMENT> {\n"
        "    %0 = stablehlo.custom_call @k(%arg0) {mhlo.backend_config = {}} : "
        "(tensor<4xELEMENT>) -> tensor<4xELEMENT>\n"
        "    return %0 : tensor<4xELEMENT>\n  }\n}\n"
    ).replace("ELEMENT", element)
    with pytest.raises(rewriter.RewriteError) as raised:
        rewriter.emit_header(text, filename="e.mlir")
    assert (raised.value.line, raised.value.column) == (3, 5)
    assert raised.value.message == (
        f"custom_call @k: no C prototype: tensor<4x{element}> is no ranked tensor of an "
        "element type of the calling contract (abi/README.md)"
    )


ENTRY_NAMES = """\
module @m {
  func.func public @"x y*/\\22"(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
  func.func public @"caf\\C3\\A9"(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
  func.func public @functions(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
    return %arg0, %arg0 : tensor<4xf32>, tensor<4xf32>
  }
  func.func public @rw_entry_main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.subtract %arg0, %arg0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.negate %arg0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""


@pytest.mark.slow
@pytest.mark.toolchain
def test_public_functions_with_any_names_compile_and_each_loads(tmp_path: Path):
    """Entry symbols are C identifiers, unique among the module's symbols and each other:
    every function loads and is reached by its MLIR name."""
    import numpy as np

    from rewriter.compile import compile_module, load

    library = tmp_path / "libnames.so"
    entries = compile_module(ENTRY_NAMES, library)
    symbols = [entry.c_symbol for entry in entries]
    assert all(re.fullmatch(r"_mlir_ciface_rw_entry_[A-Za-z0-9_]+", s) for s in symbols)
    assert len(set(symbols)) == len(symbols)
    module = load(library)
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(module['x y*/"'](x), x + x)
    np.testing.assert_array_equal(module["caf\u00e9"](x), x * x)
    for got in module["functions"](x):
        np.testing.assert_array_equal(got, x)
    np.testing.assert_array_equal(module["rw_entry_main"](x), x - x)
    np.testing.assert_array_equal(module.main(x), -x)
