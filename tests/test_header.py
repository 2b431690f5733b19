"""`--emit-header`: the generated prototypes are exactly what the kernels implement.

Each sample's kernel source (samples/kernels) is compiled against the header generated
from the sample's export, instead of the hand-written kernels.h, with -Wall -Werror: it
must compile. A kernel whose signature differs must not.
"""

from __future__ import annotations

import functools
import re
import subprocess
import sys
from pathlib import Path

import jax
import pytest

pytestmark = [pytest.mark.jax, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
KERNELS = SAMPLES / "kernels"

KERNEL_SOURCES = {
    "rms_norm": "rms_norm.cc",
    "name_clash": "rms_norm.cc",
    "two_results": "sum_and_max.cc",
    "attribute_kernel": "attr_kernel.cc",
    "side_effect": "count_calls.cc",
    "dynamic_shape": "row_scale.cc",
    "two_targets": "elementwise.cc",
    "while_and_private": "elementwise.cc",
    "column_major": "col_major.cc",
}


def emit_header(source: Path, header: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rewriter", "--emit-header", str(header), str(source)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )


def compile_cxx(source: Path, header: Path) -> subprocess.CompletedProcess[str]:
    """Syntax-check ``source`` with ``header`` in place of samples/kernels/kernels.h."""
    return subprocess.run(
        [
            "g++",
            "-std=c++17",
            "-Wall",
            "-Werror",
            "-fsyntax-only",
            "-isystem",
            jax.ffi.include_dir(),
            f"-I{ROOT / 'abi' / 'include'}",
            f"-I{KERNELS}",
            "-DSAMPLES_KERNELS_H",
            "-include",
            str(header),
            str(source),
        ],
        capture_output=True,
        text=True,
    )


def compile_c(code: str, header: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    source = tmp_path / "kernel.c"
    source.write_text(f'#include "{header}"\n{code}')
    return syntax_check(source)


def syntax_check(source: Path) -> subprocess.CompletedProcess[str]:
    """C11 with every warning an error, headers from abi/include: does ``source`` compile?"""
    return subprocess.run(
        [
            "cc",
            "-std=c11",
            "-Wall",
            "-Werror",
            "-fsyntax-only",
            f"-I{ROOT / 'abi' / 'include'}",
            str(source),
        ],
        capture_output=True,
        text=True,
    )


@pytest.mark.toolchain("g++")
@pytest.mark.parametrize("name", sorted(KERNEL_SOURCES))
def test_sample_kernel_compiles_against_generated_header(name: str, tmp_path: Path):
    header = tmp_path / f"{name}.h"
    emitted = emit_header(SAMPLES / name / f"{name}.mlir", header)
    assert emitted.returncode == 0, emitted.stderr
    assert emitted.stdout == ""  # without -o only the header is written
    text = header.read_text()
    assert "custom_call @" in text and f"samples/{name}/{name}.mlir:" in text
    compiled = compile_cxx(KERNELS / KERNEL_SOURCES[name], header)
    assert compiled.returncode == 0, compiled.stderr


RMS_NORM_BODY = """{
    int64_t sizes[2] = {x->sizes[0], x->sizes[1]};
    (void)eps;
    if (rw_memref_f32_2d_alloc(result, sizes) != 0) return;
}
"""


@pytest.mark.toolchain("cc")
@pytest.mark.parametrize(
    "signature, compiles",
    [
        ("rw_memref_f32_2d *result, rw_memref_f32_2d *x, float eps", True),
        ("rw_memref_f32_2d *result, rw_memref_f32_2d *x, double eps", False),
        ("rw_memref_f32_2d *result, rw_memref_f32_1d *x, float eps", False),
        ("rw_memref_f32_2d *x, float eps, rw_memref_f32_2d *result", False),
    ],
)
def test_wrong_signature_does_not_compile(signature, compiles, tmp_path: Path):
    header = tmp_path / "externs.h"
    assert emit_header(SAMPLES / "rms_norm" / "rms_norm.mlir", header).returncode == 0
    code = f"void _mlir_ciface_rms_norm({signature})\n{RMS_NORM_BODY}"
    compiled = compile_c(code, header, tmp_path)
    assert (compiled.returncode == 0) == compiles, compiled.stderr
    if not compiles:
        assert "conflicting types" in compiled.stderr


def test_unsigned_attributes_keep_their_c_types(tmp_path: Path):
    header = tmp_path / "attr.h"
    assert (
        emit_header(SAMPLES / "attribute_kernel" / "attribute_kernel.mlir", header).returncode == 0
    )
    text = header.read_text()
    for expected in (
        "uint8_t u8",
        "uint16_t u16",
        "uint32_t u32",
        "uint64_t u64",
        "int8_t i8",
        "uint16_t bf16",
        "uint16_t f16",
        "bool boolean",
        "rw_memref_i8_1d *text",
        "rw_memref_i64_1d *iarr",
    ):
        assert expected in text


@pytest.mark.parametrize("name", ["attribute_kernel", "two_results", "rms_norm"])
def test_header_from_a_rewritten_module_is_exact(tmp_path: Path, name: str):
    """The externs' rewriter.xla_ffi descriptions bring back attribute names and signedness:
    the header from the rewrite equals the one from the export, but for where it points."""
    from_export, from_rewrite = tmp_path / "export.h", tmp_path / "rewrite.h"
    assert emit_header(SAMPLES / name / f"{name}.mlir", from_export).returncode == 0
    assert emit_header(SAMPLES / name / f"{name}.rewritten.mlir", from_rewrite).returncode == 0
    without_locations = functools.partial(re.sub, r"/\* custom_call @.* at .*\*/", "")
    assert without_locations(from_rewrite.read_text()) == without_locations(from_export.read_text())


@pytest.mark.toolchain("g++")
def test_header_from_a_declaration_without_description(tmp_path: Path):
    """Without rewriter.xla_ffi (hand-written or older rewrites): same ABI, names and
    signedness are gone."""
    header = tmp_path / "rebuilt.h"
    text = (SAMPLES / "rms_norm" / "rms_norm.rewritten.mlir").read_text()
    stripped = re.sub(r", rewriter\.xla_ffi = \{.*\}\}$", "}", text, flags=re.M)
    assert "xla_ffi" not in stripped
    rewritten = tmp_path / "rms_norm.rewritten.mlir"
    rewritten.write_text(stripped)
    assert emit_header(rewritten, header).returncode == 0
    text = header.read_text()
    assert (
        "void _mlir_ciface_rms_norm(rw_memref_f32_2d *result, rw_memref_f32_2d *arg0, "
        "float arg1);" in text
    )
    assert "rebuilt from the declaration" in text
    assert compile_cxx(KERNELS / "rms_norm.cc", header).returncode == 0


def test_header_python_api_matches_cli(tmp_path: Path):
    import rewriter

    header = tmp_path / "cli.h"
    source = SAMPLES / "two_results" / "two_results.mlir"
    assert emit_header(source, header).returncode == 0
    assert rewriter.emit_header(source.read_text(), filename=str(source)) == header.read_text()


INJECTION_TARGETS = [
    r'@"evil */ int injected_global; /*"',
    r'@"back\\slash ??/"',
    r'@"new\0Aline int injected_global;"',
    r'@"quote\22 */ #define X 1"',
]


@pytest.mark.toolchain("cc")
@pytest.mark.parametrize("target", INJECTION_TARGETS)
def test_target_names_cannot_inject_code_into_headers(target: str, tmp_path: Path):
    """A target reaches C code only through the identifier rule, and comments are made safe."""
    folder = tmp_path / "evil *"  # the path then holds "*/", as does the diagnostic location
    folder.mkdir()
    source = folder / " name.mlir"
    source.write_text(
        "module {\n"
        "  func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n"
        f"    %0 = stablehlo.custom_call {target}(%arg0) {{mhlo.backend_config = {{}}}} : "
        "(tensor<2xf32>) -> tensor<2xf32>\n"
        "    return %0 : tensor<2xf32>\n"
        "  }\n"
        "}\n"
    )
    header = tmp_path / "externs.h"
    assert emit_header(source, header).returncode == 0
    code = subprocess.run(  # the header with its comments removed by the preprocessor
        ["cc", "-E", "-P", "-std=c11", f"-I{ROOT / 'abi' / 'include'}", str(header)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    # the name may live on inside the sanitised identifier, never as a token of its own
    assert not re.search(r"\binjected_global\b", code) and "#define X" not in code
    compiled = compile_c("int main(void) { return 0; }\n", header, tmp_path)
    assert compiled.returncode == 0, compiled.stderr


# ---------------------------------------------------------------- headers side by side


def call_position(text: str, pattern: str) -> tuple[int, int]:
    """Line and column (of the statement's first character) of the first line matching
    ``pattern``: computed here from the file, not taken from the tool."""
    for number, line in enumerate(text.splitlines(), start=1):
        if re.search(pattern, line):
            return number, len(line) - len(line.lstrip()) + 1
    raise AssertionError(f"no line matches {pattern}")


@pytest.mark.parametrize(
    "name", ["column_major", "cholesky_lapack", "rms_norm", "two_results", "attribute_kernel"]
)
def test_header_from_a_rewritten_module_names_the_call_and_keeps_layout_notes(
    tmp_path: Path, name: str
):
    """From a rewrite, the header is the export's header but for the place it names: the
    call that replaced the custom call (it keeps the custom call's loc), with the same
    layout notes."""
    original = SAMPLES / name / f"{name}.mlir"
    rewritten = SAMPLES / name / f"{name}.rewritten.mlir"
    from_export, from_rewrite = tmp_path / "export.h", tmp_path / "rewrite.h"
    assert emit_header(original, from_export).returncode == 0
    assert emit_header(rewritten, from_rewrite).returncode == 0
    [loc] = re.findall(r"stablehlo\.custom_call @.*(loc\(#\w+\))$", original.read_text(), re.M)
    before = call_position(original.read_text(), r"stablehlo\.custom_call @")
    after = call_position(rewritten.read_text(), r"func\.call @.*" + re.escape(loc) + "$")
    expected = from_export.read_text().replace(
        f"at {original}:{before[0]}:{before[1]}", f"at {rewritten}:{after[0]}:{after[1]}"
    )
    assert f"at {rewritten}:{after[0]}:{after[1]}" in expected
    assert from_rewrite.read_text() == expected


def test_layout_notes_survive_the_rewrite():
    import rewriter

    rewritten = (SAMPLES / "cholesky_lapack" / "cholesky_lapack.rewritten.mlir").read_text()
    header = rewriter.emit_header(rewritten)
    assert (
        " * arg0: tensor<3x3xf32> in layout {0, 1}: the descriptor is tensor<3x3xf32>, its "
        "dims are the logical dims (1, 0) in that order"
    ) in header


@pytest.mark.toolchain("cc")
def test_two_headers_in_one_c_file_both_declare_their_functions(tmp_path: Path):
    first, second = tmp_path / "rms_norm.h", tmp_path / "two_results.h"
    assert emit_header(SAMPLES / "rms_norm" / "rms_norm.mlir", first).returncode == 0
    assert emit_header(SAMPLES / "two_results" / "two_results.mlir", second).returncode == 0
    guards = [re.search(r"#ifndef (\w+)", h.read_text())[1] for h in (first, second)]
    assert guards[0] != guards[1]
    source = tmp_path / "both.c"
    source.write_text(
        f'#include "{first}"\n#include "{second}"\n'
        "void use(void) {\n"
        "  void *a = (void *)_mlir_ciface_rms_norm;\n"
        "  void *b = (void *)_mlir_ciface_sum_and_max;\n"
        "  (void)a; (void)b;\n"
        "}\n"
    )
    compiled = syntax_check(source)
    assert compiled.returncode == 0, compiled.stderr


def test_include_guard_is_the_module_name_and_a_hash_of_the_prototypes():
    import rewriter
    from rewriter.api import prototypes
    from rewriter.emit.header import include_guard

    text = (SAMPLES / "rms_norm" / "rms_norm.mlir").read_text()
    header = rewriter.emit_header(text)
    guard = include_guard(prototypes(text), "jit_rms_norm")
    assert re.fullmatch(r"REWRITER_JIT_RMS_NORM_[0-9A-F]{12}_H", guard)
    assert f"#ifndef {guard}\n#define {guard}\n" in header
    assert header.endswith(f"#endif /* {guard} */\n")
    # the same externs from the rewrite: the same guard; other externs: another one
    rewritten = (SAMPLES / "rms_norm" / "rms_norm.rewritten.mlir").read_text()
    assert f"#ifndef {guard}\n" in rewriter.emit_header(rewritten)
    other = text.replace("@rms_norm(", "@rms_norm_v2(")
    assert f"#ifndef {guard}\n" not in rewriter.emit_header(other)
