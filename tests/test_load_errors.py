"""Both runners raise one LoadError, importable under either runner's name."""

from __future__ import annotations

import pytest


def test_compile_and_iree_share_one_load_error():
    import rewriter.compile
    import rewriter.iree
    from rewriter.compile.load_errors import LoadError

    assert rewriter.compile.LoadError is LoadError
    assert rewriter.iree.LoadError is LoadError


def test_a_compiled_module_without_metadata_is_a_load_error(tmp_path):
    """The compiled path's loader raises it: a file that is no shared object."""
    from rewriter.compile import LoadError, load

    library = tmp_path / "not_a_library.so"
    library.write_bytes(b"not ELF")
    with pytest.raises(LoadError, match="cannot load .*not_a_library.so"):
        load(library)
