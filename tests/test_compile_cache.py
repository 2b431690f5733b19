"""The compile cache: a module compiled again with the same options and tools is installed
from the cache, no tool running; a change of anything the key covers compiles again; a
cache that cannot be written is passed by. Each test has a cache of its own
(``conftest._own_compile_cache``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from mlir_tools import logging_tools, require_tool

from rewriter.compile import blas as blas_module
from rewriter.compile import cache as compile_cache
from rewriter.compile import compile_module, load, toolchain
from rewriter.compile.toolchain import LLVM_VERSION, PIPELINE_TOOLS

ROOT = Path(__file__).resolve().parent.parent

MODULE = """\
func.func public @main(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = stablehlo.dot_general %x, %y, contracting_dims = [1] x [0]
       : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = stablehlo.add %0, %x : tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}
"""
INPUTS = [np.arange(16, dtype=np.float32).reshape(4, 4), np.eye(4, dtype=np.float32) * 3]


def expected(x, y):
    return x @ y + x


@pytest.fixture
def tool_runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tools the compiled path runs (stages, link) while the test runs, by name."""
    runs: list[str] = []
    run = toolchain._run

    def counted(stage: str, command: list[str]) -> None:
        runs.append(stage)
        run(stage, command)

    monkeypatch.setattr(toolchain, "_run", counted)
    return runs


def _library(tmp_path: Path, folder: str, name: str = "libmodel.so") -> Path:
    (tmp_path / folder).mkdir(exist_ok=True)
    return tmp_path / folder / name


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.iree
def test_a_second_compile_is_served_from_the_cache_and_runs_alike(tmp_path, tool_runs):
    first, second = _library(tmp_path, "a"), _library(tmp_path, "b")
    entries = compile_module(MODULE, first)
    assert "link" in tool_runs and "stablehlo-to-linalg" in tool_runs
    tool_runs.clear()
    again = compile_module(MODULE, second)
    assert tool_runs == []  # no stage, no link
    assert again == entries
    assert second.read_bytes() == first.read_bytes()
    assert os.access(second, os.X_OK)
    got = load(second).main(*INPUTS)
    np.testing.assert_array_equal(got, expected(*INPUTS))
    np.testing.assert_array_equal(got, load(first).main(*INPUTS))


def _fake_cblas(folder: Path, body: str) -> Path:
    """A library that ``blas.probe`` takes for a CBLAS (its four gemm symbols)."""
    source = folder / "fake_cblas.c"
    source.write_text(
        "".join(f"void cblas_{t}gemm(void) {{ {body} }}\n" for t in "sdcz"), encoding="utf-8"
    )
    library = folder / "libfakecblas.so"
    clang = require_tool(f"clang-{LLVM_VERSION}")
    subprocess.run([clang, "-shared", "-fPIC", str(source), "-o", str(library)], check=True)
    return library


def _tool_folder(tmp_path: Path) -> Path:
    """A $REWRITER_TOOL_PATH folder whose tools are links to the ones found now."""
    folder = tmp_path / "tools"
    folder.mkdir(exist_ok=True)
    for name in PIPELINE_TOOLS:
        link = folder / name
        if not link.exists():
            link.symlink_to(toolchain.find_tool(name))
    return folder


def _change_module(tmp_path, monkeypatch):
    return MODULE.replace("stablehlo.add", "stablehlo.subtract"), {}


def _change_blas(tmp_path, monkeypatch):
    return MODULE, {"blas": None}


def _change_cpu(tmp_path, monkeypatch):
    return MODULE, {"target_cpu": "generic"}


def _change_header(tmp_path, monkeypatch):
    return MODULE, {"header": tmp_path / "model.h"}


def _change_prefix(tmp_path, monkeypatch):
    return MODULE, {"prefix": "other_"}


def _change_include_dir(tmp_path, monkeypatch):
    return MODULE, {"include_dir": tmp_path / "include"}


def _change_bridge(tmp_path, monkeypatch):
    import importlib.util

    if importlib.util.find_spec("jaxlib") is None:
        pytest.skip("needs jaxlib's XLA FFI headers: pip install jax")
    return MODULE, {"ffi_bridge": True}


def _change_host_cpu(tmp_path, monkeypatch):
    # What -march=native stands for: another CPU is another library.
    monkeypatch.setattr(compile_cache, "host_cpu", lambda: "another CPU")
    return MODULE, {}


def _change_rewriter(tmp_path, monkeypatch):
    monkeypatch.setattr(compile_cache, "package_identity", lambda: "other code")
    return MODULE, {}


def _change_iree(tmp_path, monkeypatch):
    monkeypatch.setattr(compile_cache, "iree_compiler_identity", lambda: "IREE 9.9")
    return MODULE, {}


