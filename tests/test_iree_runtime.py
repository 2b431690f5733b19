"""IREE's execution model, end to end: rewrite with ``--abi iree``, compile with
``iree-compile``, run with ``iree.runtime``, imports served by ``rewriter.iree.load``.

JAX runs each sample's Python function with the kernel library's FFI handlers; the same
sample, rewritten for IREE and compiled to a .vmfb, runs in IREE's runtime with its imports
served by the library's ``_mlir_ciface_`` entries (C kernels, through cffi) or by numpy
implementations (Python callables). Floats agree to rtol 1e-6, integers exactly.
"""

from __future__ import annotations

import functools
import gc
import subprocess
import sys

import jax
import ml_dtypes
import numpy as np
import pytest
from kernel_library import (
    ROUND_TRIP,
    RTOL,
    SAMPLES,
    assert_agree,
    assert_all_agree,
    load_kernels,
    sample,
)
from mlir_tools import iree_tool

import rewriter
from rewriter.iree import LoadError, compile_module, from_module_text, load, read_vmfb

pytestmark = [
    pytest.mark.toolchain("gcc", "g++"),
    pytest.mark.iree,
    pytest.mark.jax,
    pytest.mark.slow,
]


@pytest.fixture(scope="session")
def kernels(kernel_library):
    """The kernel library's C entries as cffi function pointers, by kernel name."""
    module = load_kernels(kernel_library)

    def kernel(name: str):
        return module.ffi.addressof(module.lib, f"_mlir_ciface_{name}")

    return kernel


@pytest.fixture(scope="session")
def vmfb(tmp_path_factory):
    """A sample rewritten with --abi iree and compiled once per session: the .vmfb path."""
    cache = {}

    def get(name: str):
        if name not in cache:
            folder = tmp_path_factory.mktemp(f"iree-{name}")
            original = SAMPLES / name / f"{name}.mlir"
            rewritten = folder / f"{name}.iree.mlir"
            rewritten.write_text(rewriter.rewrite(original.read_text(), abi="iree").text)
            compile_module(rewritten, folder / f"{name}.vmfb")
            cache[name] = folder / f"{name}.vmfb"
        return cache[name]

    return get


def with_c_kernels(path, kernels):
    """Load a .vmfb with every import served by the C entry of the same name."""
    return load(path, imports={s.name: kernels(s.name) for s in read_vmfb(path)})


def random_input(shape, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


# ---------------------------------------------------------------- C kernels


@pytest.mark.parametrize("name", sorted(ROUND_TRIP))
def test_c_kernels_in_iree_match_jax(name, vmfb, kernels):
    function_name, shapes = ROUND_TRIP[name]
    function = getattr(sample(name), function_name)
    program = with_c_kernels(vmfb(name), kernels)
    for seed in range(3):
        inputs = [random_input(shape, seed) for shape in shapes]
        assert_all_agree(program.main(*inputs), jax.jit(function)(*inputs))


def test_attribute_kernel_in_iree_matches_jax(vmfb, kernels):
    """Every attribute kind reaches the C kernel with the value XLA gives its handler,
    although IREE hands them over reordered (tensors, then f64/i64/u64, then the rest)."""
    module = sample("attribute_kernel")
    x = np.array([0.1, -3.75], np.float32)
    with jax.enable_x64(True):
        run = jax.jit(functools.partial(module.attr_kernel, attributes=module.XLA_ATTRIBUTES))
        expected = np.asarray(run(x))
    got = with_c_kernels(vmfb("attribute_kernel"), kernels).main(x)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, expected)  # decoded values: exact


@pytest.mark.parametrize("batch", [1, 3, 7, 64])
def test_shape_polymorphic_module_in_iree(vmfb, kernels, batch):
    module = sample("dynamic_shape")
    x = random_input((batch, 8), seed=batch)
    program = with_c_kernels(vmfb("dynamic_shape"), kernels)
    assert_agree(program.main(x), jax.jit(module.row_scale)(x))


