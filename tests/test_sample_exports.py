"""The committed sample exports are reproducible, and show what they claim to show.

Every ``samples/NAME/export.py`` is run in a fresh interpreter from an unrelated working
directory; its stdout must equal ``samples/NAME/NAME.mlir`` byte for byte. The text depends on
the jax version (the samples were exported with jax 0.10.2) and on jax's configuration, so
``JAX_*`` and ``XLA_FLAGS`` environment variables are dropped for the run. To regenerate a
sample: ``python samples/NAME/export.py > samples/NAME/NAME.mlir``.
"""

import difflib
import importlib.metadata
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.jax, pytest.mark.slow]

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
SCRIPTS = sorted(SAMPLES.glob("*/export.py"))
EXPORTED_WITH_JAX = "0.10.2"


def committed_text(name: str) -> str:
    return (SAMPLES / name / f"{name}.mlir").read_text(encoding="utf-8")


def test_every_sample_is_found():
    names = {script.parent.name for script in SCRIPTS}
    assert {
        "rms_norm",
        "attribute_kinds",
        "two_targets",
        "while_and_private",
        "name_clash",
        "cholesky_lapack",
    } <= names


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda script: script.parent.name)
def test_export_reproduces_committed_text(script, tmp_path):
    name = script.parent.name
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAX_") and k != "XLA_FLAGS"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # leave no samples/__pycache__ behind
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    expected = (SAMPLES / name / f"{name}.mlir").read_bytes()
    if result.stdout != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.decode(errors="replace").splitlines(keepends=True),
                result.stdout.decode(errors="replace").splitlines(keepends=True),
                f"samples/{name}/{name}.mlir",
                f"python samples/{name}/export.py",
            )
        )
        pytest.fail(
            f"samples/{name}/{name}.mlir is out of date (exported with jax {EXPORTED_WITH_JAX}, "
            f"jax {importlib.metadata.version('jax')} installed); regenerate it with\n"
            f"  python samples/{name}/export.py > samples/{name}/{name}.mlir\n{diff}"
        )


def functions(text: str) -> dict[str, str]:
    """Top-level ``func.func`` bodies by symbol name (jax prints them at two spaces' indent)."""
    found = re.findall(
        r"^  func\.func \w+ @(\S+?)\(.*?\n(.*?)^  \}", text, re.MULTILINE | re.DOTALL
    )
    return dict(found)


def test_while_and_private_placements():
    text = committed_text("while_and_private")
    funcs = functions(text)
    assert set(funcs) == {"main", "halve"}
    assert "func.func private @halve(" in text

    # The `step` call sits in the `do` region of the while loop in @main.
    loop = re.search(
        r"stablehlo\.while\(.*?\n    cond \{\n(.*?)\n    \} do \{\n(.*?)\n    \}",
        funcs["main"],
        re.DOTALL,
    )
    assert loop, "no stablehlo.while in @main"
    cond_region, body_region = loop.groups()
    assert "stablehlo.custom_call @step(" in body_region
    assert "custom_call" not in cond_region
    assert text.count("stablehlo.custom_call @step(") == 1

    # The `scale` call sits in the private @halve, which @main calls twice.
    assert "stablehlo.custom_call @scale(" in funcs["halve"]
    assert text.count("stablehlo.custom_call @scale(") == 1
    assert len(re.findall(r"= call @halve\(", funcs["main"])) == 2


def test_name_clash_private_function_named_like_target():
    text = committed_text("name_clash")
    funcs = functions(text)
    assert set(funcs) == {"main", "rms_norm"}
    assert "func.func private @rms_norm(" in text
    assert "stablehlo.custom_call @rms_norm(" in funcs["rms_norm"]
    assert re.search(r"= call @rms_norm\(", funcs["main"])
