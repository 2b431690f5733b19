"""A compile served from the cache does only what it must: it runs no tool (not
even clang's questions), imports none of the stages' modules, and remembers the BLAS it
found only while nothing that answer came from changed. Its speed is shown by
``benchmarks/compile_time.py`` (column ``cached``), not timed here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mlir_tools import logging_tools, require_tool

from rewriter.compile import blas as blas_module
from rewriter.compile.toolchain import LLVM_VERSION

ROOT = Path(__file__).resolve().parent.parent

# Products (the BLAS is looked for) and no extern (nothing to warn about).
MODULE = """\
func.func public @main(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = stablehlo.dot_general %x, %y, contracting_dims = [1] x [0]
       : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
"""

# Runs the command line in this process and prints the modules it imported beyond those
# of the interpreter's start-up (site's .pth files may import anything).
DRIVER = """\
import runpy, sys
before = set(sys.modules)
sys.argv = ["rewriter.compile", *sys.argv[1:]]
try:
    runpy.run_module("rewriter.compile", run_name="__main__", alter_sys=True)
except SystemExit as end:
    if end.code:
        raise
print("\\n".join(sorted(set(sys.modules) - before)))
"""

# What a compile served from the cache has no use for.
NOT_IMPORTED = (
    "subprocess",
    "ctypes",
    "numpy",
    "jax",
    "jaxlib",
    "iree.compiler",
    "lark",
    "cffi",
    "rewriter.compile.c_api",
    "rewriter.compile.library_calls",
    "rewriter.compile.sorts",
    "rewriter.compile.loader",
    "rewriter.emit.ffi_adapters",
    "rewriter.syntax.element_types",
)


def _logging_tools(folder: Path, log: Path) -> dict[str, str]:
    """The environment of a command line whose tools log every run (``logging_tools``)."""
    logging_tools(folder, log)
    return dict(os.environ, REWRITER_TOOL_PATH=str(folder))


def _compile(module: Path, output: Path, env: dict[str, str]) -> list[str]:
    """Compile by the command line; the modules the compile imported."""
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(module), "-o", str(output)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.iree
def test_a_cached_command_line_compile_runs_no_tool_and_imports_no_stage(tmp_path):
    module = tmp_path / "model.mlir"
    module.write_text(MODULE, encoding="utf-8")
    log = tmp_path / "tools.log"
    env = _logging_tools(tmp_path / "tools", log)
    first_output, output = tmp_path / "a" / "libmodel.so", tmp_path / "b" / "libmodel.so"
    first_output.parent.mkdir()
    output.parent.mkdir()  # the output's name is in the key, its folder is not
    first = _compile(module, first_output, env)
    assert log.read_text().count("clang") >= 2, "the first compile links"
    assert "rewriter.compile.c_api" in first  # the driver sees what a compile imports
    log.unlink()
    again = _compile(module, output, env)
    assert not log.exists(), f"a compile served from the cache ran {log.read_text()}"
    assert output.read_bytes() == first_output.read_bytes()
    imported = [name for name in NOT_IMPORTED if name in again]
    assert imported == [], "a compile served from the cache imported them"


def _fake_clang(folder: Path, libraries: Path) -> Path:
    """A "clang" whose only library folder is ``libraries``: it answers the two questions
    ``blas.system_blas`` and ``blas._consulted`` ask."""
    script = folder / "clang"
    script.write_text(
        "#!/bin/sh\n"
        'case "$1" in\n'
        f'  -print-search-dirs) echo "libraries: ={libraries}" ;;\n'
        '  -print-file-name=*) name="${1#-print-file-name=}"\n'
        f'    if [ -e "{libraries}/$name" ]; then echo "{libraries}/$name"; '
        'else echo "$name"; fi ;;\n'
        "esac\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script


def _fake_cblas(library: Path, body: str = "") -> None:
    """A library that ``blas.probe`` takes for a CBLAS (its four gemm symbols)."""
    source = library.with_suffix(".c")
    source.write_text("".join(f"void cblas_{t}gemm(void) {{ {body} }}\n" for t in "sdcz"))
    clang = require_tool(f"clang-{LLVM_VERSION}")
    subprocess.run([clang, "-shared", "-fPIC", str(source), "-o", str(library)], check=True)


@pytest.mark.toolchain
def test_the_blas_found_is_remembered_until_what_it_came_from_changes(tmp_path, monkeypatch):
    libraries = tmp_path / "lib"
    libraries.mkdir()
    clang = str(_fake_clang(tmp_path, libraries))
    asked: list[list[str]] = []
    run = subprocess.run

    def counted(command, *arguments, **options):
        asked.append(list(command))
        return run(command, *arguments, **options)

    monkeypatch.setattr(subprocess, "run", counted)
    assert blas_module.resolve_blas("auto", clang, remember=True) is None
    assert asked, "the first answer is sought"
    asked.clear()
    assert blas_module.resolve_blas("auto", clang, remember=True) is None
    assert asked == [], "the second is remembered"
    # An OpenBLAS installed where clang looks is found at once, not a remembered "none".
    built = tmp_path / "libfakecblas.so"
    _fake_cblas(built)
    (libraries / blas_module.SYSTEM_OPENBLAS).symlink_to(built)
    found = blas_module.resolve_blas("auto", clang, remember=True)
    assert found is not None and found.library == built.resolve()
    assert blas_module.resolve_blas("auto", clang, remember=True) == found
    # The link switched to another library (update-alternatives): that one.
    other = tmp_path / "libother.so"
    _fake_cblas(other)
    (libraries / blas_module.SYSTEM_OPENBLAS).unlink()
    (libraries / blas_module.SYSTEM_OPENBLAS).symlink_to(other)
    switched = blas_module.resolve_blas("auto", clang, remember=True)
    assert switched is not None and switched.library == other.resolve()
    # Without remember nothing is kept or read.
    assert blas_module.resolve_blas("auto", clang) == switched


@pytest.mark.toolchain
def test_a_blas_named_by_path_is_probed_again_when_the_file_changes(tmp_path, monkeypatch):
    library = tmp_path / "libcblas.so"
    _fake_cblas(library)
    probed: list[Path] = []
    probe = blas_module.probe

    def counted(path: Path):
        probed.append(path)
        return probe(path)

    monkeypatch.setattr(blas_module, "probe", counted)
    first = blas_module.resolve_blas(str(library), remember=True)
    assert first is not None and len(probed) == 1
    assert blas_module.resolve_blas(str(library), remember=True) == first
    assert len(probed) == 1
    _fake_cblas(library, "return;")  # another build of it: probed again
    assert blas_module.resolve_blas(str(library), remember=True) == first
    assert len(probed) == 2
