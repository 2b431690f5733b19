"""The names a shared object exports, read from its ELF dynamic symbol table.

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
_SHN_UNDEF = 0


def exported_names(path: str | Path) -> list[str]:
    """The defined symbols of ``path``'s dynamic symbol table, in table order; [] for a
    file that is no 64-bit little-endian ELF file or has no such table."""
    try:
        with open(path, "rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return _defined_dynamic_symbols(data)
    except (OSError, ValueError, struct.error):
        return []


def _defined_dynamic_symbols(data: mmap.mmap) -> list[str]:
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return []
    (section_headers,) = struct.unpack_from("<Q", data, 0x28)
    entry_size, count = struct.unpack_from("<HH", data, 0x3A)
    if entry_size != _SECTION_HEADER.size:
        return []
    sections = [
        _SECTION_HEADER.unpack_from(data, section_headers + index * entry_size)
        for index in range(count)
    ]
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
