"""The argument matrix of both loaders: every dtype x every kind of argument, and the result.

One module holds a function per element type, ``f(s: tensor<T>, x: tensor<2x3xT>, d:
tensor<?xT>) -> (tensor<T>, tensor<2x3xT>, tensor<?xT>)`` returning ``s``, ``x`` with its
columns reversed and ``d`` twice (slices and concatenations, which exist for every element
type, so the expected values are the inputs' own, moved). Each case gives the three
arguments and either the values the function returns or the exception the loader raises,
with its message.

Cases that the loaders refuse could reach compiled code or IREE with bad memory if a check
were missing, so tests/test_loader_arguments.py runs them in a child process
(``python tests/argument_matrix.py compiled|iree ARTIFACT``, which prints one JSON line per
case): a crash fails the tests instead of ending pytest.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass

import ml_dtypes
import numpy as np

# MLIR element type -> numpy dtype: every element type the loaders read and write.
DTYPES = {
    "i1": np.dtype(np.bool_),
    "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "ui8": np.dtype(np.uint8),
    "ui16": np.dtype(np.uint16),
    "ui32": np.dtype(np.uint32),
    "ui64": np.dtype(np.uint64),
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "complex<f32>": np.dtype(np.complex64),
    "complex<f64>": np.dtype(np.complex128),
}


def function_name(element: str) -> str:
    return "f_" + element.replace("complex<", "c").rstrip(">")


def module_text() -> str:
    functions = []
    for element in DTYPES:
        t = element
        functions.append(
            f"""  func.func public @{function_name(t)}(%s: tensor<{t}> loc("s"), %x: tensor<2x3x{t}> loc("x"), %d: tensor<?x{t}> loc("d")) -> (tensor<{t}>, tensor<2x3x{t}>, tensor<?x{t}>) {{
    %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<{t}>) -> tensor<1x{t}>
    %r = stablehlo.reshape %b : (tensor<1x{t}>) -> tensor<{t}>
    %c0 = stablehlo.slice %x [0:2, 0:1] : (tensor<2x3x{t}>) -> tensor<2x1x{t}>
    %c1 = stablehlo.slice %x [0:2, 1:2] : (tensor<2x3x{t}>) -> tensor<2x1x{t}>
    %c2 = stablehlo.slice %x [0:2, 2:3] : (tensor<2x3x{t}>) -> tensor<2x1x{t}>
    %x2 = stablehlo.concatenate %c2, %c1, %c0, dim = 1 : (tensor<2x1x{t}>, tensor<2x1x{t}>, tensor<2x1x{t}>) -> tensor<2x3x{t}>
    %d2 = stablehlo.concatenate %d, %d, dim = 0 : (tensor<?x{t}>, tensor<?x{t}>) -> tensor<?x{t}>
    return %r, %x2, %d2 : tensor<{t}>, tensor<2x3x{t}>, tensor<?x{t}>
  }}"""  # noqa: E501
        )
    return "module @arguments {\n" + "\n".join(functions) + "\n}\n"


def category(element: str) -> str:
    """b, u, i, f or c."""
    dtype = DTYPES[element]
    return "f" if element == "bf16" else dtype.kind


def samples(element: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A scalar, a 2x3 and a 4-vector of the type, exactly representable, all different."""
    dtype = DTYPES[element]
    kind = category(element)
    if kind == "b":
        grid = np.array([[True, False, False], [False, True, True]])
        return np.array(True), grid, np.array([True, False, True, True])
    if kind in "ui":
        top = int(np.iinfo(dtype).max)
        grid = np.array([[0, 1, 2], [3, top - 1, top]], dtype)
        return np.array(top, dtype), grid, np.array([5, 0, top, 7], dtype)
    if kind == "c":
        grid = np.array([[0.5j, -3, 7.5 + 1j], [1, 2j, -0.25]], dtype)
        return np.array(1.5 - 2j, dtype), grid, np.array([1j, 2, -3j, 4], dtype)
    grid = np.array([[0.5, -3, 7.5], [1, 2, -0.25]]).astype(dtype)
    return np.array(-2.5, dtype), grid, np.array([1, -2, 3.5, 4]).astype(dtype)


@dataclass(frozen=True)
class Case:
    """Arguments for ``function_name(element)`` and what the loader gives back or raises."""

    element: str
    name: str
    arguments: Callable[[], tuple[object, ...]]
    error: str | None = None  # the exception's class name; None: the call returns
    message: str = ""  # a part of the message (an error) or nothing

    @property
    def id(self) -> str:
        return f"{self.element}-{self.name}"


