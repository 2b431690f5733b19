"""``--abi iree``: externs as imports of an IREE runtime module, judged by the real tools.

Every sample rewritten with ``--abi iree`` verifies in jaxlib, keeps the lossless property,
and compiles with ``iree-compile --iree-input-type=stablehlo`` for llvm-cpu: with the
documented flags alone, plus ``--iree-input-demote-f64-to-f32=false`` where the sample has
f64 attributes (without it IREE refuses the import, checked below). The parameter order is
tested by hand-derived cases here and in ``filecheck/iree_*.mlir``; why it matters is shown
with IREE's runtime in ``test_iree_runtime.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from lossless import check_lossless
from mlir_tools import iree_tool, jaxlib_verify

import rewriter
from rewriter.plan.calling_conventions import import_order

pytestmark = [pytest.mark.iree, pytest.mark.jax, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted(p for p in (ROOT / "samples").glob("*/*.mlir") if ".rewritten" not in p.name)
# Samples whose attributes include an f64 (found by reading them; see the test below).
F64_SAMPLES = {"attribute_kernel", "attribute_kinds"}
IREE_COMPILE = (
    "--iree-input-type=stablehlo",
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
)
KEEP_F64 = "--iree-input-demote-f64-to-f32=false"


def iree_compile(text: str, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [iree_tool("iree-compile"), *IREE_COMPILE, *flags, "-", "-o", os.devnull],
        input=text,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def run_cli(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rewriter", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


# ---------------------------------------------------------------- the order rule


@pytest.mark.parametrize(
    ("types", "expected"),
    [
        # tensors first, then i64/f64, then the 4-byte group; stable inside each group
        (
            ["tensor<2xf32>", "i32", "i64", "f32", "tensor<3xi8>", "f64", "i1"],
            (0, 4, 2, 5, 1, 3, 6),
        ),
        (["tensor<2xf32>", "f32"], (0, 1)),
        (["i8", "i16", "f32"], (0, 1, 2)),
        (["f64", "i32", "i64"], (0, 2, 1)),
        ([], ()),
    ],
)
def test_import_order(types, expected):
    assert import_order(types) == expected


# ---------------------------------------------------------------- every sample


def test_f64_samples_are_the_ones_with_f64_attributes():
    with_f64 = set()
    for path in SAMPLES:
        result = rewriter.rewrite(path.read_text())
        if any(a.type == "f64" for call in result.calls for a in call.attributes):
            with_f64.add(path.parent.name)
    assert with_f64 == F64_SAMPLES


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.parent.name)
def test_sample_rewritten_for_iree_verifies_and_compiles(path: Path):
    original = path.read_text()
    result = rewriter.rewrite(original, abi="iree", filename=str(path))
    assert "llvm.emit_c_interface" not in result.text
    assert all(call.symbol.startswith("ffi.") for call in result.calls if call.symbol)
    jaxlib_verify(result.text)
    removed, _ = check_lossless(original, result.text)
    assert removed == sum(call.status == "rewritten" for call in result.calls)
    flags = (KEEP_F64,) if path.parent.name in F64_SAMPLES else ()
    done = iree_compile(result.text, *flags)
    assert done.returncode == 0, done.stderr


def test_f64_attributes_need_iree_to_keep_f64():
    """Without the flag IREE demotes f64 and refuses an import that takes f64."""
    path = ROOT / "samples" / "attribute_kernel" / "attribute_kernel.mlir"
    text = rewriter.rewrite(path.read_text(), abi="iree").text
    done = iree_compile(text)
    assert done.returncode != 0
    assert "external functions with types that are being demoted are not allowed" in done.stderr


def test_c_abi_output_is_not_an_iree_module():
    """The C ABI's extern has no module prefix, which IREE refuses: the reason for --abi iree."""
    path = ROOT / "samples" / "rms_norm" / "rms_norm.mlir"
    done = iree_compile(rewriter.rewrite(path.read_text()).text)
    assert done.returncode != 0
    assert "must reference a function in a module" in done.stderr


# ---------------------------------------------------------------- API


def test_api_reports_import_symbols_and_order():
    path = ROOT / "samples" / "attribute_kernel" / "attribute_kernel.mlir"
    result = rewriter.rewrite(path.read_text(), abi="iree", iree_module="kern")
    (call,) = result.calls
    assert call.symbol == "kern.attr_kernel"
    names = ["x"] + [a.path for a in call.attributes]  # contract order
    assert [names[i] for i in call.parameter_order] == [
        "x", "farr", "iarr", "text",  # tensors
        "f64", "i64", "u64",  # 8-byte scalars
        "bf16", "boolean", "f16", "f32", "i16", "i32", "i8", "u16", "u32", "u8",
    ]  # fmt: skip


def test_api_default_is_the_c_abi():
    text = (ROOT / "samples" / "rms_norm" / "rms_norm.mlir").read_text()
    assert rewriter.rewrite(text).text == rewriter.rewrite(text, abi="c").text
    assert rewriter.rewrite(text).calls[0].parameter_order == (0, 1)


def test_iree_abi_does_not_rename_for_a_symbol_named_like_the_target():
    """name_clash has a function @rms_norm: the C extern must be renamed, @ffi.rms_norm not."""
    text = (ROOT / "samples" / "name_clash" / "name_clash.mlir").read_text()
    result = rewriter.rewrite(text, abi="iree")
    assert [c.symbol for c in result.calls] == ["ffi.rms_norm"]
    assert result.warnings == []


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"abi": "llvm"}, "abi must be 'c' or 'iree'"),
        ({"abi": "iree", "iree_module": "my.mod"}, "is not an identifier"),
        ({"abi": "iree", "iree_module": ""}, "is not an identifier"),
    ],
)
def test_api_rejects_bad_abi_options(options, message):
    with pytest.raises(ValueError, match=message):
        rewriter.rewrite("module {}", **options)


# ---------------------------------------------------------------- command line


def test_cli_abi_iree_matches_the_api():
    path = ROOT / "samples" / "two_results" / "two_results.mlir"
    done = run_cli("--abi", "iree", "--iree-module", "kernels", path)
    assert done.returncode == 0, done.stderr
    expected = rewriter.rewrite(path.read_text(), abi="iree", iree_module="kernels").text
    assert done.stdout == expected
    assert "func.func private @kernels.sum_and_max(" in done.stdout


def test_cli_list_json_names_the_import():
    path = ROOT / "samples" / "mlp_model" / "mlp_model.mlir"
    done = run_cli("--abi", "iree", "--list", "--format", "json", path)
    assert done.returncode == 0, done.stderr
    calls = json.loads(done.stdout)["files"][0]["calls"]
    assert [c["symbol"] for c in calls] == ["ffi.rms_norm", "ffi.rms_norm_1"]


def test_cli_header_names_kernels_after_the_imports(tmp_path: Path):
    path = ROOT / "samples" / "name_clash" / "name_clash.mlir"
    for abi, symbol in (("c", "_mlir_ciface_rms_norm_1("), ("iree", "_mlir_ciface_rms_norm(")):
        header = tmp_path / f"{abi}.h"
        done = run_cli("--abi", abi, "--emit-header", header, path)
        assert done.returncode == 0, done.stderr
        assert symbol in header.read_text()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--iree-module", "kern"], "--iree-module goes with --abi iree"),
        (["--abi", "iree", "--iree-module", "a.b"], "is not an identifier"),
        (["--abi", "wasm"], "invalid choice: 'wasm'"),
    ],
)
def test_cli_usage_errors(arguments, message):
    done = run_cli(*arguments, ROOT / "samples" / "rms_norm" / "rms_norm.mlir")
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
