"""What a loaded module's function takes for each parameter, and what it refuses.

Both loaders (``rewriter.compile.load`` and ``rewriter.iree.load``) check every argument
here, before anything reaches compiled code, IREE or an import, and with the same words.
The rule is numpy's ``same_kind`` casting with the values kept:

- an array (or numpy scalar) whose dtype numpy's ``same_kind`` casting does not take to
  the parameter's (a float for an integer, a complex for a float, an integer for ``i1``,
  a signed integer for an unsigned one) is a ``TypeError``; so is anything that is no
  number or array (``None``, a string, bytes, an object array);
- integers must keep their value: one out of the parameter's range (``2**40 + 5`` for
  ``i32``, ``4e9`` of ``uint32`` for ``i32``, ``-1`` for ``ui8``) or that a float type
  cannot hold exactly (``2**24 + 1`` for ``f32``) is a ``ValueError``;
- floats (and complex numbers) are rounded to a narrower type's precision, as numpy rounds
  them (``0.1`` for ``f32`` is ``np.float32(0.1)``); a finite value beyond its range (``1e300``
  for ``f32``) is a ``ValueError``. NaN and infinities stay what they are;
- Python numbers count by their value, as numpy's own weak scalars do: ``3`` is fine for
  ``ui8``, ``f32`` or ``complex<f64>``, ``0.5`` for ``f16``, ``True`` for anything; so do
  (nested) lists of them: ``[1, 2]`` for ``ui8``;
- the shape must be the parameter's: the rank, and every static dimension (a dynamic one,
  ``?``, takes any size); otherwise a ``ValueError``.

Every message names the function, the argument's position and, when the module records it,
JAX's name of the argument: ``main: argument 0 ('x') ...``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..syntax.element_types import BY_MLIR


@dataclass(frozen=True)
class Parameter:
    """One parameter of a loaded function: where it is, and the tensor type it takes."""

    function: str  # the function's name in the module
    index: int  # its position
    name: str | None  # JAX's name of the argument (``loc("x")``), when known
    element: str  # MLIR element type
    shape: tuple[int, ...]  # -1 for a dynamic dimension
    dtype: np.dtype

    @property
    def where(self) -> str:
        named = f" ({self.name!r})" if self.name else ""
        return f"{self.function}: argument {self.index}{named}"

    @property
    def shape_text(self) -> str:
        """The shape as numpy prints one, ``?`` for a dynamic dimension: ``(?, 8)``."""
        dims = ["?" if d < 0 else str(d) for d in self.shape]
        return f"({', '.join(dims)}{',' if len(dims) == 1 else ''})"


def parameters(
    function: str,
    types: Sequence[tuple[str, tuple[int, ...]]],
    names: Sequence[str | None] = (),
) -> tuple[Parameter, ...]:
    """The parameters of ``function`` from its ``(element, shape)`` types and JAX's names."""
    known = list(names) + [None] * (len(types) - len(names))
    result = []
    for index, ((element, shape), name) in enumerate(zip(types, known, strict=True)):
        row = BY_MLIR.get(element)
        if row is None:
            raise TypeError(f"{function}: no numpy type for MLIR element type {element}")
        result.append(Parameter(function, index, name, element, tuple(shape), row.dtype))
    return tuple(result)


def check_count(function: str, arguments: Sequence[object], expected: int) -> None:
    if len(arguments) != expected:
        raise TypeError(f"{function} takes {expected} arrays, got {len(arguments)}")


def check_shared_sizes(
    function: str,
    shared: Sequence[tuple[str, Sequence[tuple[int, int]]]],
    shapes: Sequence[tuple[int, ...]],
) -> None:
    """Raise ValueError when dimensions that JAX exported as one dimension variable
    (``Entry.shared_sizes``) have different sizes in ``shapes``, the arrays given: the
    compiled code reads them as one size, and would read past the shorter array. The C
    API's message."""
    for variable, places in shared:
        (first, first_dim), *others = places
        for other, other_dim in others:
            if shapes[other][other_dim] != shapes[first][first_dim]:
                raise ValueError(
                    f"{function}: argument {other} dimension {other_dim} is "
                    f"{shapes[other][other_dim]}, argument {first} dimension {first_dim} is "
                    f"{shapes[first][first_dim]}: both are JAX's dimension variable {variable}"
                )