def expected(s: object, x: object, d: object, element: str) -> list[np.ndarray]:
    """What the function returns for arguments that convert: the inputs as the dtype, moved."""
    dtype = DTYPES[element]
    s, x, d = (
        np.array(v, dtype) if isinstance(v, list) else np.asarray(v).astype(dtype)
        for v in (s, x, d)
    )
    return [s, x[:, ::-1], np.concatenate([d, d])]


def _strided(array: np.ndarray, axis: int) -> np.ndarray:
    """``array`` as a view with a stride of two elements along ``axis``."""
    shape = list(array.shape)
    shape[axis] *= 2
    wide = np.zeros(shape, array.dtype)
    view = wide[
        tuple(slice(None, None, 2) if a == axis else slice(None) for a in range(array.ndim))
    ]
    view[...] = array
    return view


def cases() -> list[Case]:
    return [case for element in DTYPES for case in _cases_of(element)]


def _cases_of(element: str) -> list[Case]:
    dtype = DTYPES[element]
    kind = category(element)
    s, x, d = samples(element)
    found = []

    def add(name, arguments, error=None, message=""):
        found.append(Case(element, name, arguments, error, message))

    # What converts exactly: returned as the parameter's dtype.
    add("exact", lambda: (s, x, d))
    add("numpy scalar", lambda: (s[()], x, d))
    add("python number", lambda: (s.item(), x, d))
    add("nested list", lambda: (s, x.tolist(), d))
    add("fortran order", lambda: (s, np.asfortranarray(x), d))
    add("strided views", lambda: (s, _strided(x, 1), _strided(d, 0)))
    add("negative strides", lambda: (s, _negative(x), _negative(d)))
    add("read-only", lambda: (s, _read_only(x), _read_only(d)))
    add("unaligned", lambda: (s, _unaligned(x), d))
    add("dynamic empty", lambda: (s, x, d[:0]))
    add("dynamic one", lambda: (s, x, d[:1]))
    add("dynamic long", lambda: (s, x, np.resize(d, 257)))
    if kind != "b":
        add("bool arrays", lambda: (True, np.ones((2, 3), bool), np.zeros(3, bool)))
        add("python bool", lambda: (False, x, d))
    if kind in "fc":
        add("small integers", lambda: (3, np.arange(6, dtype=np.int16).reshape(2, 3), d))
    if kind in "ui" and dtype.itemsize > 1:
        narrow = np.uint8 if kind == "u" else np.int8
        add("narrower integers", lambda: (7, x, np.arange(4, dtype=narrow)))
    if kind == "i":
        add("unsigned integers in range", lambda: (1, x, np.arange(4, dtype=np.uint8)))
    if element in ("f16", "bf16", "f32", "complex<f32>"):
        add("wider floats rounded", lambda: (0.1, x, np.array([0.1, 1 / 3, 2.5, -7])))

    # What is refused: the class of the error and the words that say why.
    where = f"{function_name(element)}: argument"
    add("none", lambda: (None, x, d), "TypeError", f"{where} 0 ('s') is NoneType")
    add("string", lambda: ("3.5", x, d), "TypeError", f"{where} 0 ('s') is str")
    add("bytes", lambda: (b"3", x, d), "TypeError", f"{where} 0 ('s') is bytes")
    objects = f"{where} 1 ('x') is an array of object"
    add("object array", lambda: (s, np.array([[object()] * 3] * 2), d), "TypeError", objects)
    ragged = f"{where} 1 ('x') is not an array"
    add("ragged list", lambda: (s, [[1, 2, 3], [4]], d), "TypeError", ragged)
    dates = f"{where} 2 ('d') is an array of datetime64[s]"
    add("datetimes", lambda: (s, x, np.zeros(4, "datetime64[s]")), "TypeError", dates)
    shape = f"{where} 1 ('x') has shape (2, 4), expected (2, 3)"
    add("wrong shape", lambda: (s, np.zeros((2, 4), dtype), d), "ValueError", shape)
    shape = f"{where} 1 ('x') has shape (3, 2), expected (2, 3)"
    add("transposed", lambda: (s, x.T, d), "ValueError", shape)
    shape = f"{where} 1 ('x') has shape (6,), expected (2, 3)"
    add("wrong rank", lambda: (s, x.ravel(), d), "ValueError", shape)
    shape = f"{where} 0 ('s') has shape (1,), expected ()"
    add("scalar as vector", lambda: (s.reshape(1), x, d), "ValueError", shape)
    shape = f"{where} 2 ('d') has shape (2, 3), expected (?,)"
    add("dynamic rank", lambda: (s, x, x), "ValueError", shape)
    shape = f"{where} 1 ('x') has shape (2, 30000000), expected (2, 3)"
    # A wrong shape of the size that crashed IREE, made by the call that needs it.
    add("huge wrong shape", lambda: (s, np.ones((2, 30_000_000), np.uint8), d), "ValueError", shape)
    count = f"{function_name(element)} takes 3 arrays, got"
    add("too few", lambda: (s, x), "TypeError", f"{count} 2")
    add("too many", lambda: (s, x, d, d), "TypeError", f"{count} 4")

    # Wrong kinds: numpy's same_kind casting does not go there.
    no = f"which does not convert to {element} (numpy's 'same_kind' casting)"
    if kind == "b":
        add("python int", lambda: (1, x, d), "TypeError", f"{where} 0 ('s') is a Python int, {no}")
        ints = f"{where} 1 ('x') is an array of int8, {no}"
        add("int array", lambda: (s, np.ones((2, 3), np.int8), d), "TypeError", ints)
    if kind in "bui":
        floats = f"{where} 1 ('x') is an array of float64, {no}"
        add("float array", lambda: (s, np.ones((2, 3)), d), "TypeError", floats)
        add(
            "python float",
            lambda: (1.0, x, d),
            "TypeError",
            f"{where} 0 ('s') is a Python float, {no}",
        )
    if kind == "u":
        signed = f"{where} 2 ('d') is an array of int8, {no}"
        add("signed for unsigned", lambda: (s, x, np.arange(4, dtype=np.int8)), "TypeError", signed)
    if kind in "buif":
        complexes = f"{where} 2 ('d') is an array of complex64, {no}"
        add("complex array", lambda: (s, x, np.ones(4, np.complex64)), "TypeError", complexes)
        python = f"{where} 0 ('s') is a Python complex, {no}"
        add("python complex", lambda: (1j, x, d), "TypeError", python)

    # Values that do not survive the conversion.
    if kind in "ui":
        info = np.iinfo(dtype)
        above, below = int(info.max) + 1, int(info.min) - 1
        bounds = f"out of range for {element} ({info.min} to {info.max})"
        add("python int above", lambda: (above, x, d), "ValueError", f"{above} is {bounds}")
        add("python int below", lambda: (below, x, d), "ValueError", f"{below} is {bounds}")
        if element != "ui64":
            wide = np.uint64 if kind == "u" or element == "i64" else np.int64
            values = np.array([0, above, 1, 2], wide)
            out = f"{where} 2 ('d'): {above} is {bounds}"
            add("wider array out of range", lambda: (s, x, values), "ValueError", out)
    if kind in "fc":
        bits = {"f16": 11, "bf16": 8, "f32": 24, "complex<f32>": 24}.get(element, 53)
        odd = 2**bits + 1
        inexact = f"{odd} cannot be represented exactly in {element}"
        add("inexact python int", lambda: (odd, x, d), "ValueError", f"{where} 0 ('s'): {inexact}")
        if bits < 53:
            odd_array = np.array([odd, 0, 0, 0])
            inexact = f"{where} 2 ('d'): {inexact}"
            add("inexact int array", lambda: (s, x, odd_array), "ValueError", inexact)
            big = np.array([1e300, 0, 0, 0]).astype(np.complex128 if kind == "c" else np.float64)
            out = f"{where} 2 ('d'): {big[0]} is out of range for {element}"
            add("overflowing floats", lambda: (s, x, big), "ValueError", out)
            out = f"{where} 0 ('s'): 1e+300 is out of range for {element}"
            add("overflowing python float", lambda: (1e300, x, d), "ValueError", out)
    return found