def test_side_effect_runs_once_per_call_in_iree(vmfb, kernels, kernel_library):
    counter = load_kernels(kernel_library).lib
    x = np.array([1.0, -2.5, 4.0], np.float32)
    expected = jax.jit(sample("side_effect").count_and_double)(x)
    program = with_c_kernels(vmfb("side_effect"), kernels)
    counter.count_calls_reset()
    for _ in range(4):
        assert_agree(program.main(x), expected)
    assert counter.count_calls_value() == 4 * 3


def test_column_major_kernel_sees_the_declared_layout_in_iree(vmfb, kernels):
    x = random_input((3, 5), seed=11)
    i, j = np.indices(x.shape, dtype=np.float32)
    tanh = np.asarray(jax.jit(jax.numpy.tanh)(x))
    reference = (tanh * (i + 1) + j) + np.float32(1)
    got = with_c_kernels(vmfb("column_major"), kernels).main(x)
    np.testing.assert_allclose(got, reference, rtol=RTOL)


# ---------------------------------------------------------------- Python implementations


def rms_norm(x, eps):
    """samples/kernels/rms_norm.cc in numpy: mean of squares in double, scale in float."""
    mean = (x.astype(np.float64) ** 2).mean(axis=1, keepdims=True)
    return x * (1.0 / np.sqrt(mean + np.float64(eps))).astype(np.float32)


def sum_and_max(x, scale):
    """samples/kernels/sum_and_max.cc: float32 sums in element order, first maximum."""
    sums = np.zeros(x.shape[0], np.float32)
    for column in x.T:
        sums += column
    return sums * scale, np.argmax(x, axis=1).astype(np.int32)


def row_scale(x, result_shape, factor):
    """samples/kernels/row_scale.cc; ``result_shape`` is the operand jax adds."""
    assert list(result_shape) == list(x.shape)
    rows = np.arange(1, x.shape[0] + 1, dtype=np.float32)[:, None]
    return x * (rows * factor)


def test_python_implementations_match_jax(vmfb):
    x = random_input((10, 10), seed=5)
    program = load(vmfb("rms_norm"), imports={"rms_norm": rms_norm})
    assert_agree(program.main(x), jax.jit(sample("rms_norm").rms_norm)(x))
    x = random_input((4, 6), seed=6)
    program = load(vmfb("two_results"), imports={"sum_and_max": sum_and_max})
    assert_all_agree(program.main(x), jax.jit(sample("two_results").sum_and_max)(x))
    program = load(vmfb("dynamic_shape"), imports={"row_scale": row_scale})
    for batch in (1, 5):
        x = random_input((batch, 8), seed=batch)
        assert_agree(program.main(x), jax.jit(sample("dynamic_shape").row_scale)(x))


def test_python_implementation_gets_attributes_in_contract_order_with_their_types(vmfb):
    """The import receives them reordered; the implementation gets them back in contract
    (dictionary) order, each with the type it had in the export, equal to the value jax
    exported: f16/bf16 decoded, unsigned integers unsigned, the string as bytes."""
    module = sample("attribute_kernel")
    received = []

    def attr_kernel(x, *attributes):
        received.append((x, attributes))
        return np.zeros(module.RESULT_SIZE, np.float64)

    x = np.array([0.1, -3.75], np.float32)
    load(vmfb("attribute_kernel"), imports={"attr_kernel": attr_kernel}).main(x)
    ((operand, attributes),) = received
    np.testing.assert_array_equal(operand, x)
    assert not operand.flags.writeable  # a view of the caller's buffer: read-only
    expected = module.ATTRIBUTES
    assert len(attributes) == len(expected)
    for value, (name, want) in zip(attributes, expected.items(), strict=True):
        if name == "text":
            assert value == want.encode("utf-8")
        elif isinstance(want, np.ndarray):
            assert value.dtype == want.dtype, name
            np.testing.assert_array_equal(value, want)
        else:
            assert type(value) is type(want), (name, type(value), type(want))
            assert value == want, name
    assert type(attributes[0]) is ml_dtypes.bfloat16


