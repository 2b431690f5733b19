"""The wheel carries the grammar and the C headers, and works from any directory."""

from __future__ import annotations

import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import lark
import pytest

pytestmark = [pytest.mark.toolchain("git"), pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # Build from a copy of the tracked sources: a build/ folder left in a checkout could
    # otherwise slip stale files into the wheel.
    source = tmp_path_factory.mktemp("source") / "checkout"
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    for name in tracked:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", str(source), "-w", str(out)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (built,) = out.glob("*.whl")
    return built


def test_wheel_ships_grammar_and_abi(wheel: Path):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "rewriter/grammar/stablehlo.lark" in names
    # Every file of abi/ is the C side of the contract or what the runners compile.
    tracked = subprocess.run(
        ["git", "ls-files", "abi"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert "abi/rewriter_cblas.h" in tracked
    missing = [n for n in tracked if "rewriter/abi_files/" + n.removeprefix("abi/") not in names]
    assert missing == []
    assert "rewriter/compile/loader.py" in names
    assert "rewriter/iree/runtime.py" in names
    assert "rewriter/py.typed" in names  # PEP 561: the package is typed


def test_installed_wheel_rewrites_from_any_directory(wheel: Path, tmp_path: Path):
    environment = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(environment)
    python = environment / "bin" / "python"
    # The wheel's one dependency, lark, comes from this interpreter's environment, which is
    # a venv or the system's: a .pth file puts its folder after the new venv's own.
    # (system_site_packages would see the base interpreter's packages, not a venv's.)
    site_packages = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    lark_folder = Path(lark.__file__).resolve().parent.parent
    (Path(site_packages) / "lark_from_the_tests.pth").write_text(f"{lark_folder}\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "-q",
            "--force-reinstall",
            str(wheel),
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    sample = ROOT / "samples" / "rms_norm" / "rms_norm.mlir"
    run = subprocess.run(
        [str(python), "-m", "rewriter", str(sample)],
        cwd=elsewhere,
        capture_output=True,
        check=True,
        timeout=120,
    )
    expected = (ROOT / "samples" / "rms_norm" / "rms_norm.rewritten.mlir").read_bytes()
    assert run.stdout == expected
    where = subprocess.run(
        [
            str(python),
            "-c",
            "import rewriter.syntax.grammar as s, importlib.resources as r; "
            "print(r.files('rewriter.grammar') / s.GRAMMAR_FILE)",
        ],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        check=True,
    )
    assert str(environment) in where.stdout
    include = subprocess.run(
        [str(python), "-c", "import rewriter.abi as a; print(a.include_dir())"],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert include.startswith(str(environment))
    assert (Path(include) / "rewriter" / "memref.h").is_file()
    bridge = subprocess.run(
        [str(python), "-c", "import rewriter.abi as a; print(a.bridge_dir())"],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert bridge.startswith(str(environment))
    assert (Path(bridge) / "xla_ffi_bridge.c").is_file()
