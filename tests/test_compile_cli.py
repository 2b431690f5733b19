"""`python -m rewriter.compile`: stages, kept temporaries, and clear failures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RMS_NORM = ROOT / "samples" / "rms_norm" / "rms_norm.rewritten.mlir"


def compile_cli(*arguments: str, env: dict[str, str] | None = None):
    return subprocess.run(
        [sys.executable, "-m", "rewriter.compile", *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
    )


def exported_symbols(library: Path) -> set[str]:
    listing = subprocess.run(
        ["nm", "-D", "--defined-only", str(library)], capture_output=True, text=True, check=True
    ).stdout
    return {line.split()[-1] for line in listing.splitlines() if line.strip()}


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.toolchain("nm")
@pytest.mark.iree
def test_compile_writes_library_with_collision_free_entry(tmp_path: Path):
    library = tmp_path / "libmodel.so"
    temps = tmp_path / "temps"
    run = compile_cli(str(RMS_NORM), "-o", str(library), "--keep-temps", str(temps))
    assert run.returncode == 0, run.stderr
    symbols = exported_symbols(library)
    assert "_mlir_ciface_rw_entry_main" in symbols
    assert "main" not in symbols  # JAX's @main must not become C's main
    assert "rw_model_metadata" in symbols
    kept = sorted(path.name for path in temps.iterdir())
    assert kept == [
        "0-entries.mlir",
        "1-stablehlo-to-linalg.mlir",
        "2-bufferize.mlir",
        "3-library-calls.mlir",
        "4-generic-form.mlir",
        "5-lower-to-llvm.mlir",
        "6-translate.ll",
        "library.so",  # the link's output, copied to -o in one rename
        "metadata.c",
    ]
    assert "llvm.emit_c_interface" in (temps / "0-entries.mlir").read_text()


def test_missing_tools_are_named_with_their_package(tmp_path: Path):
    env = dict(os.environ, REWRITER_TOOL_PATH=str(tmp_path))  # an empty folder
    run = compile_cli(str(RMS_NORM), "-o", str(tmp_path / "lib.so"), env=env)
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert "iree-opt not found: install it with `pip install iree-base-compiler`" in run.stderr
    assert "mlir-opt-22 not found: install it with `apt-get install mlir-22-tools`" in run.stderr
    assert "clang-22 not found: install it with `apt-get install clang-22`" in run.stderr
    assert not (tmp_path / "lib.so").exists()


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.iree
def test_failing_stage_shows_its_diagnostics_and_keeps_its_input(tmp_path: Path):
    # A custom call left alone (compiler meaning) is what IREE's input pipeline rejects.
    module = tmp_path / "leftover.mlir"
    module.write_text(
        "func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %0 = stablehlo.custom_call @Sharding(%x) : (tensor<4xf32>) -> tensor<4xf32>\n"
        "  return %0 : tensor<4xf32>\n"
        "}\n"
    )
    temps = tmp_path / "temps"
    run = compile_cli(str(module), "-o", str(tmp_path / "lib.so"), "--keep-temps", str(temps))
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert "stage 'stablehlo-to-linalg' failed (iree-opt exited with" in run.stderr
    assert "failed to legalize operation 'stablehlo.custom_call'" in run.stderr
    kept_input = temps / "0-entries.mlir"
    assert f"its input is kept in {kept_input}" in run.stderr
    assert "@Sharding" in kept_input.read_text()
    assert not (tmp_path / "lib.so").exists()


def test_unreadable_module_is_a_clean_error(tmp_path: Path):
    run = compile_cli(str(tmp_path / "missing.mlir"), "-o", str(tmp_path / "lib.so"))
    assert run.returncode == 1
    assert "cannot read" in run.stderr and "Traceback" not in run.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read: No such file or directory"),
        (b"\xff\xfe\0", "cannot read: not UTF-8 text"),
    ],
)
def test_both_runners_read_a_module_alike(tmp_path: Path, content, message):
    """One reader (rewriter/compile/module_file.py): a missing file and one that is not
    UTF-8 text are the same one-line diagnostic from ``python -m rewriter.compile`` and
    ``python -m rewriter.iree`` (which reads before it looks for iree-compile)."""
    module = tmp_path / "model.mlir"
    if content is not None:
        module.write_bytes(content)
    for runner, output in (("rewriter.compile", "lib.so"), ("rewriter.iree", "model.vmfb")):
        run = subprocess.run(
            [sys.executable, "-m", runner, str(module), "-o", str(tmp_path / output)],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        assert (runner, run.returncode, run.stderr) == (runner, 1, f"{module}: error: {message}\n")
        assert not (tmp_path / output).exists()


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.iree
def test_load_without_the_kernel_is_an_error_not_a_crash(tmp_path: Path):
    library = tmp_path / "libmodel.so"
    assert compile_cli(str(RMS_NORM), "-o", str(library)).returncode == 0
    # In a fresh process: no kernel library may be loaded globally already.
    probe = (
        "import sys\n"
        "from rewriter.compile import LoadError, load\n"
        "try:\n"
        f"    load({str(library)!r})\n"
        "except LoadError as error:\n"
        "    print(error)\n"
        "    sys.exit(7)\n"
    )
    run = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 7, run.stderr
    assert "calls _mlir_ciface_rms_norm, which none of the kernel libraries" in run.stdout


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.toolchain("nm")
@pytest.mark.iree
def test_only_entry_points_are_exported(tmp_path: Path):
    library = tmp_path / "libmodel.so"
    assert compile_cli(str(RMS_NORM), "-o", str(library)).returncode == 0
    assert exported_symbols(library) == {
        "_mlir_ciface_rw_entry_main",
        "rw_entry_main",
        "rw_model_metadata",
    }
