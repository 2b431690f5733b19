"""A 500 MB export (mostly weights) goes through within 3x its size + 100 MB of memory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
CALL = (
    "    %0 = stablehlo.custom_call @rms_norm(%arg0) {mhlo.backend_config = "
    "{eps = 9.99999974E-6 : f32}} : (tensor<10x10xf32>) -> tensor<10x10xf32>\n"
)


def write_huge_module(path: Path, constants: int = 10, megabytes: int = 50) -> None:
    blob = "0123456789ABCDEF" * (megabytes * 1_000_000 // 16)
    with path.open("w") as handle:
        handle.write("module @big {\n")
        handle.write("  func.func public @main(%arg0: tensor<10x10xf32>) -> tensor<10x10xf32> {\n")
        for index in range(constants):
            elements = len(blob) // 2
            handle.write(
                f'    %w{index} = stablehlo.constant dense<"0x{blob}"> : tensor<{elements}xui8>\n'
            )
        handle.write(CALL)
        handle.write("    return %0 : tensor<10x10xf32>\n  }\n}\n")


def test_five_hundred_megabytes_within_the_memory_bound(tmp_path: Path):
    source, output = tmp_path / "huge.mlir", tmp_path / "huge.rewritten.mlir"
    write_huge_module(source)
    size = source.stat().st_size
    assert size > 500_000_000
    # A fresh parent whose only child is the CLI, so that ru_maxrss is the CLI's own peak.
    measure = (
        "import resource, subprocess, sys\n"
        f"subprocess.run([sys.executable, '-m', 'rewriter', {str(source)!r}, '-o', "
        f"{str(output)!r}], check=True)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", measure], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    peak_bytes = int(run.stdout.strip()) * 1024  # Linux reports kilobytes
    assert peak_bytes <= 3 * size + 100_000_000, f"peak {peak_bytes / 1e6:.0f} MB"
    # Only the call changed: the output holds the extern, the constant and the func.call.
    with output.open("rb") as handle:
        head = handle.read(300).decode()
        length = handle.seek(0, 2)
        handle.seek(length - 600)
        tail = handle.read().decode()
    assert "func.func private @rms_norm(" in head
    assert abs(length - size) < 1000
    assert "%0 = func.call @rms_norm(%arg0, %eps)" in tail
