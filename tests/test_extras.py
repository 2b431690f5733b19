"""A plain ``pip install`` of the package rewrites; the runners name the extra they need.

A fresh venv (no system site packages) gets the package alone, as ``pip install
stablehlo-ffi-rewriter`` gives it (lark from the package index). The rewrite runs; the
compiled path's and IREE's command lines and Python entry points say which package is
missing and which extra installs it (``[compile]``, ``[iree]``), exit status 1, and the
command lines print no traceback.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from rewriter.compile.extras import install_hint, missing

pytestmark = [pytest.mark.toolchain("git"), pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "rms_norm" / "rms_norm.rewritten.mlir"


@pytest.fixture(scope="module")
def base_install(tmp_path_factory) -> Path:
    """The Python of a fresh venv holding this checkout's package and lark, nothing else."""
    source = tmp_path_factory.mktemp("source") / "checkout"
    tracked = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for name in tracked:
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    environment = tmp_path_factory.mktemp("base") / "venv"
    venv.EnvBuilder(with_pip=False, system_site_packages=False).create(environment)
    python = environment / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", str(source)],
        check=True,
        capture_output=True,
        timeout=900,
    )
    return python


def run(python: Path, *arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python ARGUMENTS`` with nothing of this environment on its paths."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTHONPATH", "VIRTUAL_ENV", "REWRITER_TOOL_PATH")
    }
    environment["PATH"] = f"{python.parent}:/usr/bin:/bin"
    return subprocess.run(
        [str(python), *arguments],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_base_install_has_no_runner_packages(base_install: Path, tmp_path: Path):
    probe = (
        "import importlib.util as u; "
        "print([u.find_spec(m) is None for m in ('numpy', 'cffi', 'iree', 'jax')])"
    )
    done = run(base_install, "-c", probe, cwd=tmp_path)
    assert done.stdout.strip() == "[True, True, True, True]", done.stderr
    rewrite = run(
        base_install, "-m", "rewriter", str(SAMPLE.with_name("rms_norm.mlir")), cwd=tmp_path
    )
    assert rewrite.returncode == 0, rewrite.stderr
    assert rewrite.stdout == SAMPLE.read_text()


@pytest.mark.parametrize(
    ("runner", "output", "extra"),
    [("rewriter.compile", "lib.so", "compile"), ("rewriter.iree", "m.vmfb", "iree")],
)
def test_command_lines_name_their_extra(base_install: Path, tmp_path: Path, runner, output, extra):
    done = run(base_install, "-m", runner, str(SAMPLE), "-o", output, cwd=tmp_path)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr == (
        f"{SAMPLE}: error: iree.compiler is not installed: "
        f"pip install 'stablehlo-ffi-rewriter[{extra}]'\n"
    )
    assert not (tmp_path / output).exists()


@pytest.mark.parametrize(
    ("code", "message"),
    [
        (
            "from rewriter.compile import load; load('lib.so')",
            "MissingDependency: numpy is not installed: "
            "pip install 'stablehlo-ffi-rewriter[compile]'",
        ),
        (
            "import rewriter.compile as c; c.compile_module('m.mlir', 'lib.so')",
            "ToolchainError: iree.compiler is not installed: "
            "pip install 'stablehlo-ffi-rewriter[compile]'",
        ),
        (
            "from rewriter.iree import load; load('m.vmfb', imports={})",
            "MissingDependency: numpy is not installed: pip install 'stablehlo-ffi-rewriter[iree]'",
        ),
        (
            "from rewriter.compile import jaxlib_handlers; jaxlib_handlers()",
            "MissingDependency: jaxlib is not installed: pip install 'stablehlo-ffi-rewriter[jax]'",
        ),
    ],
)
def test_python_entry_points_name_the_extra(base_install: Path, tmp_path: Path, code, message):
    done = run(base_install, "-c", code, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.rstrip().splitlines()[-1].endswith(message), done.stderr


def test_the_messages_are_made_in_one_place():
    assert missing("cffi", "compile") == f"cffi is not installed: {install_hint('compile')}"
    assert missing("jaxlib", "compile") == f"jaxlib is not installed: {install_hint('jax')}"
    assert missing("iree.runtime", "compile").endswith("[iree]'")