def flattened(attributes: dict, prefix: str = "") -> list[tuple[str, object]]:
    """Attributes in contract order: sorted by name (bytewise), dictionaries depth first."""
    found = []
    for name in sorted(attributes, key=lambda key: key.encode("utf-8")):
        value = attributes[name]
        if isinstance(value, dict):
            found += flattened(value, f"{prefix}{name}.")
        else:
            found.append((prefix + name, value))
    return found


def test_python_implementation_gets_every_attribute_kind(vmfb):
    """attribute_kinds through IREE: 0-d, empty, bool, complex and 2-d tensors, uint64
    arrays, strings with NUL bytes, extreme scalars and a nested dictionary all reach a
    Python implementation equal to what jax exported, in contract order."""
    module = sample("attribute_kinds")
    received = []

    def attr_kinds(x, *attributes):
        received.append(attributes)
        return x + 1

    x = random_input((4,), seed=9)
    got = load(vmfb("attribute_kinds"), imports={"attr_kinds": attr_kinds}).main(x)
    np.testing.assert_array_equal(got, x + 1)
    ((attributes,),) = [received]
    expected = flattened(module.ATTRIBUTES)
    assert len(attributes) == len(expected)
    python_scalars = {bool: np.bool_, int: np.int64, float: np.float64}
    for value, (name, want) in zip(attributes, expected, strict=True):
        if isinstance(want, (str, bytes)):
            assert value == (want.encode("utf-8") if isinstance(want, str) else want), name
        elif isinstance(want, np.ndarray):
            assert value.dtype == want.dtype and value.shape == want.shape, name
            np.testing.assert_array_equal(value, want)
        else:
            assert type(value) is python_scalars.get(type(want), type(want)), name
            assert value == want, name


def test_python_exception_reaches_the_caller(vmfb):
    class KernelFailed(Exception):
        pass

    def failing(x, eps):
        raise KernelFailed("no")

    program = load(vmfb("rms_norm"), imports={"rms_norm": failing})
    with pytest.raises(KernelFailed, match="no"):
        program.main(random_input((10, 10)))


@pytest.mark.parametrize(
    ("result", "message"),
    [
        (np.zeros((10, 10), np.float64), r"result 0 must be tensor<10x10xf32>.*float64\[10, 10\]"),
        (np.zeros((10, 9), np.float32), r"result 0 must be tensor<10x10xf32>.*float32\[10, 9\]"),
        ((np.zeros((10, 10), np.float32),) * 2, "returns 1 arrays; its implementation gave 2"),
    ],
)
def test_python_result_is_checked(vmfb, result, message):
    program = load(vmfb("rms_norm"), imports={"rms_norm": lambda x, eps: result})
    with pytest.raises(TypeError, match=message):
        program.main(random_input((10, 10)))


# ---------------------------------------------------------------- loading


def test_load_compiles_a_rewritten_module(tmp_path, kernels):
    path = tmp_path / "rms_norm.iree.mlir"
    original = (SAMPLES / "rms_norm" / "rms_norm.mlir").read_text()
    path.write_text(rewriter.rewrite(original, abi="iree").text)
    program = load(path, imports={"rms_norm": kernels("rms_norm")})
    x = random_input((10, 10), seed=2)
    assert_agree(program.main(x), jax.jit(sample("rms_norm").rms_norm)(x))
    assert sorted(program.functions) == ["main"]


def aligned(array: np.ndarray, offset: int = 0) -> np.ndarray:
    """A copy of ``array`` starting ``offset`` bytes after a 64-byte boundary."""
    raw = np.empty(array.nbytes + 128, np.uint8)
    start = -raw.ctypes.data % 64 + offset
    copy = raw[start : start + array.nbytes].view(array.dtype).reshape(array.shape)
    copy[...] = array
    return copy


def test_aligned_arguments_are_read_in_place():
    """A 64-byte aligned, contiguous, writable array reaches IREE as a buffer view on its own
    memory; any other is copied to aligned memory first (rewriter/iree/values.py)."""
    import iree.runtime as rt

    from rewriter.iree.values import input_view

    device = rt.Config("local-task").device
    x = aligned(random_input((4, 16)))
    for array, in_place in [
        (x, True),
        (aligned(x, offset=16), False),  # numpy's usual alignment
        (x[:, ::2], False),
        (np.asfortranarray(x), False),
    ]:
        keep: list[object] = []
        view = input_view(device, array, keep)
        mapped = view.map().asarray(array.shape, array.dtype)
        np.testing.assert_array_equal(mapped, array)
        assert (mapped.ctypes.data == array.ctypes.data) == in_place
        assert mapped.ctypes.data % 64 == 0
        assert keep  # the memory IREE reads stays alive while the caller holds this