def convert(value: object, parameter: Parameter) -> np.ndarray:
    """``value`` as an array of the parameter's dtype and shape, or the error that says
    why it is not one (module docstring). An array of the right dtype is returned as it
    is (not copied, contiguous or not)."""
    dtype = parameter.dtype
    if isinstance(value, np.ndarray) and value.dtype == dtype:
        _check_shape(value, parameter)
        return value
    if isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic):
        converted = _python_number(value, parameter)
    elif isinstance(value, (list, tuple)):
        converted = _python_list(value, parameter)
    else:
        array = _as_array(value, parameter)
        _check_shape(array, parameter)
        if array.dtype == dtype:
            return array
        if not np.can_cast(array.dtype, dtype, casting="same_kind"):
            raise TypeError(
                f"{parameter.where} is {_described(array)}, which does not convert to "
                f"{parameter.element} (numpy's 'same_kind' casting)"
            )
        with np.errstate(all="ignore"):  # what the cast loses is checked next
            converted = array.astype(dtype)
        _check_values(array, converted, parameter)
    _check_shape(converted, parameter)
    return converted


def _as_array(value: object, parameter: Parameter) -> np.ndarray:
    if value is None or isinstance(value, (str, bytes, bytearray)):
        raise TypeError(
            f"{parameter.where} is {type(value).__name__}, not an array or a number "
            f"of {parameter.element}"
        )
    try:
        array = np.asarray(value)
    except (TypeError, ValueError, OverflowError) as error:
        raise TypeError(f"{parameter.where} is not an array: {error}") from None
    if _category(array.dtype) is None:
        raise TypeError(
            f"{parameter.where} is {_described(array)}, not an array or a number of "
            f"{parameter.element}"
        )
    return array


# What a Python number may become, by its kind (numpy's weak scalars): a bool anything,
# an int any integer, float or complex type, a float a float or complex type.
_PYTHON_TARGETS = {"b": "buifc", "i": "uifc", "f": "fc", "c": "c"}


def _python_number(value: bool | int | float | complex, parameter: Parameter) -> np.ndarray:
    """A Python number as a 0-d array of the parameter's dtype, judged by its value."""
    source = next(c for t, c in _PYTHON_KINDS if isinstance(value, t))
    target = _category(parameter.dtype) or "b"
    if target not in _PYTHON_TARGETS[source]:
        raise TypeError(
            f"{parameter.where} is a Python {type(value).__name__}, which does not convert "
            f"to {parameter.element} (numpy's 'same_kind' casting)"
        )
    if isinstance(value, int) and target in "ui":
        info = np.iinfo(parameter.dtype)
        if not info.min <= value <= info.max:
            raise ValueError(
                f"{parameter.where}: {_shown(value)} is out of range for {parameter.element} "
                f"({info.min} to {info.max})"
            )
    try:
        with np.errstate(all="ignore"):  # what the conversion loses is checked next
            converted = np.asarray(value, parameter.dtype)
    except OverflowError:
        raise ValueError(
            f"{parameter.where}: {_shown(value)} is out of range for {parameter.element}"
        ) from None
    if source in "fc" and np.isfinite(value) and not np.isfinite(converted):
        raise ValueError(f"{parameter.where}: {value} is out of range for {parameter.element}")
    if source == "i" and target in "fc":
        real = converted.real if target == "c" else converted
        wide = float(real.astype(np.float64))  # exact: every float type here fits in f64
        if not np.isfinite(wide):
            raise ValueError(
                f"{parameter.where}: {_shown(value)} is out of range for {parameter.element}"
            )
        if int(wide) != value:
            raise ValueError(
                f"{parameter.where}: {_shown(value)} cannot be represented exactly in "
                f"{parameter.element}"
            )
    return converted


