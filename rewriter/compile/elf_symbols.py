"""The names a shared object exports, and the libraries it needs, read from its ELF file.

``load`` needs them for one thing: a library compiled with the C API (``--header``,
``--prefix``) exports every name under its prefix, what ``load`` reads included
(``Pmodel_metadata``...), and the prefix is not written anywhere else. The table is read
from the file, without loading it: ``dlopen`` cannot list a library's symbols.

Only the ELF files ``load`` can open here are read (64-bit, little-endian: x86-64 and
aarch64 Linux); any other file gives no names.
"""

from __future__ import annotations

import mmap
import struct
from pathlib import Path

_SECTION_HEADER = struct.Struct("<IIQQQQIIQQ")  # Elf64_Shdr
_SYMBOL = struct.Struct("<IBBHQQ")  # Elf64_Sym
_SHT_DYNSYM = 11
_SHT_DYNAMIC = 6
_SHN_UNDEF = 0
_DT_NEEDED = 1
_DYNAMIC_ENTRY = struct.Struct("<qQ")  # Elf64_Dyn


def exported_names(path: str | Path) -> list[str]:
    """The defined symbols of ``path``'s dynamic symbol table, in table order; [] for a
    file that is no 64-bit little-endian ELF file or has no such table."""
    try:
        with open(path, "rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return _defined_dynamic_symbols(data)
    except (OSError, ValueError, struct.error):
        return []


def needed_libraries(path: str | Path) -> list[str]:
    """The sonames ``path`` names as needed (``DT_NEEDED``, what ``readelf -d`` lists as
    NEEDED), in order; [] for a file that is no 64-bit little-endian ELF file."""
    try:
        with open(path, "rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
            sections = _sections(data)
            names = []
            for _name, kind, _flags, _address, offset, size, link, *_ in sections:
                if kind != _SHT_DYNAMIC or link >= len(sections):
                    continue
                strings = sections[link][4]
                for at in range(offset, offset + size, _DYNAMIC_ENTRY.size):
                    tag, value = _DYNAMIC_ENTRY.unpack_from(data, at)
                    if tag == _DT_NEEDED:
                        end = data.find(b"\0", strings + value)
                        names.append(data[strings + value : end].decode("utf-8", "replace"))
            return names
    except (OSError, ValueError, struct.error):
        return []


def _sections(data: mmap.mmap) -> list[tuple]:
    """The section headers of a 64-bit little-endian ELF file; [] for any other file."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return []
    (section_headers,) = struct.unpack_from("<Q", data, 0x28)
    entry_size, count = struct.unpack_from("<HH", data, 0x3A)
    if entry_size != _SECTION_HEADER.size:
        return []
    return [
        _SECTION_HEADER.unpack_from(data, section_headers + index * entry_size)
        for index in range(count)
    ]


def _defined_dynamic_symbols(data: mmap.mmap) -> list[str]:
    sections = _sections(data)
    for _name, kind, _flags, _address, offset, size, link, _info, _align, _entsize in sections:
        if kind != _SHT_DYNSYM or link >= len(sections):
            continue
        strings = sections[link][4]
        names = []
        for at in range(offset + _SYMBOL.size, offset + size, _SYMBOL.size):  # 0 is null
            name, _info_byte, _other, section, _value, _size = _SYMBOL.unpack_from(data, at)
            if section != _SHN_UNDEF:
                end = data.find(b"\0", strings + name)
                names.append(data[strings + name : end].decode("utf-8", "replace"))
        return names
    return []