def _negative(array: np.ndarray) -> np.ndarray:
    """A view of a copy of ``array`` with negative strides along every axis."""
    every = (slice(None, None, -1),) * array.ndim
    return array[every].copy()[every]


def _read_only(array: np.ndarray) -> np.ndarray:
    copy = array.copy()
    copy.flags.writeable = False
    return copy


def _unaligned(array: np.ndarray) -> np.ndarray:
    """A copy of ``array`` at an address one byte past an aligned one."""
    raw = np.zeros(array.nbytes + 64, np.uint8)
    start = (-raw.ctypes.data % 64) + 1
    view = raw[start : start + array.nbytes].view(array.dtype).reshape(array.shape)
    view[...] = array
    return view


def load(kind: str, artifact: str):
    if kind == "compiled":
        from rewriter.compile import load as load_compiled

        return load_compiled(artifact)
    from rewriter.iree import load as load_iree

    return load_iree(artifact, imports={})


def outcome(function, case: Case) -> tuple[str, str]:
    """The class name and message of what calling ``function`` raised ("", "" if nothing)."""
    try:
        function(*case.arguments())
    except Exception as error:  # the outcome is the test's to judge
        return type(error).__name__, str(error)
    return "", ""


def main(kind: str, artifact: str) -> None:
    """Run every refused case in this process, one JSON line each: [id, class, message]."""
    module = load(kind, artifact)
    for case in cases():
        if case.error is not None:
            print(json.dumps([case.id, *outcome(module[function_name(case.element)], case)]))
            sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