def _python_list(value: list | tuple, parameter: Parameter) -> np.ndarray:
    """A (nested) list: each element converted as it would be alone, then one array."""
    elements = np.asarray(value, dtype=object)
    if any(isinstance(e, (list, tuple, np.ndarray)) for e in elements.flat):
        raise TypeError(f"{parameter.where} is not an array: a nested list of unequal lengths")
    _check_shape(elements, parameter)
    one = replace(parameter, shape=())
    converted = [convert(element, one) for element in elements.ravel()]
    return np.array(converted, parameter.dtype).reshape(elements.shape)


# The kind of a Python number (bool before int: True is an int too).
_PYTHON_KINDS = ((bool, "b"), (int, "i"), (float, "f"), (complex, "c"))


def _check_values(array: np.ndarray, converted: np.ndarray, parameter: Parameter) -> None:
    """The cast of ``array`` to ``converted`` kept every value (module docstring)."""
    source, target = _category(array.dtype) or "b", _category(converted.dtype) or "b"
    if source == "b" or array.size == 0:
        return
    if target in "ui":  # from an integer (anything else was refused)
        info = np.iinfo(converted.dtype)
        low, high = int(array.min()), int(array.max())
        if low < info.min or high > info.max:
            bad = low if low < info.min else high
            raise ValueError(
                f"{parameter.where}: {bad} is out of range for {parameter.element} "
                f"({info.min} to {info.max})"
            )
    elif source in "ui":  # an integer to a float or complex type: exactly, or not at all
        values = converted.real if target == "c" else converted
        wide = values.astype(np.float64)  # exact: every float type here fits in f64
        info = np.iinfo(array.dtype)
        inside = np.isfinite(wide) & (wide >= float(info.min)) & (wide < float(info.max) + 1)
        exact = inside.copy()
        exact[inside] = wide[inside].astype(array.dtype) == array[inside]
        if not exact.all():
            bad = array[~exact].flat[0]
            raise ValueError(
                f"{parameter.where}: {bad} cannot be represented exactly in {parameter.element}"
            )
    else:  # a float or complex to a narrower one: rounded, but never to an infinity
        lost = np.isfinite(array) & ~np.isfinite(converted)
        if lost.any():
            bad = array[lost].flat[0]
            raise ValueError(f"{parameter.where}: {bad} is out of range for {parameter.element}")


def _check_shape(array: np.ndarray, parameter: Parameter) -> None:
    shape = parameter.shape
    if array.shape == shape:  # static dims, as most are: nothing more to compare
        return
    if array.ndim != len(shape) or any(
        want not in (-1, got) for want, got in zip(shape, array.shape, strict=True)
    ):
        raise ValueError(
            f"{parameter.where} has shape {array.shape}, expected {parameter.shape_text}"
        )


def _category(dtype: np.dtype) -> str | None:
    """numpy's kind of a number type (``b``, ``u``, ``i``, ``f``, ``c``), ml_dtypes' floats
    (bfloat16, ...) and integers included; None for anything else."""
    if dtype.kind in "buifc":
        return dtype.kind
    if dtype.kind == "V" and dtype.names is None and type(dtype.type).__module__ != "numpy":
        name = dtype.name
        if name.startswith(("float", "bfloat")):
            return "f"
        if name.startswith("uint"):
            return "u"
        if name.startswith("int"):
            return "i"
    return None


def _described(array: np.ndarray) -> str:
    return f"an array of {array.dtype}" if array.ndim else f"a {array.dtype} scalar"


def _shown(value: object) -> str:
    """A value for a message, cut short (a Python int may have thousands of digits)."""
    text = str(value)
    return text if len(text) <= 40 else f"{text[:20]}...{text[-8:]} ({len(text)} digits)"
