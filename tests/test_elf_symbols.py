"""The ELF dynamic symbol table reader that lets ``load`` find a library's prefix."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from rewriter.compile.elf_symbols import exported_names, needed_libraries


@pytest.mark.toolchain("gcc")
def test_the_defined_dynamic_symbols_are_what_nm_lists(tmp_path: Path):
    source = tmp_path / "lib.c"
    source.write_text(
        "#include <math.h>\n"
        "int visible_one(int x) { return x + 1; }\n"
        'const char visible_table[] = "t";\n'
        "static int hidden(int x) { return x * 2; }\n"
        '__attribute__((visibility("hidden"))) int also_hidden(void) { return hidden(1); }\n'
        "double uses_libm(double x) { return sin(x) + also_hidden(); }\n"
    )
    library = tmp_path / "lib.so"
    subprocess.run(["gcc", "-shared", "-fPIC", str(source), "-o", str(library), "-lm"], check=True)
    listing = subprocess.run(
        ["nm", "-D", "--defined-only", "--format=just-symbols", str(library)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    names = exported_names(library)
    assert sorted(names) == sorted(listing)
    assert {"visible_one", "visible_table", "uses_libm"} <= set(names)
    assert "sin" not in names and "also_hidden" not in names  # undefined; hidden
    dynamic = subprocess.run(
        ["readelf", "-d", str(library)], capture_output=True, text=True, check=True
    ).stdout
    needed = [
        line.split("[", 1)[1].rstrip("]") for line in dynamic.splitlines() if "(NEEDED)" in line
    ]
    assert needed_libraries(library) == needed
    assert "libm.so.6" in needed


@pytest.mark.parametrize(
    "content", [b"", b"\x7fEL", b"not an ELF file at all", b"\x7fELF\x01\x01" + bytes(60)]
)
def test_a_file_that_is_no_64_bit_elf_file_has_no_names(tmp_path: Path, content: bytes):
    path = tmp_path / "x.so"
    path.write_bytes(content)
    assert exported_names(path) == []
    assert needed_libraries(path) == []


def test_a_missing_file_has_no_names(tmp_path: Path):
    assert exported_names(tmp_path / "missing.so") == []