def _change_tool(tmp_path, monkeypatch):
    folder = _tool_folder(tmp_path)
    translate = folder / f"mlir-translate-{LLVM_VERSION}"
    real = os.path.realpath(translate)
    translate.unlink()
    translate.write_text(f'#!/bin/sh\nexec "{real}" "$@"\n', encoding="utf-8")
    translate.chmod(0o755)
    return MODULE, {}


def _change_link_item(tmp_path, monkeypatch):
    library = tmp_path / "kernels" / "libkernels.so"
    time.sleep(0.01)  # another modification time, whatever the file system's resolution
    _build_kernels(library, "int rw_test_kernel(void) { return 2; }\n")
    return MODULE, {}


def _build_kernels(library: Path, source: str) -> None:
    library.parent.mkdir(exist_ok=True)
    (library.parent / "kernels.c").write_text(source, encoding="utf-8")
    clang = require_tool(f"clang-{LLVM_VERSION}")
    command = [clang, "-shared", "-fPIC", str(library.parent / "kernels.c"), "-o", str(library)]
    subprocess.run(command, check=True)


def _change_blas_library(tmp_path, monkeypatch):
    time.sleep(0.01)
    _fake_cblas(tmp_path / "blas", "return;")
    return MODULE, {}


def _change_threads(tmp_path, monkeypatch):
    from rewriter.compile.parallel_loops import default_threads

    return MODULE, {"threads": 2 if default_threads() == 1 else 1}


def _change_output_name(tmp_path, monkeypatch):
    return MODULE, {"output_name": "libother.so"}


CHANGES = {
    "module text": _change_module,
    "blas": _change_blas,
    "target cpu": _change_cpu,
    "what native is": _change_host_cpu,
    "header": _change_header,
    "prefix": _change_prefix,
    "include dir": _change_include_dir,
    "ffi bridge": _change_bridge,
    "output name": _change_output_name,
    "threads": _change_threads,
    "a tool": _change_tool,
    "a link item's content": _change_link_item,
    "the blas library's content": _change_blas_library,
    "the rewriter's code": _change_rewriter,
    "the iree compiler": _change_iree,
}


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.iree
@pytest.mark.parametrize("change", list(CHANGES))
def test_a_change_of_a_key_input_compiles_again(change, tmp_path, tool_runs, monkeypatch):
    options: dict[str, object] = {}
    if change == "a tool":
        monkeypatch.setenv(toolchain.TOOL_PATH_VARIABLE, str(_tool_folder(tmp_path)))
    if change == "a link item's content":
        library = tmp_path / "kernels" / "libkernels.so"
        _build_kernels(library, "int rw_test_kernel(void) { return 1; }\n")
        options["link"] = [str(library)]
    if change == "the blas library's content":
        (tmp_path / "blas").mkdir()
        options["blas"] = str(_fake_cblas(tmp_path / "blas", ""))
    output = _library(tmp_path, "out")
    compile_module(MODULE, output, **options)
    tool_runs.clear()
    compile_module(MODULE, output, **options)
    assert tool_runs == [], "the same compile again is served from the cache"
    text, changed = CHANGES[change](tmp_path, monkeypatch)
    name = str(changed.pop("output_name", output.name))
    compile_module(text, output.with_name(name), **{**options, **changed})
    assert "link" in tool_runs


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.iree
def test_the_module_file_name_counts_only_for_the_header_that_names_it(tmp_path, tool_runs):
    output = _library(tmp_path, "out")
    compile_module(MODULE, output, filename="one.mlir")
    tool_runs.clear()
    compile_module(MODULE, output, filename="two.mlir")
    assert tool_runs == []
    header = tmp_path / "out" / "model.h"
    compile_module(MODULE, output, filename="one.mlir", header=header)
    assert "one.mlir" in header.read_text()
    tool_runs.clear()
    compile_module(MODULE, output, filename="two.mlir", header=header)
    assert "link" in tool_runs
    assert "two.mlir" in header.read_text()


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.iree
def test_keep_temps_runs_every_stage(tmp_path, tool_runs):
    output = _library(tmp_path, "out")
    compile_module(MODULE, output)
    tool_runs.clear()
    compile_module(MODULE, output, keep_temps=tmp_path / "temps")
    assert "link" in tool_runs
    assert (tmp_path / "temps" / "6-translate.ll").is_file()


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.iree
def test_cache_false_compiles_and_stores_nothing(tmp_path, tool_runs):
    output = _library(tmp_path, "out")
    compile_module(MODULE, output, cache=False)
    assert not compile_cache.cache_dir().exists()
    compile_module(MODULE, output)
    tool_runs.clear()
    compile_module(MODULE, output, cache=False)
    assert "link" in tool_runs


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.iree
def test_a_cache_that_cannot_be_written_is_passed_by(tmp_path, tool_runs, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(blocker / "cache"))
    output = _library(tmp_path, "out")
    for _ in range(2):
        tool_runs.clear()
        compile_module(MODULE, output)
        assert "link" in tool_runs
        np.testing.assert_array_equal(load(output).main(*INPUTS), expected(*INPUTS))


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.iree
def test_a_hit_gives_the_compiles_warnings_again(tmp_path, tool_runs, monkeypatch):
    monkeypatch.setattr(blas_module, "SYSTEM_OPENBLAS", "libno-such-blas.so.0")
    output = _library(tmp_path, "out")
    for _ in range(2):
        tool_runs.clear()
        with pytest.warns(UserWarning, match=r"no system OpenBLAS \(libno-such-blas.so.0\)"):
            compile_module(MODULE, output)
    assert tool_runs == []
    np.testing.assert_array_equal(load(output).main(*INPUTS), expected(*INPUTS))


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.iree
def test_a_hit_installs_the_header_and_the_include_files(tmp_path, tool_runs):
    first, second = _library(tmp_path, "a"), _library(tmp_path, "b")
    compile_module(MODULE, first, header=tmp_path / "a" / "model.h", include_dir=tmp_path / "a")
    tool_runs.clear()
    include = tmp_path / "b" / "include"
    compile_module(MODULE, second, header=tmp_path / "b" / "model.h", include_dir=include)
    assert tool_runs == []
    assert (tmp_path / "b" / "model.h").read_text() == (tmp_path / "a" / "model.h").read_text()
    assert (include / "rewriter" / "memref.h").is_file()


