"""Which driver ``rewriter.iree.load`` picks when it is not told (rewriter/iree/drivers.py):
``local-sync`` for a module whose estimated work a call (rewriter/iree/work.py) is under
``LARGE_WORK``, ``local-task`` from it and for dynamic shapes; a ``.vmfb`` by the estimate
``compile_module`` recorded in it."""

from __future__ import annotations

import numpy as np
import pytest

import rewriter
from rewriter.iree import compile_module, load
from rewriter.iree.build import vmfb_attributes
from rewriter.iree.drivers import LARGE_WORK, WORK_KEY, driver_for, recorded_work
from rewriter.iree.work import estimated_work


def plus_one(x):
    return x + 1


def product(a, b):
    return a @ b


def rewritten(tmp_path, function, *arguments):
    path = tmp_path / f"{function.__name__}.iree.mlir"
    exported = rewriter.export(function, *arguments).original
    path.write_text(rewriter.rewrite(exported, abi="iree").text)
    return path


def module(*lines: str, arguments: str = "") -> str:
    body = "\n".join(f"    {line}" for line in lines)
    return f"module {{\n  func.func public @main({arguments}) {{\n{body}\n  }}\n}}\n"


@pytest.mark.parametrize(
    ("text", "work"),
    [
        # an elementwise op: the elements of its largest tensor
        (module("%0 = stablehlo.add %a, %b : tensor<32x32xf32>"), 1024),
        # f64 elements count twice, complex<f64> four times
        (module("%0 = stablehlo.add %a, %b : tensor<8xf64>"), 16),
        (module("%0 = stablehlo.add %a, %b : tensor<8xcomplex<f64>>"), 32),
        # a reduction: its operand
        (
            module(
                "%0 = stablehlo.reduce(%a init: %c) applies stablehlo.add across dimensions = "
                "[1] : (tensor<32x256xf32>, tensor<f32>) -> tensor<32xf32> loc(#loc3)"
            ),
            32 * 256,
        ),
        # a product: 2 * result * contracted size
        (
            module(
                "%0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
                "(tensor<32x256xf32>, tensor<256x64xf32>) -> tensor<32x64xf32>"
            ),
            2 * 32 * 64 * 256,
        ),
        # a convolution: 2 * result * kernel elements per output feature
        (
            module(
                "%0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->"
                "[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, "
                "feature_group_count = 1 : i64} : (tensor<4x32x32x3xf32>, tensor<3x3x3x8xf32>) "
                "-> tensor<4x32x32x8xf32>"
            ),
            2 * 4 * 32 * 32 * 8 * 3 * 3 * 3,
        ),
        # a dynamic shape: unknown
        (module("%0 = stablehlo.add %a, %b : tensor<?x8xf32>"), None),
    ],
)
def test_the_work_of_an_op(text, work):
    assert estimated_work(text) == work


def test_a_function_counts_once_per_call():
    text = (
        "module {\n"
        "  func.func public @main(%a: tensor<100xf32>) -> tensor<100xf32> {\n"
        "    %0 = call @twice(%a) : (tensor<100xf32>) -> tensor<100xf32>\n"
        "    %1 = call @twice(%0) : (tensor<100xf32>) -> tensor<100xf32>\n"
        "    %2 = call @twice(%1) : (tensor<100xf32>) -> tensor<100xf32>\n"
        "    return %2 : tensor<100xf32>\n"
        "  }\n"
        "  func.func private @twice(%a: tensor<100xf32>) -> tensor<100xf32> {\n"
        "    %0 = stablehlo.add %a, %a : tensor<100xf32>\n"
        "    return %0 : tensor<100xf32>\n"
        "  }\n"
        "}\n"
    )
    assert estimated_work(text) == 3 * 100


def test_a_text_without_functions_has_no_work():
    """``compile_module`` estimates the work before it parses the module (whether a large
    product is split for local-task is in the cache key): an empty file or one without a
    function must reach the parse, which says what is wrong."""
    assert estimated_work("") == 0
    assert estimated_work("module {\n}\n") == 0


def test_the_driver_by_the_work():
    assert driver_for(LARGE_WORK - 1) == "local-sync"
    assert driver_for(LARGE_WORK) == "local-task"
    assert driver_for(None) == "local-task"  # dynamic shapes: unknown
    assert recorded_work({}) is None  # a module compile_module did not make
    assert recorded_work({WORK_KEY: "null"}) is None
    assert recorded_work({WORK_KEY: "12"}) == 12


@pytest.mark.iree
@pytest.mark.jax
def test_a_vmfb_records_its_work_and_runs_on_the_driver_its_mlir_would(tmp_path):
    """A module of large tensors but little work (``x + 1`` on 4096 floats) runs on
    ``local-sync``; a product of 1024x1024 matrices (2 thousand million operations) on
    ``local-task``; from the ``.mlir`` and from the ``.vmfb`` alike."""
    cases = [
        (plus_one, [np.zeros(4096, np.float32)], "local-sync"),
        (product, [np.zeros((1024, 1024), np.float32)] * 2, "local-task"),
    ]
    for function, arguments, driver in cases:
        source = rewritten(tmp_path, function, *arguments)
        vmfb = tmp_path / f"{function.__name__}.vmfb"
        compile_module(source, vmfb)
        work = recorded_work(dict(vmfb_attributes(vmfb)))
        assert work == estimated_work(source.read_text())
        assert driver_for(work) == driver
        assert load(vmfb, imports={}).driver == driver
        assert load(source, imports={}).driver == driver
    assert load(source, imports={}, driver="local-sync").driver == "local-sync"  # told


@pytest.mark.iree
@pytest.mark.jax
def test_a_module_on_the_chosen_driver_computes_the_same(tmp_path):
    source = rewritten(tmp_path, plus_one, np.zeros(4096, np.float32))
    model = load(source, imports={})
    assert model.driver == "local-sync"
    x = np.arange(4096, dtype=np.float32)
    np.testing.assert_array_equal(model.main(x), x + 1)
