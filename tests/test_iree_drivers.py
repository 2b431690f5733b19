"""Which driver ``rewriter.iree.load`` picks when it is not told (rewriter/iree/drivers.py):
``local-sync`` for a module whose estimated work a call (rewriter/iree/work.py) is under
``LARGE_WORK`` (half a thousand million operations), ``local-task`` from it, for dynamic
shapes and for a module of mostly element operations that workers share, from
``LARGE_PARALLEL_WORK`` of them; a ``.vmfb`` by the estimate ``compile_module`` recorded in
it."""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rewriter
from rewriter.iree import compile_module, load
from rewriter.iree.build import vmfb_attributes
from rewriter.iree.drivers import (
    BY_SIZE,
    LARGE_PARALLEL_WORK,
    LARGE_WORK,
    PARTS_KEY,
    PROBE_SIZES,
    SERIAL_WEIGHT,
    SIZES_KEY,
    WORK_KEY,
    driver_for,
    recorded_work,
    work_by_size,
)
from rewriter.iree.work import SHARED_SIZE, Work, estimated_work, work_parts


def plus_one(x):
    return x + 1


def product(a, b):
    return a @ b


def gather(x, i, v):
    return x[i] + v


def small_product_of_large_sums(a, b, x):
    return (a @ b).sum() + jnp.tanh(x * 2.0 + 1.0)


def cumsum(x):
    return jnp.cumsum(x)


def scatter_add(x, i, v):
    return x.at[i].add(v)


def many_small_steps(x):
    for _ in range(256):
        x = x * 1.5 + 1.0
    return x


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


WINDOW = (
    '%1 = "stablehlo.reduce_window"(%a, %c) <{window_dimensions = array<i64: 3, 3>}> ({',
    "^bb0(%x: tensor<f32>, %y: tensor<f32>):",
    "  %2 = stablehlo.maximum %x, %y : tensor<f32>",
    "  stablehlo.return %2 : tensor<f32>",
    "}) : (tensor<1000x1000xf32>, tensor<f32>) -> tensor<998x998xf32>",
)
SCAN = (
    '%1 = "stablehlo.reduce_window"(%a, %c) <{padding = dense<[[999, 0]]> : tensor<1x2xi64>,'
    " window_dimensions = array<i64: 1000>}> ({",
    "^bb0(%x: tensor<f32>, %y: tensor<f32>):",
    "  %2 = stablehlo.add %x, %y : tensor<f32>",
    "  stablehlo.return %2 : tensor<f32>",
    "}) : (tensor<1000xf32>, tensor<f32>) -> tensor<1000xf32>",
)


def long_scan(n: int, padding: str, body: str = "add", element: str = "f32") -> tuple[str, ...]:
    return (
        f'%1 = "stablehlo.reduce_window"(%a, %c) <{{padding = dense<{padding}> : '
        f"tensor<1x2xi64>, window_dimensions = array<i64: {n}>}}> ({{",
        f"^bb0(%x: tensor<{element}>, %y: tensor<{element}>):",
        f"  %2 = stablehlo.{body} %x, %y : tensor<{element}>",
        f"  stablehlo.return %2 : tensor<{element}>",
        f"}}) : (tensor<{n}x{element}>, tensor<{element}>) -> tensor<{n}x{element}>",
    )


SCATTER = (
    '%1 = "stablehlo.scatter"(%a, %i, %u) <{scatter_dimension_numbers = '
    "#stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], "
    "index_vector_dim = 1>}> ({",
    "^bb0(%x: tensor<f32>, %y: tensor<f32>):",
    "  %2 = stablehlo.add %x, %y : tensor<f32>",
    "  stablehlo.return %2 : tensor<f32>",
    "}) : (tensor<1000xf32>, tensor<500x1xi32>, tensor<500xf32>) -> tensor<1000xf32>",
)
SUM = (
    "%1 = stablehlo.reduce(%a init: %c) applies stablehlo.add across dimensions = [0] : "
    "(tensor<1000xf32>, tensor<f32>) -> tensor<f32>",
)