def _logging_tools(tmp_path: Path) -> tuple[Path, Path]:
    """A $REWRITER_TOOL_PATH folder of scripts that log their arguments, then run the tool."""
    folder, log = tmp_path / "logging-tools", tmp_path / "tools.log"
    logging_tools(folder, log)
    return folder, log


def _stages_run(log: Path) -> list[list[str]]:
    """The logged runs that are stages or the link (not clang's questions, -print-...)."""
    if not log.exists():
        return []
    runs = [line.split() for line in log.read_text().splitlines()]
    return [run for run in runs if not run[1].startswith("-print-")]


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.iree
def test_the_command_line_uses_the_cache_unless_told_not_to(tmp_path):
    folder, log = _logging_tools(tmp_path)
    module = tmp_path / "model.mlir"
    module.write_text(MODULE, encoding="utf-8")
    output = tmp_path / "libmodel.so"
    env = dict(os.environ, REWRITER_TOOL_PATH=str(folder))

    def run(*extra: str) -> int:
        done = subprocess.run(
            [sys.executable, "-m", "rewriter.compile", str(module), "-o", str(output), *extra],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return len(_stages_run(log))

    compiled = run()
    assert compiled >= 6, log.read_text()  # five stages in tools and the link
    assert run() == compiled  # served from the cache: no tool ran
    assert run("--no-cache") == 2 * compiled
    np.testing.assert_array_equal(load(output).main(*INPUTS), expected(*INPUTS))


# The cache's own parts, without the toolchain.


def test_the_cache_folder_is_the_variable_else_xdg_else_home(tmp_path, monkeypatch):
    monkeypatch.setenv("REWRITER_CACHE_DIR", str(tmp_path / "chosen"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert compile_cache.cache_dir() == tmp_path / "chosen"
    monkeypatch.delenv("REWRITER_CACHE_DIR")
    assert compile_cache.cache_dir() == tmp_path / "xdg" / "rewriter"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert compile_cache.cache_dir() == tmp_path / "home" / ".cache" / "rewriter"


def _entry_file(tmp_path: Path, text: str) -> Path:
    source = tmp_path / f"source-{len(text)}"
    source.write_text(text, encoding="utf-8")
    return source


def _looked_up(key: str) -> compile_cache.Hit | None:
    with compile_cache.lookup(key) as hit:
        return hit


def test_an_entry_is_stored_whole_and_the_first_one_stays(tmp_path):
    compile_cache.store("k", {"library": _entry_file(tmp_path, "first")}, "[]", [])
    compile_cache.store("k", {"library": _entry_file(tmp_path, "second!")}, "[]", [])
    with compile_cache.lookup("k") as hit:
        assert hit is not None
        assert hit.files["library"].read_text() == "first"
    folder = compile_cache.cache_dir() / "compile"
    assert sorted(p.name for p in folder.iterdir() if not p.name.startswith(".hit-")) == ["k"]


def test_a_store_that_fails_leaves_no_entry(tmp_path):
    compile_cache.store("k", {"library": tmp_path / "missing"}, "[]", [])
    assert _looked_up("k") is None
    folder = compile_cache.cache_dir() / "compile"
    assert list(folder.iterdir()) == []  # no half entry, no temporary folder


def test_an_entry_without_its_index_is_no_hit(tmp_path):
    entry = compile_cache.cache_dir() / "compile" / "k"
    entry.mkdir(parents=True)
    (entry / "library").write_text("half", encoding="utf-8")
    assert _looked_up("k") is None
    (entry / "entry.json").write_text("{not json", encoding="utf-8")
    assert _looked_up("k") is None


def test_the_least_recently_used_entries_go_first(tmp_path):
    for key in ("old", "used", "new"):
        compile_cache.store(key, {"library": _entry_file(tmp_path, "x" * 100)}, "[]", [])
    folder = compile_cache.cache_dir() / "compile"
    now = time.time()
    for age, key in ((300, "old"), (200, "used"), (100, "new")):
        os.utime(folder / key, (now - age, now - age))
    _looked_up("used")  # used now
    size = sum(f.stat().st_size for f in (folder / "new").iterdir())
    compile_cache.prune(2 * size)  # two entries' worth
    assert not (folder / "old").exists()
    assert (folder / "used").exists() and (folder / "new").exists()
    index = json.loads((folder / "used" / "entry.json").read_text())
    assert index["files"] == ["library"]


def test_clear_removes_every_entry(tmp_path):
    compile_cache.store("k", {"library": _entry_file(tmp_path, "x")}, "[]", [])
    compile_cache.clear()
    assert _looked_up("k") is None


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.iree
def test_the_packages_c_files_are_compiled_once_for_all_modules(tmp_path, monkeypatch):
    """abi/blas_calls.c, compiled alike for every module with products, is compiled by the
    first compile only; without the cache, every time."""
    compiled: list[str] = []
    together = toolchain._run_together

    def recorded(stage: str, commands: list[list[str]]) -> None:
        compiled.extend(Path(command[command.index("-c") + 1]).name for command in commands)
        together(stage, commands)

    monkeypatch.setattr(toolchain, "_run_together", recorded)
    compile_module(MODULE, _library(tmp_path, "a"))
    assert "blas_calls.c" in compiled and "6-translate.ll" in compiled
    compiled.clear()
    other = MODULE.replace("stablehlo.add", "stablehlo.subtract")
    output = _library(tmp_path, "b")
    compile_module(other, output)
    assert compiled == ["6-translate.ll", "entries.c"]
    x, y = INPUTS
    np.testing.assert_array_equal(load(output).main(x, y), x @ y - x)
    compiled.clear()
    compile_module(other, _library(tmp_path, "c"), cache=False)
    assert "blas_calls.c" in compiled


@pytest.mark.slow
@pytest.mark.iree
def test_rewriter_iree_compiles_are_cached_too(tmp_path, monkeypatch):
    from rewriter.iree import build as iree_build
    from rewriter.iree import load as iree_load

    runs: list[str] = []
    run = iree_build._run

    def counted(command: list[str]):
        runs.append(Path(command[0]).name)
        return run(command)

    monkeypatch.setattr(iree_build, "_run", counted)
    module = tmp_path / "model.mlir"
    module.write_text(MODULE, encoding="utf-8")
    data, signatures = iree_build.compile_module(module, tmp_path / "a.vmfb")
    assert runs == ["iree-compile"]
    runs.clear()
    assert iree_build.compile_module(module, tmp_path / "b.vmfb") == (data, signatures)
    assert runs == []
    assert (tmp_path / "b.vmfb").read_bytes() == data
    got = iree_load(tmp_path / "b.vmfb", imports={}).main(*INPUTS)
    np.testing.assert_array_equal(got, expected(*INPUTS))
    changes = [
        {"cpu": "generic"},
        {"extra_args": ("--iree-llvmcpu-target-cpu=generic",)},
        {"cache": False},
    ]
    for change in changes:
        runs.clear()
        iree_build.compile_module(module, **change)  # type: ignore[arg-type]
        assert runs == ["iree-compile"], change
    runs.clear()
    monkeypatch.setattr(compile_cache, "host_cpu", lambda: "another CPU")
    iree_build.compile_module(module)
    assert runs == ["iree-compile"]
    runs.clear()
    module.write_text(MODULE.replace("stablehlo.add", "stablehlo.subtract"), encoding="utf-8")
    iree_build.compile_module(module)
    assert runs == ["iree-compile"]
