"""`python -m rewriter.compile`: stages, kept temporaries, and clear failures."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rewriter.compile.link_items import joined_link_values, link_arguments, link_problem

ROOT = Path(__file__).resolve().parent.parent
RMS_NORM = ROOT / "samples" / "rms_norm" / "rms_norm.rewritten.mlir"
RMS_NORM_ORIGINAL = ROOT / "samples" / "rms_norm" / "rms_norm.mlir"


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
        "entries.c",  # the C entries (float mode) and the metadata
        "library.so",  # the link's output, copied to -o in one rename
        "objects",  # each input's object, compiled at once, linked into library.so
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
        "rw_model_metadata",
    }


# ---------------------------------------------------------------- the output, and only it


def kernel_defining_rms_norm(folder: Path) -> Path:
    """A library that defines ``_mlir_ciface_rms_norm`` (as a kernel of the C contract
    would), built with clang: what a --link library gives the module."""
    source = folder / "k.c"
    source.write_text("void _mlir_ciface_rms_norm(void *result, void *x, float eps) {}\n")
    library = folder / "libk.so"
    subprocess.run(
        ["clang-22", "-shared", "-fPIC", str(source), "-o", str(library)],
        check=True,
        cwd=folder,
    )
    source.unlink()
    return library


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.iree
def test_nothing_is_written_beside_the_output_and_the_old_one_is_replaced(tmp_path: Path):
    """The version script went to ``OUT.exports``, overwriting and then deleting a file of
    that name. Now the folder holds the old files but the output, which is the new one."""
    library = tmp_path / "libmodel.so"
    library.write_bytes(b"OLD")
    beside = tmp_path / "libmodel.so.exports"
    beside.write_text("the user's own file\n")
    run = compile_cli(str(RMS_NORM), "-o", str(library))
    assert run.returncode == 0, run.stderr
    assert beside.read_text() == "the user's own file\n"
    assert sorted(os.listdir(tmp_path)) == ["libmodel.so", "libmodel.so.exports"]
    assert "_mlir_ciface_rw_entry_main" in exported_symbols(library)


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.iree
def test_a_failed_compile_leaves_the_old_output(tmp_path: Path):
    library = tmp_path / "libmodel.so"
    library.write_bytes(b"OLD")
    run = compile_cli(str(RMS_NORM), "-o", str(library), "--link", "-lrewriter_no_such_lib")
    assert run.returncode == 1
    assert "cannot find -lrewriter_no_such_lib" in run.stderr and "Traceback" not in run.stderr
    assert library.read_bytes() == b"OLD"
    assert os.listdir(tmp_path) == ["libmodel.so"]


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.iree
@pytest.mark.parametrize("runner", ["rewriter.compile", "rewriter.iree"])
def test_sigterm_during_a_compile_removes_its_work_and_keeps_the_old_output(
    tmp_path: Path, runner: str
):
    """``timeout`` and CI runners send SIGTERM: the tool being run is killed, the temporary
    folder removed, the output left as it was, and the status is 143."""
    work = tmp_path / "tmp"
    work.mkdir()
    output = tmp_path / "out"
    output.write_bytes(b"OLD")
    module = tmp_path / "m.mlir"
    if runner == "rewriter.iree":
        rewrite = [sys.executable, "-m", "rewriter", "--abi", "iree", str(RMS_NORM_ORIGINAL)]
        module.write_bytes(subprocess.run(rewrite, cwd=ROOT, capture_output=True).stdout)
    else:
        module.write_bytes(RMS_NORM.read_bytes())
    process = subprocess.Popen(
        [sys.executable, "-m", runner, str(module), "-o", str(output)],
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(work)},
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not any(work.rglob("*")) and time.monotonic() < deadline:
        time.sleep(0.01)  # until the work folder has something in it
    assert process.poll() is None, process.stderr.read()
    process.send_signal(signal.SIGTERM)
    stderr = process.stderr.read()
    assert process.wait(timeout=120) == 143, stderr
    assert "Traceback" not in stderr
    # (lark keeps its grammar cache in the temporary folder: a cache, not a leftover)
    assert [path for path in work.iterdir() if not path.name.startswith(".lark_cache")] == []
    assert output.read_bytes() == b"OLD"
    assert sorted(os.listdir(tmp_path)) == ["m.mlir", "out", "tmp"]


# ---------------------------------------------------------------- --link; externs nothing serves

UNSERVED = (
    "warning: @rms_norm has an XLA FFI description (rewriter.xla_ffi) but no --link library "
    "defines it: pass --ffi-bridge"
)


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.toolchain("nm")
@pytest.mark.iree
def test_a_described_extern_that_nothing_serves_is_a_warning(tmp_path: Path):
    run = compile_cli(str(RMS_NORM), "-o", str(tmp_path / "lib.so"))
    assert run.returncode == 0, run.stderr
    assert f"{RMS_NORM}: {UNSERVED}" in run.stderr


@pytest.mark.slow
@pytest.mark.toolchain
@pytest.mark.toolchain("nm")
@pytest.mark.iree
@pytest.mark.parametrize(
    "link",
    [["--link", "{lib}"], ["--link", "-lk"], ["--link=-lk"], ["--link", "k"], ["--ffi-bridge"]],
    ids=["path", "dash_l", "equals_dash_l", "bare_name", "ffi_bridge"],
)
def test_a_link_library_or_the_bridge_that_serves_the_externs_silences_it(tmp_path: Path, link):
    """``--link`` takes what a C programmer would write, ``-lk`` (also as the option's next
    argument), ``k`` or a path; a -l name is found where the linker finds it (here
    ``$LIBRARY_PATH``), and the library's symbols say that it serves the extern."""
    library = kernel_defining_rms_norm(tmp_path)
    arguments = [argument.replace("{lib}", str(library)) for argument in link]
    env = {**os.environ, "LIBRARY_PATH": str(tmp_path)}
    run = compile_cli(str(RMS_NORM), "-o", str(tmp_path / "lib.so"), *arguments, env=env)
    assert run.returncode == 0, run.stderr
    assert "warning" not in run.stderr
    needed = subprocess.run(
        ["readelf", "-d", str(tmp_path / "lib.so")], capture_output=True, text=True, check=True
    ).stdout
    assert ("libk.so" in needed) == (link != ["--ffi-bridge"])