@pytest.mark.parametrize(
    ("lines", "work"),
    [
        # a product: its multiply-adds, twice
        (
            (
                "%0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
                "(tensor<32x256xf32>, tensor<256x64xf32>) -> tensor<32x64xf32>",
            ),
            Work(products=2 * 32 * 64 * 256),
        ),
        # elementwise: shared by the workers from SHARED_SIZE elements (f64 count twice)
        (("%0 = stablehlo.add %a, %b : tensor<256x256xf32>",), Work(parallel=SHARED_SIZE)),
        (("%0 = stablehlo.add %a, %b : tensor<256x128xf64>",), Work(parallel=SHARED_SIZE)),
        (("%0 = stablehlo.add %a, %b : tensor<255x256xf32>",), Work(serial=255 * 256)),
        # a window (generic form: its signature after its region): each result element
        # reduces a window; the ops of the region (and its return) one scalar each
        (WINDOW, Work(parallel=998 * 998 * 9, serial=2)),
        # one workgroup: a scan (a window as long as its operand), a scatter, a sum to a scalar
        (SCAN, Work(serial=1002)),
        # but a long cumulative sum or product of floats is scanned in blocks, whose rows
        # the workers share (compile/xla_scans.py), two passes; not a reversed one, a maximum,
        # integers
        (long_scan(100_000, "[[99999, 0]]"), Work(parallel=200_000, serial=2)),
        (long_scan(100_000, "[[99999, 0]]", "multiply", "f64"), Work(parallel=400_000, serial=4)),
        (long_scan(100_000, "[[0, 99999]]"), Work(serial=100_002)),
        (long_scan(100_000, "[[99999, 0]]", "maximum"), Work(serial=100_002)),
        (long_scan(100_000, "[[99999, 0]]", "add", "i32"), Work(serial=100_002)),
        (SCATTER, Work(serial=1002)),
        (SUM, Work(serial=1000)),
    ],
)
def test_the_kinds_of_work_of_an_op(lines, work):
    assert work_parts(module(*lines)) == work