def both(x, y):
    return x * 2.0 + y, x


@pytest.mark.parametrize(
    "prepare",
    [
        lambda a: aligned(a),
        lambda a: aligned(a, offset=4),
        lambda a: np.asfortranarray(a),
        lambda a: np.frombuffer(a.tobytes(), a.dtype).reshape(a.shape),  # read-only
    ],
    ids=["aligned", "unaligned", "fortran-order", "read-only"],
)
def test_arguments_in_place_or_copied_give_jaxs_results_and_stay_unchanged(tmp_path, prepare):
    x, y = random_input((8, 32), seed=5), random_input((8, 32), seed=6)
    path = tmp_path / "both.iree.mlir"
    path.write_text(rewriter.rewrite(rewriter.export(both, x, y).original, abi="iree").text)
    program = load(path, imports={})
    expected = jax.jit(both)(x, y)
    for _ in range(3):
        xs, ys = prepare(x), prepare(y)
        got = program.main(xs, ys)
        assert_all_agree(got, expected)
        np.testing.assert_array_equal(xs, x)  # the program only read them
        np.testing.assert_array_equal(ys, y)
        assert not np.shares_memory(got[1], xs)  # the results are the caller's own


def test_signatures_from_text_and_from_vmfb_agree(tmp_path, vmfb):
    original = (SAMPLES / "attribute_kernel" / "attribute_kernel.mlir").read_text()
    (signature,) = from_module_text(rewriter.rewrite(original, abi="iree").text)
    assert read_vmfb(vmfb("attribute_kernel")) == [signature]
    assert signature.cconv == "0rrrrFIIiiifiiiiii_r"


@pytest.mark.parametrize(
    ("imports", "message"),
    [
        ({}, r"no implementation for ffi\.rms_norm \(target rms_norm\)"),
        (
            {"rms_nrom": rms_norm},
            r"no implementation for ffi\.rms_norm .*given for targets it does not call: rms_nrom",
        ),
        ({"rms_norm": "rms_norm"}, "ffi.rms_norm: 'rms_norm' is not a Python callable, a cffi"),
        ({"rms_norm": 42}, "ffi.rms_norm: 0x2a is no XLA FFI handler: no code of this process"),
        ({"rms_norm": {}}, "ffi.rms_norm: an XLA FFI handler bundle is {'execute': handler}"),
    ],
)
def test_load_names_missing_imports_and_what_cannot_serve_one(vmfb, imports, message):
    with pytest.raises(LoadError, match=message):
        load(vmfb("rms_norm"), imports=imports)


def test_load_ignores_implementations_of_targets_the_module_does_not_call(vmfb):
    """As ``rewriter.compile.load`` ignores handlers of targets a module does not call."""
    x = np.random.default_rng(2).standard_normal((10, 10)).astype(np.float32)
    model = load(vmfb("rms_norm"), imports={"rms_norm": rms_norm, "rms_nrom": 42})
    np.testing.assert_allclose(model.main(x), rms_norm(x, np.float32(1e-5)), rtol=1e-6)


@pytest.mark.parametrize(
    ("name", "kernel", "message"),
    [
        ("rms_norm", "col_major_kernel", r"ffi\.rms_norm: .* takes 2 arguments; the contract"),
        ("rms_norm", "scale", r"rw_memref_f32_1d \(rank 1, 4-byte .* tensor<10x10xf32>"),
        # same arity and kinds, but one result descriptor where the call has two
        ("two_results", "rms_norm", r"rw_memref_f32_2d \* holds 5 results; the call has 2"),
    ],
)
def test_load_rejects_a_c_kernel_of_another_signature(vmfb, kernels, name, kernel, message):
    imports = {s.name: kernels(kernel) for s in read_vmfb(vmfb(name))}
    with pytest.raises(LoadError, match=message):
        load(vmfb(name), imports=imports)


