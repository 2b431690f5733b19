"""Rules of the test suite itself, in pyproject.toml: held by running pytest on a test
that breaks each one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_parametrisation_over_an_empty_glob_fails(tmp_path: Path):
    """``sorted(folder.glob("*.mlir"))`` that finds nothing would otherwise skip, silently."""
    (tmp_path / "test_glob.py").write_text(
        "from pathlib import Path\n"
        "import pytest\n"
        "@pytest.mark.parametrize('path', sorted(Path(__file__).parent.glob('*.none')))\n"
        "def test_each(path):\n"
        "    assert path.exists()\n"
    )
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c",
         str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path), str(tmp_path)],
        capture_output=True,
        text=True,
    )  # fmt: skip
    assert run.returncode != 0
    assert "Empty parameter set" in run.stdout + run.stderr
