"""The IREE path compiles matrix products with data tiling, but where IREE cannot.

With ``--iree-dispatch-creation-data-tiling`` the operands of a product are laid out in
tiles by dispatches of their own (``..._encode_...``): the block of ``benchmarks/speed.py``
took 14.6 ms of CPU without it, 8.0 with it. IREE 3.13 cannot compile a complex product
that way ("'vector.transfer_read' op requires valid padding vector elemental type"), so a
module with complex elements goes without (``tests/test_op_coverage.py`` runs one), and so
does a module of dynamic shape (``tests/test_dynamic_broadcasts.py``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rewriter
from rewriter.iree import compile_module


def _vmfb(tmp_path: Path, dtype) -> bytes:
    matrix = np.ones((64, 64), dtype)
    module = tmp_path / "product.mlir"
    text = rewriter.export(lambda a, b: a @ b, matrix, matrix).text
    module.write_text(rewriter.rewrite(text, abi="iree").text)
    data, _ = compile_module(module, cache=False)
    return data


@pytest.mark.slow
@pytest.mark.iree
@pytest.mark.jax
def test_a_real_product_is_compiled_with_data_tiling(tmp_path):
    assert b"_encode_64x64xf32" in _vmfb(tmp_path, np.float32)


@pytest.mark.slow
@pytest.mark.iree
@pytest.mark.jax
def test_a_complex_product_is_compiled_without(tmp_path):
    assert b"_encode_" not in _vmfb(tmp_path, np.complex64)