def test_load_asks_for_a_function_pointer_for_compiled_cffi_modules(vmfb, kernel_library):
    lib = load_kernels(kernel_library).lib
    with pytest.raises(LoadError, match=r"ffi\.addressof\(lib"):
        load(vmfb("rms_norm"), imports={"rms_norm": lib._mlir_ciface_rms_norm})


def test_vmfb_without_signatures_is_refused(tmp_path):
    """A .vmfb compiled by plain iree-compile lacks the contract order: load says how to get
    one that has it."""
    rewritten = tmp_path / "m.mlir"
    original = (SAMPLES / "rms_norm" / "rms_norm.mlir").read_text()
    rewritten.write_text(rewriter.rewrite(original, abi="iree").text)
    plain = tmp_path / "m.vmfb"
    subprocess.run(
        [
            iree_tool("iree-compile"),
            "--iree-input-type=stablehlo",
            "--iree-hal-target-device=local",
            "--iree-hal-local-target-device-backends=llvm-cpu",
            str(rewritten),
            "-o",
            str(plain),
        ],
        check=True,
    )
    with pytest.raises(LoadError, match=r"no import signatures \(rewriter\.iree_imports\) in"):
        load(plain, imports={"rms_norm": rms_norm})


def test_load_reports_iree_compile_errors_against_the_users_file(tmp_path):
    path = tmp_path / "c_abi.mlir"
    path.write_text(rewriter.rewrite((SAMPLES / "rms_norm" / "rms_norm.mlir").read_text()).text)
    with pytest.raises(LoadError) as error:
        load(path, imports={})
    assert f"{path}: iree-compile failed" in str(error.value)
    assert f"{path}:3:3: error:" in str(error.value)  # the C ABI's extern, unscoped


# ---------------------------------------------------------------- why the order


QUIRK = """
module @quirk {
  func.func private @ffi.contract_order(tensor<2xf32>, i32, i64) -> tensor<2xf32>
  func.func private @ffi.import_order(tensor<2xf32>, i64, i32) -> tensor<2xf32>
  func.func public @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %a = arith.constant 7 : i32
    %b = arith.constant 1234567890123 : i64
    %0 = func.call @ffi.contract_order(%x, %a, %b) : (tensor<2xf32>, i32, i64) -> tensor<2xf32>
    %1 = func.call @ffi.import_order(%0, %b, %a) : (tensor<2xf32>, i64, i32) -> tensor<2xf32>
    return %1 : tensor<2xf32>
  }
}
"""


def test_python_module_interface_misreads_an_i64_after_an_i32(tmp_path):
    """The reason for the import order: iree.runtime 3.13 hands a Python module the i64
    that follows one i32 wrongly (the VM pads it to 8 bytes, the Python side reads on);
    with the i64 first both arrive intact. Should a later wheel read the first form right,
    this test fails and the order can be revisited."""
    import iree.runtime as rt

    path = tmp_path / "quirk.mlir"
    path.write_text(QUIRK)
    vmfb_path = tmp_path / "quirk.vmfb"
    subprocess.run(
        [
            iree_tool("iree-compile"),
            "--iree-input-type=stablehlo",
            "--iree-hal-target-device=local",
            "--iree-hal-local-target-device-backends=llvm-cpu",
            str(path),
            "-o",
            str(vmfb_path),
        ],
        check=True,
    )
    seen = {}

    def run():
        config = rt.Config("local-task")

        def contract_order(state, x, a, b):
            seen["contract"] = (a, b)
            return x

        def import_order(state, x, b, a):
            seen["import"] = (a, b)
            return x

        interface = rt.PyModuleInterface("ffi", lambda _interface: None)
        interface.export("contract_order", "0riI_r", contract_order)
        interface.export("import_order", "0rIi_r", import_order)
        modules = [interface.create(), rt.VmModule.mmap(config.vm_instance, str(vmfb_path))]
        context = rt.SystemContext(vm_modules=modules, config=config)
        context.modules.quirk.main(np.ones(2, np.float32))

    run()
    gc.collect()
    assert seen["import"] == (7, 1234567890123)
    a, b = seen["contract"]
    assert a == 7
    assert b == 0x71FB04CB << 32  # 1234567890123's low 32 bits, read 4 bytes early