def test_the_driver_by_the_work():
    assert driver_for(Work(products=LARGE_WORK - 1)) == "local-sync"
    assert driver_for(Work(products=LARGE_WORK)) == "local-task"
    assert driver_for(Work(serial=LARGE_WORK)) == "local-task"
    assert driver_for(None) == "local-task"  # dynamic shapes: unknown
    # element operations that the workers share: from LARGE_PARALLEL_WORK of them, when the
    # rest (products, SERIAL_WEIGHT times the one-workgroup ops) is at most half as much
    assert driver_for(Work(parallel=LARGE_PARALLEL_WORK - 1)) == "local-sync"
    assert driver_for(Work(parallel=LARGE_PARALLEL_WORK)) == "local-task"
    parallel = 10 * LARGE_PARALLEL_WORK
    assert driver_for(Work(products=parallel // 2, parallel=parallel)) == "local-task"
    assert driver_for(Work(products=parallel // 2 + 1, parallel=parallel)) == "local-sync"
    serial = parallel // (2 * SERIAL_WEIGHT)
    assert driver_for(Work(parallel=parallel, serial=serial)) == "local-task"
    assert driver_for(Work(parallel=parallel, serial=serial + 1)) == "local-sync"


def layers(x, *weights):
    """``benchmarks/blocks.py``'s block: layer norm, GELU and two products a layer."""
    for w1, w2 in zip(weights[::2], weights[1::2], strict=True):
        h = (x - x.mean(-1, keepdims=True)) / jnp.sqrt(x.var(-1, keepdims=True) + 1e-5)
        x = x + jax.nn.gelu(h @ w1) @ w2
    return x


@pytest.mark.jax
@pytest.mark.parametrize(
    ("batch", "width", "driver"),
    [(128, 512, "local-task"), (32, 512, "local-sync"), (128, 256, "local-sync")],
)
def test_a_block_from_half_a_thousand_million_operations_runs_on_local_task(
    tmp_path, batch, width, driver
):
    """4 layers at batch 128 and width 512 are 537 million operations of products, which
    finish sooner on ``local-task`` (``shape_sweep.py``: 0.91x jax.jit against 0.94-1.31x
    on ``local-sync``); a quarter of that stays on ``local-sync``."""
    x = np.zeros((batch, width), np.float32)
    weights = [np.zeros((width, width), np.float32)] * 8
    work = work_parts(rewritten(tmp_path, layers, x, *weights).read_text())
    assert work is not None and work.products == 4 * 2 * 2 * batch * width * width
    assert driver_for(work) == driver


def test_the_work_a_vmfb_records():
    assert recorded_work({}) is None  # a module compile_module did not make
    assert recorded_work({WORK_KEY: "null"}) is None
    assert recorded_work({WORK_KEY: "12"}) == Work(products=12)  # one of before: products
    assert recorded_work({WORK_KEY: "true"}) is None
    assert recorded_work({WORK_KEY: "12", PARTS_KEY: "[2, 7, 3]"}) == Work(2, 7, 3)
    assert recorded_work({WORK_KEY: "12", PARTS_KEY: "[2, 7]"}) == Work(products=12)


def _sized(size: int) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [
        rng.normal(size=size).astype(np.float32),
        rng.integers(0, size, size).astype(np.int32),
        rng.normal(size=size).astype(np.float32),
    ]


@pytest.mark.iree
@pytest.mark.jax
def test_a_vmfb_records_its_work_and_runs_on_the_driver_its_mlir_would(tmp_path):
    """A module of large tensors but little work (``x + 1`` on 4096 floats) runs on
    ``local-sync``; a product of 1024x1024 matrices (2 thousand million operations) on
    ``local-task``, and so does a gather of 256,000 floats (2 million element operations,
    which the workers share); a module mostly of products with large element operations
    (a block's shape), a scan of 2 million integers (one workgroup; of floats, in blocks
    the workers share: local-task), a scatter of 256,000
    (one workgroup, beside 1.5 million element operations of its indices) and 512 ops on
    4096 floats (2 million element operations, each too small to share) on ``local-sync``;
    from the ``.mlir`` and from the ``.vmfb`` alike."""
    matrix = np.zeros((256, 256), np.float32)
    block = [matrix, matrix, np.zeros(400_000, np.float32)]
    cases = [
        (plus_one, [np.zeros(4096, np.float32)], "local-sync"),
        (product, [np.zeros((1024, 1024), np.float32)] * 2, "local-task"),
        (gather, _sized(256_000), "local-task"),
        (small_product_of_large_sums, block, "local-sync"),
        (cumsum, [np.zeros(2_000_000, np.float32)], "local-task"),  # in blocks
        (cumsum, [np.zeros(2_000_000, np.int32)], "local-sync"),  # one workgroup
        (scatter_add, _sized(256_000), "local-sync"),
        (many_small_steps, [np.zeros(4096, np.float32)], "local-sync"),
    ]
    for function, arguments, driver in cases:
        source = rewritten(tmp_path, function, *arguments)
        vmfb = tmp_path / f"{function.__name__}.vmfb"
        compile_module(source, vmfb)
        work = recorded_work(dict(vmfb_attributes(vmfb)))
        assert work is not None and work.total == estimated_work(source.read_text())
        assert driver_for(work) == driver, function.__name__
        assert load(vmfb, imports={}).driver == driver, function.__name__
        assert load(source, imports={}).driver == driver, function.__name__
    assert load(source, imports={}, driver="local-task").driver == "local-task"  # told


@pytest.mark.iree
@pytest.mark.jax
def test_a_module_on_the_chosen_driver_computes_the_same(tmp_path):
    source = rewritten(tmp_path, plus_one, np.zeros(4096, np.float32))
    model = load(source, imports={})
    assert model.driver == "local-sync"
    x = np.arange(4096, dtype=np.float32)
    np.testing.assert_array_equal(model.main(x), x + 1)
    x, i, v = _sized(256_000)
    model = load(rewritten(tmp_path, gather, x, i, v), imports={})
    assert model.driver == "local-task"
    np.testing.assert_array_equal(model.main(x, i, v), x[i] + v)


# ------------------------------------------------------------ modules of dynamic shapes


def block_of_rows(x, w):
    """Four products of a batch of rows by 256 x 256 matrices: work that grows with it."""
    for _ in range(4):
        x = jnp.tanh(x @ w)
    return x


def test_the_work_of_dynamic_shapes_is_read_at_each_size():
    """The estimate with every ``?`` a probe size, on the line through the two: exact for
    work that grows with the size (the products of ``block_of_rows``: 4 x b x 256 x 256
    multiply-adds, 2 operations each)."""
    spec = jax.ShapeDtypeStruct(jax.export.symbolic_shape("b, 256"), np.float32)
    matrix = np.zeros((256, 256), np.float32)
    text = rewriter.rewrite(rewriter.export(block_of_rows, spec, matrix).text, abi="iree").text
    assert work_parts(text) is None  # no one work
    sized = work_by_size(text)
    assert sized is not None
    for batch in (1, 7, 1000, 5000):
        assert sized.at(batch).products == 4 * batch * 256 * 256 * 2
    assert sized.first == work_parts(text.replace("tensor<?x", f"tensor<{PROBE_SIZES[0]}x"))
    # 537 million operations from batch 1024 on: LARGE_WORK
    assert sized.driver(128) == "local-sync" and sized.driver(1024) == "local-task"
    assert work_by_size(rewritten_text(plus_one, np.zeros(4, np.float32))) is None  # static


def rewritten_text(function, *arguments) -> str:
    return rewriter.rewrite(rewriter.export(function, *arguments).text, abi="iree").text


@pytest.mark.iree
@pytest.mark.jax
@pytest.mark.slow
def test_each_call_of_dynamic_shapes_runs_on_the_driver_of_its_sizes(tmp_path):
    """Loaded without a driver, a module of a symbolic batch runs a call of 8 rows on
    ``local-sync`` and one of 2048 on ``local-task``, which it is loaded on when the first
    such call comes (the .mlir, and its .vmfb, which records the work at the probe sizes);
    told a driver, on that one alone."""
    spec = jax.ShapeDtypeStruct(jax.export.symbolic_shape("b, 256"), np.float32)
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((256, 256)) / 16).astype(np.float32)
    source = tmp_path / "block.iree.mlir"
    source.write_text(rewritten_text(block_of_rows, spec, w))
    vmfb = tmp_path / "block.vmfb"
    compile_module(source, vmfb)
    recorded = dict(vmfb_attributes(vmfb))
    assert json.loads(recorded[SIZES_KEY]) == json.loads(work_by_size(source.read_text()).record())
    for path in (source, vmfb):
        model = load(path, imports={})
        assert model.driver == BY_SIZE

        def loaded(model=model) -> list[str]:
            return [part.driver for part in model._parts]

        assert loaded() == ["local-sync"]  # local-task's only when a call needs it
        calls = [(8, "local-sync"), (2048, "local-task"), (8, "local-sync"), (2048, "local-task")]
        ran: list[str] = []
        for n, (batch, driver) in enumerate(calls):
            if n == 2:  # both loaded: watch which one each call runs on
                assert loaded() == ["local-sync", "local-task"]
                for part in model._parts:

                    def spy(*arrays, original=part.functions["main"], on=part.driver, ran=ran):
                        ran.append(on)
                        return original(*arrays)

                    part.functions["main"] = spy
            x = rng.standard_normal((batch, 256)).astype(np.float32)
            expected = np.asarray(jax.jit(block_of_rows)(x, w))
            np.testing.assert_allclose(model.main(x, w), expected, rtol=2e-5, atol=2e-5)
            if n < 2:
                assert loaded()[-1] == driver
            else:
                assert ran.pop() == driver and not ran
        model.close()
    assert load(source, imports={}, driver="local-sync").driver == "local-sync"