@pytest.mark.parametrize(
    ("item", "arguments"),
    [
        ("-lfoo", ["-lfoo"]),
        ("foo", ["-lfoo"]),
        ("-l:libfoo.so.1", ["-l:libfoo.so.1"]),
        ("m", ["-lm"]),
    ],
)
def test_link_items_that_name_a_library(item: str, arguments: list[str]):
    assert link_problem(item) is None
    assert link_arguments(item) == arguments


def test_a_link_path_is_linked_by_its_absolute_path_with_an_rpath(tmp_path: Path, monkeypatch):
    (tmp_path / "libk.so").write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    for item in ("libk.so", "./libk.so", str(tmp_path / "libk.so")):
        assert link_problem(item) is None
        assert link_arguments(item) == [str(tmp_path / "libk.so"), f"-Wl,-rpath,{tmp_path}"]
    for missing in ("./nothere.so", "libnothere.so", "lib/x.a", "libz.so.1"):
        assert link_problem(missing) == f"--link {missing}: no such file"
    assert link_problem("-l") == "--link '-l' names no library"


def test_link_values_that_start_with_a_dash_are_the_options_values():
    assert joined_link_values(["m.mlir", "--link", "-lfoo", "-o", "x.so", "--link", "bar"]) == [
        "m.mlir",
        "--link=-lfoo",
        "-o",
        "x.so",
        "--link=bar",
    ]
    assert joined_link_values(["--", "--link", "-lfoo"]) == ["--", "--link", "-lfoo"]