# ---------------------------------------------------------------- python -m rewriter.iree


def run_iree_cli(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rewriter.iree", *map(str, args)],
        cwd=SAMPLES.parent,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_cli_compiles_a_vmfb_that_load_runs(tmp_path, kernels):
    rewritten = tmp_path / "two_targets.iree.mlir"
    original = (SAMPLES / "two_targets" / "two_targets.mlir").read_text()
    rewritten.write_text(rewriter.rewrite(original, abi="iree").text)
    output = tmp_path / "two_targets.vmfb"
    done = run_iree_cli(rewritten, "-o", output)
    assert done.returncode == 0, done.stderr
    assert done.stderr == f"{output}: imports ffi.scale, ffi.offset\n"
    x = random_input((6,), seed=4)
    program = with_c_kernels(output, kernels)
    assert_agree(program.main(x), jax.jit(sample("two_targets").f)(x))


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("rms_norm/rms_norm.rewritten.mlir", "iree-compile failed:\n"),  # the C ABI
        ("rms_norm/missing.mlir", "cannot read: No such file or directory"),
    ],
)
def test_cli_errors_are_one_diagnostic_without_traceback(tmp_path, name, message):
    source = SAMPLES / name
    done = run_iree_cli(source, "-o", tmp_path / "out.vmfb")
    assert done.returncode == 1
    assert done.stderr.startswith(f"{source}: error: {message}")
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out.vmfb").exists()


LEAK_SCRIPT = """
import sys
import numpy as np
from rewriter.iree import load


def rms_norm(x, eps):
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps)


model = load(sys.argv[1], imports={"rms_norm": rms_norm})
main = model.main  # a function held past the end, as scripts do
print(main(np.ones((10, 10), np.float32)).sum())
"""


def test_no_leaked_iree_objects_at_interpreter_exit(vmfb):
    """IREE's bindings (nanobind) list every object still alive at exit as "leaked": a
    loaded module and what it holds are released before that."""
    run = subprocess.run(
        [sys.executable, "-c", LEAK_SCRIPT, str(vmfb("rms_norm"))],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert float(run.stdout) == pytest.approx(100.0, rel=1e-5)  # ones stay ones
    assert "leaked" not in run.stderr, run.stderr[:2000]


def test_a_closed_module_says_so(vmfb):
    model = load(vmfb("rms_norm"), imports={"rms_norm": rms_norm})
    main = model.main
    assert main(np.ones((10, 10), np.float32)).shape == (10, 10)
    model.close()
    with pytest.raises(LoadError, match="main: the module was closed; load it again"):
        main(np.ones((10, 10), np.float32))


UNSCOPED_AND_FFT = """
module {
  func.func private @kernel(tensor<12xf32>) -> tensor<12xf32>
  func.func public @main(%x: tensor<12xf32>) -> tensor<7xcomplex<f32>> {
    %0 = func.call @kernel(%x) : (tensor<12xf32>) -> tensor<12xf32>
    %1 = stablehlo.fft %0, type = RFFT, length = [12] : (tensor<12xf32>) -> tensor<7xcomplex<f32>>
    return %1 : tensor<7xcomplex<f32>>
  }
}
"""


def test_load_reports_the_failure_of_the_module_it_compiled(tmp_path):
    """The user's file fails first on the rfft of 12 points, which IREE cannot lower and
    the input fixes rewrite; the module compiled, fixed, fails on the unscoped extern:
    that is the error, not the one the fixes removed."""
    path = tmp_path / "unscoped.mlir"
    path.write_text(UNSCOPED_AND_FFT)
    with pytest.raises(LoadError) as error:
        load(path, imports={})
    message = str(error.value)
    assert "must reference a function in a module" in message
    assert "stablehlo.fft" not in message
