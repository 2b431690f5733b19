"""0-d tensors (a program's scalar parameters and results) through both loaders, every dtype.

One module holds one function per element type: ``f(s: tensor<T>, x: tensor<3xT>) ->
(tensor<T>, tensor<6xT>)`` returns ``x[2]`` and ``[s, s, s, x0, x1, x2]``, built from ops that
exist for every element type (broadcast, concatenate, slice, reshape), so the expected
values are the inputs themselves. It is compiled once by ``rewriter.compile`` and once
by IREE, and called with a numpy scalar, a 0-d array and a Python number for ``s``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent

# MLIR element type -> numpy dtype: every element type the loaders read and write
# (rewriter/compile/loader.py and rewriter/iree/values.py share this list).
DTYPES = {
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "f32": np.float32,
    "f64": np.float64,
    "i1": np.bool_,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "ui8": np.uint8,
    "ui16": np.uint16,
    "ui32": np.uint32,
    "ui64": np.uint64,
    "complex<f32>": np.complex64,
    "complex<f64>": np.complex128,
}


def function_name(element: str) -> str:
    return "pick_" + element.replace("complex<", "c").rstrip(">")


def module_text() -> str:
    functions = []
    for element in DTYPES:
        functions.append(
            f"""  func.func public @{function_name(element)}(%s: tensor<{element}>, %x: tensor<3x{element}>) -> (tensor<{element}>, tensor<6x{element}>) {{
    %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<{element}>) -> tensor<3x{element}>
    %c = stablehlo.concatenate %b, %x, dim = 0 : (tensor<3x{element}>, tensor<3x{element}>) -> tensor<6x{element}>
    %l = stablehlo.slice %c [5:6] : (tensor<6x{element}>) -> tensor<1x{element}>
    %r = stablehlo.reshape %l : (tensor<1x{element}>) -> tensor<{element}>
    return %r, %c : tensor<{element}>, tensor<6x{element}>
  }}"""  # noqa: E501
        )
    return "module @zero_d {\n" + "\n".join(functions) + "\n}\n"


def values(element: str) -> tuple[np.ndarray, np.ndarray]:
    """A scalar and a 3-vector of the type, all different and exactly representable."""
    dtype = np.dtype(DTYPES[element])
    if dtype == np.bool_:
        return np.array(True), np.array([False, True, False])
    if dtype.kind == "c":
        return np.array(1.5 - 2j, dtype), np.array([0.25j, -3, 7.5 + 1j], dtype)
    if dtype.kind in "ui":
        top = np.iinfo(dtype).max
        return np.array(top, dtype), np.array([0, 7, top - 1], dtype)
    return np.array(-2.5, dtype), np.array([0.5, 3, -0.125], dtype)


def scalar_forms(scalar: np.ndarray) -> list[object]:
    """The ways a caller passes a 0-d argument: 0-d array, numpy scalar, Python number."""
    return [scalar, scalar[()], scalar.item()]


def check(function, element: str) -> None:
    scalar, vector = values(element)
    dtype = np.dtype(DTYPES[element])
    for form in scalar_forms(scalar):
        picked, joined = function(form, vector)
        assert picked.shape == () and picked.dtype == dtype, (element, type(form))
        assert picked.tobytes() == vector[2].tobytes(), element
        assert joined.dtype == dtype
        assert joined.tobytes() == np.concatenate([np.full(3, scalar), vector]).tobytes()


@pytest.fixture(scope="module")
def module_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("zero-d") / "zero_d.mlir"
    path.write_text(module_text())
    return path


@pytest.mark.toolchain
def test_compiled_path_takes_and_returns_0d_tensors_of_every_dtype(module_file: Path):
    from rewriter.compile import compile_module, load

    library = module_file.with_name("libzero_d.so")
    compile_module(module_file, library)
    model = load(library)
    for element in DTYPES:
        check(model[function_name(element)], element)


def test_iree_path_takes_and_returns_0d_tensors_of_every_dtype(module_file: Path):
    from rewriter.iree import load

    model = load(module_file, imports={})
    for element in DTYPES:
        check(model[function_name(element)], element)


@pytest.mark.toolchain
def test_load_takes_a_bare_file_name_as_a_file_in_the_current_directory(module_file: Path):
    """``load("libmodel.so")`` as the README writes it: the file in the current directory,
    not a library on the dynamic loader's search path."""
    from rewriter.compile import compile_module

    library = module_file.with_name("libmodel.so")
    compile_module(module_file, library)
    probe = (
        "import numpy as np\n"
        "from rewriter.compile import load\n"
        "model = load('libmodel.so')\n"
        "print(model.pick_i32(np.int32(5), np.arange(3, dtype=np.int32))[0])\n"
    )
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=library.parent,
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == "2\n"


RECOMPILED = """func.func public @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %c = stablehlo.constant dense<VALUE> : tensor<2xf32>
  %0 = stablehlo.add %arg0, %c : tensor<2xf32>
  return %0 : tensor<2xf32>
}"""


@pytest.mark.toolchain
def test_a_module_compiled_again_to_the_same_path_loads_as_the_new_one(tmp_path: Path):
    """The dynamic loader hands out the library it already has under a name: the second
    load of a path is of a private copy, so a notebook that compiles again and loads again
    gets the new code, and the first module keeps its own."""
    import glob
    import tempfile

    from rewriter.compile import compile_module, load

    library = tmp_path / "same.so"
    compile_module(RECOMPILED.replace("VALUE", "1.0"), library)
    first = load(library)
    compile_module(RECOMPILED.replace("VALUE", "2.0"), library)
    second = load(library)
    x = np.zeros(2, np.float32)
    np.testing.assert_array_equal(first.main(x), [1.0, 1.0])
    np.testing.assert_array_equal(second.main(x), [2.0, 2.0])
    np.testing.assert_array_equal(load(library).main(x), [2.0, 2.0])
    assert not glob.glob(f"{tempfile.gettempdir()}/rewriter-load-*")  # copies unlinked
