"""``stablehlo.fft`` of any length and any number of dimensions, as the one form IREE lowers.

IREE 3.13's StableHLO input pipeline lowers a ``stablehlo.fft`` only over one dimension of
a power-of-two length: ``jnp.fft.rfft`` of 3,000 samples or ``jnp.fft.fft2`` of an 8 x 8
array fails to compile on both paths ("failed to legalize operation 'stablehlo.fft'").
``fft_forms`` writes every other ``stablehlo.fft`` as a private function of such ones:

- over several dimensions, one transform per dimension, as the transform is separable:
  ``FFT``/``IFFT`` along each dimension; ``RFFT`` along the last one, then ``FFT`` along the
  others; ``IFFT`` along the others, then ``IRFFT`` along the last one. A dimension other
  than the last is moved last (a transpose) and back;
- over one dimension of a length n that is no power of two, Bluestein's algorithm:
  ``jk = (j^2 + k^2 - (k - j)^2) / 2`` makes the transform the chirp ``w_k = e^(s i pi k^2
  / n)`` times the convolution of ``x_j w_j`` with ``conj(w)``, a circular convolution of
  power-of-two length m >= 2n - 1: ``IFFT_m(FFT_m(a) FFT_m(b))``. ``w`` and ``FFT_m(b)`` are
  constants computed in complex128 (numpy) and rounded to the element type, the inverse's
  ``1/n`` folded into the last chirp. ``RFFT`` is the ``FFT`` of the real samples, its first
  n/2 + 1 outputs, the imaginary parts of ``X_0`` (and ``X_(n/2)``) exactly 0, as XLA's real
  transform gives them (after the ``FFT`` along other dimensions of an ``rfftn``, those
  bins keep that transform's rounding); ``IRFFT`` the real part of the ``IFFT`` of the
  Hermitian extension (``X_(n-k) = conj(X_k)``), whose imaginary parts of ``X_0`` (and
  ``X_(n/2)``) only reach the imaginary part, which is dropped, as XLA drops them.

A 1-D transform along the last axis of a tensor whose other sizes are dynamic (a symbolic
batch), which neither IREE nor the writer below takes (its slices and reshapes are of
static sizes), is a product of each line by the transform's matrix (``_dense_transform``).

The results are the transform's up to rounding: a transform computed by FFTs of length m
is within a few ``log2(m)`` unit roundoffs of its norm (tests/test_fft_forms.py checks
against numpy's complex128 transform, as XLA's DUCC is). Lengths above ``LONGEST`` stay as
they are (their constants would take more than 32 MB of the module).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from .mlir_walk import outline_into_functions

LONGEST = 1 << 20
_PREFIX = "rw_fft_"
_COMPLEX = {"complex<f32>": np.complex64, "complex<f64>": np.complex128}
_REAL = {"complex<f32>": "f32", "complex<f64>": "f64"}
# IREE's own lowering is right for these: for complex<f64> it multiplies by f32 twiddles
# ("'arith.mulf' op requires the same type for all operands"), so those are written here.
_LOWERED = {"complex<f32>"}


def fft_forms(module: Any) -> int:
    """Rewrite, in the ``iree.compiler.ir`` module, every ``stablehlo.fft`` that IREE
    cannot lower into a call of a private function; return how many."""
    return outline_into_functions(module, "stablehlo.fft", _PREFIX, _function_text)


def _is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _function_text(ir: Any, operation: Any, name: str) -> str | None:
    """The text of ``func.func private @name`` computing the fft ``operation`` from
    transforms IREE lowers, or None when IREE lowers it as it is (or it is not taken)."""
    kind = str(operation.attributes["fft_type"]).split()[-1].rstrip(">")
    lengths = list(ir.DenseI64ArrayAttr(operation.attributes["fft_length"]))
    given = ir.RankedTensorType(operation.operands[0].type)
    result = ir.RankedTensorType(operation.results[0].type)
    if not (given.has_static_shape and result.has_static_shape):
        return _dense_transform(ir, kind, lengths, given, result, name)
    if 0 in given.shape:
        return None
    if any(n > LONGEST for n in lengths) or not lengths:
        return None
    complex_type = str(result.element_type if kind != "IRFFT" else given.element_type)
    if complex_type not in _COMPLEX:
        return None
    if len(lengths) == 1 and _is_power_of_two(lengths[0]) and complex_type in _LOWERED:
        return None
    writer = _Writer(complex_type)
    x = "%x"
    shape = list(given.shape)
    rank = len(shape)
    axes = list(range(rank - len(lengths), rank))
    if kind == "RFFT":
        x, shape = writer.along(x, shape, rank - 1, "RFFT", lengths[-1])
        steps = [(axis, "FFT") for axis in axes[:-1]]
    elif kind == "IRFFT":
        steps = [(axis, "IFFT") for axis in axes[:-1]]
    else:
        steps = [(axis, kind) for axis in axes]
    for axis, step in steps:
        x, shape = writer.along(x, shape, axis, step, lengths[axis - axes[0]])
    if kind == "IRFFT":
        x, shape = writer.along(x, shape, rank - 1, "IRFFT", lengths[-1])
    head = f"func.func private @{name}(%x: {given}) -> {result} {{"
    return "\n".join([head, *writer.lines, f"return {x} : {result}", "}"])


# The longest transform of a dynamic shape, computed as a product by a dense matrix: its
# constants (n x (n/2 + 1) complex f64 numbers for an RFFT) stay within 8 MB.
DENSE_LONGEST = 1024


def _dense_transform(
    ir: Any, kind: str, lengths: list[int], given: Any, result: Any, name: str
) -> str | None:
    """The function of a 1-D transform along the last axis of a tensor whose other sizes
    are dynamic (a symbolic batch), of rank 3 at most: the product of each line by the
    transform's matrix (``dense_matrices``), as ``dot_general`` ops of static inner sizes,
    which both paths compute for any batch (``dynamic_reshapes``). In f64 for f32 elements
    too, then rounded: within a few f64 unit roundoffs of the transform, where an FFT is
    within ``log2(n)`` of the element type's. None for the forms it does not take."""
    if len(lengths) != 1 or not 2 <= given.rank <= 3 or lengths[0] > DENSE_LONGEST:
        return None
    last = given.rank - 1
    if given.is_dynamic_dim(last) or result.is_dynamic_dim(last):
        return None
    complex_type = str(result.element_type if kind != "IRFFT" else given.element_type)
    if complex_type not in _COMPLEX:
        return None
    n = lengths[0]
    real = _REAL[complex_type]
    inputs = 1 if kind == "RFFT" else 2  # real, or real and imaginary parts
    outputs = 1 if kind == "IRFFT" else 2
    matrices = dense_matrices(kind, n)
    rows, columns = matrices[0][0].shape

    leading = ["?" if given.is_dynamic_dim(d) else str(given.shape[d]) for d in range(last)]

    def tensor(size: int, element: str) -> str:
        """The type of the operand's leading sizes, then ``size``, of ``element``."""
        return f"tensor<{'x'.join([*leading, str(size)])}x{element}>"

    lines = [f"func.func private @{name}(%x: {given}) -> {result} {{"]
    parts = ["%x"] if inputs == 1 else ["%x_re", "%x_im"]
    if inputs == 2:
        for part, op in zip(parts, ("real", "imag"), strict=True):
            lines.append(f"  {part} = stablehlo.{op} %x : ({given}) -> {tensor(rows, real)}")
    wide = []
    for index, part in enumerate(parts):
        if real == "f64":
            wide.append(part)
            continue
        lines.append(
            f"  %w{index} = stablehlo.convert {part} : ({tensor(rows, real)}) -> "
            f"{tensor(rows, 'f64')}"
        )
        wide.append(f"%w{index}")
    sums = []
    for out in range(outputs):
        terms = []
        for index, operand in enumerate(wide):
            matrix = matrices[out][index]
            data = np.ascontiguousarray(matrix, np.float64).tobytes().hex().upper()
            constant, product = f"%m{out}_{index}", f"%p{out}_{index}"
            lines += [
                f'  {constant} = stablehlo.constant dense<"0x{data}"> : '
                f"tensor<{rows}x{columns}xf64>",
                f"  {product} = stablehlo.dot_general {operand}, {constant}, "
                f"contracting_dims = [{last}] x [0] : ({tensor(rows, 'f64')}, "
                f"tensor<{rows}x{columns}xf64>) -> {tensor(columns, 'f64')}",
            ]
            terms.append(product)
        total = terms[0]
        for term_index, term in enumerate(terms[1:]):
            added = f"%s{out}_{term_index}"
            lines.append(f"  {added} = stablehlo.add {total}, {term} : {tensor(columns, 'f64')}")
            total = added
        if real != "f64":
            narrow = f"%n{out}"
            lines.append(
                f"  {narrow} = stablehlo.convert {total} : ({tensor(columns, 'f64')}) -> "
                f"{tensor(columns, real)}"
            )
            total = narrow
        sums.append(total)
    if outputs == 2:
        lines.append(
            f"  %y = stablehlo.complex {sums[0]}, {sums[1]} : {tensor(columns, complex_type)}"
        )
        sums = ["%y"]
    lines += [f"  return {sums[0]} : {result}", "}"]
    return "\n".join(lines)


def dense_matrices(kind: str, n: int) -> list[list[np.ndarray]]:
    """The real matrices of the 1-D ``kind`` of length n, by output part (real, imaginary)
    and input part (real, imaginary): output part ``o`` is the sum over input parts ``i``
    of ``input_i @ matrices[o][i]``. The angles are ``2 pi r / n`` with ``r = jk mod n``
    taken exactly; where ``4 r`` is a multiple of n the sine and cosine are exactly 0 or
    +-1, so that the imaginary parts of an RFFT's ``X_0`` and ``X_(n/2)`` are 0, as XLA's.
    IRFFT reads ``X_0 .. X_(n/2)`` of the Hermitian extension ``X_(n-k) = conj(X_k)`` and
    drops the imaginary parts of ``X_0`` (and ``X_(n/2)``), as XLA does."""
    j = np.arange(n)
    if kind == "IRFFT":
        m = n // 2 + 1
        k = np.arange(m)
        cos, sin = _unit_circle(np.outer(k, j) % n, n)
        weight = np.full(m, 2.0)
        weight[0] = 1.0
        if n % 2 == 0:
            weight[-1] = 1.0
        real_rows = weight[:, None] * cos / n
        imaginary_rows = -weight[:, None] * sin / n
        imaginary_rows[0] = 0.0
        if n % 2 == 0:
            imaginary_rows[-1] = 0.0
        return [[real_rows, imaginary_rows]]
    columns = n // 2 + 1 if kind == "RFFT" else n
    cos, sin = _unit_circle(np.outer(j, np.arange(columns)) % n, n)
    sign = 1.0 if kind == "IFFT" else -1.0
    scale = 1.0 / n if kind == "IFFT" else 1.0
    # (a + b i)(cos + sign sin i) = (a cos - b sign sin) + (a sign sin + b cos) i
    real_part = [cos * scale, -sign * sin * scale]
    imaginary_part = [sign * sin * scale, cos * scale]
    if kind == "RFFT":
        return [real_part[:1], imaginary_part[:1]]
    return [real_part, imaginary_part]


def _unit_circle(r: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``cos`` and ``sin`` of ``2 pi r / n``, exact where ``4 r`` is a multiple of n."""
    angle = 2 * np.pi * r / n
    cos, sin = np.cos(angle), np.sin(angle)
    quarter = (4 * r) % n == 0
    turns = (4 * r[quarter]) // n  # 0, 1, 2, 3 quarter turns
    cos[quarter] = np.array([1.0, 0.0, -1.0, 0.0])[turns]
    sin[quarter] = np.array([0.0, 1.0, 0.0, -1.0])[turns]
    return cos, sin


class _Writer:
    """The lines of the function, with fresh SSA names."""

    def __init__(self, complex_type: str):
        self.complex = complex_type
        self.real = _REAL[complex_type]
        self.lines: list[str] = []
        self.names = itertools.count()

    def fresh(self) -> str:
        return f"%v{next(self.names)}"

    def tensor(self, shape: list[int], element: str) -> str:
        return f"tensor<{'x'.join(map(str, shape))}x{element}>" if shape else f"tensor<{element}>"

    def element(self, step: str, before: bool) -> str:
        """The element type of a 1-D ``step``'s operand (``before``) or result."""
        real_side = (step == "RFFT" and before) or (step == "IRFFT" and not before)
        return self.real if real_side else self.complex

    def along(
        self, x: str, shape: list[int], axis: int, step: str, n: int
    ) -> tuple[str, list[int]]:
        """A 1-D ``step`` of length ``n`` along ``axis`` of ``x`` (of ``shape``): its value
        and shape. An axis other than the last is moved last and back."""
        last = len(shape) - 1
        if axis == last:
            return self.last(x, shape, step, n)
        order = list(range(len(shape)))
        order[axis], order[last] = last, axis
        moved_shape = [shape[d] for d in order]
        moved = self.transpose(x, shape, order, self.element(step, True))
        done, done_shape = self.last(moved, moved_shape, step, n)
        back_shape = [done_shape[d] for d in order]
        return self.transpose(done, done_shape, order, self.element(step, False)), back_shape

    def transpose(self, x: str, shape: list[int], order: list[int], element: str) -> str:
        out = self.fresh()
        moved = [shape[d] for d in order]
        self.lines.append(
            f"{out} = stablehlo.transpose {x}, dims = {order} : ({self.tensor(shape, element)}) "
            f"-> {self.tensor(moved, element)}"
        )
        return out

    def last(self, x: str, shape: list[int], step: str, n: int) -> tuple[str, list[int]]:
        """A 1-D ``step`` of length ``n`` along the last axis."""
        out_shape = list(shape)
        out_shape[-1] = n // 2 + 1 if step == "RFFT" else n
        if _is_power_of_two(n) and self.complex in _LOWERED:
            out = self.fresh()
            before = self.tensor(shape, self.element(step, True))
            after = self.tensor(out_shape, self.element(step, False))
            self.lines.append(
                f"{out} = stablehlo.fft {x}, type = {step}, length = [{n}] : ({before}) -> {after}"
            )
            return out, out_shape
        lines = int(np.prod(shape[:-1], dtype=np.int64))
        flat = self.reshape(x, shape, [lines, shape[-1]], self.element(step, True))
        if step == "RFFT":
            flat = self.to_complex(flat, [lines, n])
            done = self.transform(flat, lines, n, inverse=False)
            done = self.real_ends(self.slice(done, [lines, n], n // 2 + 1), lines, n)
        elif step == "IRFFT":
            full = self.hermitian(flat, lines, n)
            done = self.transform(full, lines, n, inverse=True)
            out = self.fresh()
            self.lines.append(
                f"{out} = stablehlo.real {done} : ({self.tensor([lines, n], self.complex)}) -> "
                f"{self.tensor([lines, n], self.real)}"
            )
            done = out
        else:
            done = self.transform(flat, lines, n, inverse=step == "IFFT")
        element = self.element(step, False)
        return self.reshape(done, [lines, out_shape[-1]], out_shape, element), out_shape

    def reshape(self, x: str, shape: list[int], to: list[int], element: str) -> str:
        if shape == to:
            return x
        out = self.fresh()
        self.lines.append(
            f"{out} = stablehlo.reshape {x} : ({self.tensor(shape, element)}) -> "
            f"{self.tensor(to, element)}"
        )
        return out

    def to_complex(self, x: str, shape: list[int]) -> str:
        out = self.fresh()
        self.lines.append(
            f"{out} = stablehlo.convert {x} : ({self.tensor(shape, self.real)}) -> "
            f"{self.tensor(shape, self.complex)}"
        )
        return out

    def slice(self, x: str, shape: list[int], keep: int) -> str:
        out = self.fresh()
        self.lines.append(
            f"{out} = stablehlo.slice {x} [0:{shape[0]}, 0:{keep}] : "
            f"({self.tensor(shape, self.complex)}) -> {self.tensor([shape[0], keep], self.complex)}"
        )
        return out

    def real_ends(self, x: str, lines: int, n: int) -> str:
        """``x``, the n/2 + 1 outputs of each line's transform of real samples, with the
        imaginary parts of ``X_0`` and, for an even n, ``X_(n/2)`` exactly 0: they are
        sums of the real samples (with signs), whose imaginary part is 0, as XLA's real
        transform gives it; the complex transform leaves its rounding there (a phase of -pi
        where jax.jit gives pi, for a negative sum)."""
        half = n // 2 + 1
        inner = half - 2 if n % 2 == 0 else half - 1  # the columns between the real ones
        whole = self.tensor([lines, half], self.complex)
        reals = self.tensor([lines, half], self.real)
        column = self.tensor([lines, 1], self.real)
        real, imaginary, zero, out = (self.fresh() for _ in range(4))
        self.lines += [
            f"{real} = stablehlo.real {x} : ({whole}) -> {reals}",
            f"{imaginary} = stablehlo.imag {x} : ({whole}) -> {reals}",
            f"{zero} = stablehlo.constant dense<0.0> : {column}",
        ]
        parts = [(zero, column)]
        if inner > 0:
            cut = self.fresh()
            part = self.tensor([lines, inner], self.real)
            self.lines.append(
                f"{cut} = stablehlo.slice {imaginary} [0:{lines}, 1:{inner + 1}] : "
                f"({reals}) -> {part}"
            )
            parts.append((cut, part))
        if n % 2 == 0 and half > 1:
            parts.append((zero, column))
        joined = self.fresh()
        self.lines += [
            f"{joined} = stablehlo.concatenate {', '.join(v for v, _ in parts)}, dim = 1 : "
            f"({', '.join(t for _, t in parts)}) -> {reals}",
            f"{out} = stablehlo.complex {real}, {joined} : {whole}",
        ]
        return out

    def hermitian(self, x: str, lines: int, n: int) -> str:
        """The n outputs whose first n/2 + 1 are ``x``'s (lines x (n/2 + 1)), the others
        ``X_(n-k) = conj(X_k)``."""
        half = n // 2 + 1
        tail = n - half
        given = self.tensor([lines, half], self.complex)
        part = self.tensor([lines, tail], self.complex)
        cut, conjugate, turned, out = (self.fresh() for _ in range(4))
        real, imaginary, negated = (self.fresh() for _ in range(3))
        reals = self.tensor([lines, tail], self.real)
        self.lines += [
            f"{cut} = stablehlo.slice {x} [0:{lines}, 1:{tail + 1}] : ({given}) -> {part}",
            f"{real} = stablehlo.real {cut} : ({part}) -> {reals}",
            f"{imaginary} = stablehlo.imag {cut} : ({part}) -> {reals}",
            f"{negated} = stablehlo.negate {imaginary} : {reals}",
            f"{conjugate} = stablehlo.complex {real}, {negated} : {part}",
            f"{turned} = stablehlo.reverse {conjugate}, dims = [1] : {part}",
            f"{out} = stablehlo.concatenate {x}, {turned}, dim = 1 : ({given}, {part}) -> "
            f"{self.tensor([lines, n], self.complex)}",
        ]
        return out

    def scaled(self, x: str, values: np.ndarray, shape: list[int], dimension: int) -> str:
        """``x`` (complex, of ``shape``) times the complex ``values`` along ``dimension``,
        multiplied out in real arithmetic: IREE crashes packing a complex<f64> constant."""
        real = self.tensor(shape, self.real)
        row = self.tensor([len(values)], self.real)
        dtype = np.float32 if self.real == "f32" else np.float64
        parts = []
        for part in (values.real, values.imag):
            constant, spread = self.fresh(), self.fresh()
            data = np.ascontiguousarray(part, dtype).tobytes().hex().upper()
            self.lines += [
                f'{constant} = stablehlo.constant dense<"0x{data}"> : {row}',
                f"{spread} = stablehlo.broadcast_in_dim {constant}, dims = [{dimension}] : "
                f"({row}) -> {real}",
            ]
            parts.append(spread)
        c, d = parts
        a, b, ac, bd, ad, bc, re, im, out = (self.fresh() for _ in range(9))
        self.lines += [
            f"{a} = stablehlo.real {x} : ({self.tensor(shape, self.complex)}) -> {real}",
            f"{b} = stablehlo.imag {x} : ({self.tensor(shape, self.complex)}) -> {real}",
            f"{ac} = stablehlo.multiply {a}, {c} : {real}",
            f"{bd} = stablehlo.multiply {b}, {d} : {real}",
            f"{ad} = stablehlo.multiply {a}, {d} : {real}",
            f"{bc} = stablehlo.multiply {b}, {c} : {real}",
            f"{re} = stablehlo.subtract {ac}, {bd} : {real}",
            f"{im} = stablehlo.add {ad}, {bc} : {real}",
            f"{out} = stablehlo.complex {re}, {im} : {self.tensor(shape, self.complex)}",
        ]
        return out

    def bluestein(self, x: str, lines: int, n: int, inverse: bool) -> str:
        """The transform of length ``n`` of each line of ``x`` (lines x n, complex), by
        convolutions of power-of-two length (module docstring)."""
        m = 1 << (2 * n - 2).bit_length()  # >= 2n - 1
        sign = 1.0 if inverse else -1.0
        t = np.arange(n, dtype=np.int64)
        chirp = np.exp(sign * 1j * np.pi * ((t * t) % (2 * n)) / n)
        b = np.zeros(m, np.complex128)
        b[:n] = np.conj(chirp)
        b[m - n + 1 :] = np.conj(chirp[1:])[::-1]
        last = chirp / n if inverse else chirp
        rows, wide = [lines, n], [lines, m]
        first = self.scaled(x, chirp, rows, 1)
        # zeros after each line, real and imaginary parts apart: IREE cannot splat a
        # complex<f64> zero (128 bits)
        zero, re, im, re_padded, im_padded, padded, kept = (self.fresh() for _ in range(7))
        row_real, wide_real = self.tensor(rows, self.real), self.tensor(wide, self.real)
        pad = f"low = [0, 0], high = [0, {m - n}], interior = [0, 0]"
        self.lines += [
            f"{zero} = stablehlo.constant dense<0.0> : {self.tensor([], self.real)}",
            f"{re} = stablehlo.real {first} : ({self.tensor(rows, self.complex)}) -> {row_real}",
            f"{im} = stablehlo.imag {first} : ({self.tensor(rows, self.complex)}) -> {row_real}",
            f"{re_padded} = stablehlo.pad {re}, {zero}, {pad} : ({row_real}, "
            f"{self.tensor([], self.real)}) -> {wide_real}",
            f"{im_padded} = stablehlo.pad {im}, {zero}, {pad} : ({row_real}, "
            f"{self.tensor([], self.real)}) -> {wide_real}",
            f"{padded} = stablehlo.complex {re_padded}, {im_padded} : "
            f"{self.tensor(wide, self.complex)}",
        ]
        spectrum = self.power_of_two(padded, lines, m, inverse=False)
        product = self.scaled(spectrum, np.fft.fft(b), wide, 1)
        convolved = self.power_of_two(product, lines, m, inverse=True)
        self.lines.append(
            f"{kept} = stablehlo.slice {convolved} [0:{lines}, 0:{n}] : "
            f"({self.tensor(wide, self.complex)}) -> {self.tensor(rows, self.complex)}"
        )
        return self.scaled(kept, last, rows, 1)

    def transform(self, x: str, lines: int, n: int, inverse: bool) -> str:
        """The complex transform of length ``n`` of each line of ``x`` (lines x n)."""
        if _is_power_of_two(n):
            return self.power_of_two(x, lines, n, inverse)
        return self.bluestein(x, lines, n, inverse)

    def power_of_two(self, x: str, lines: int, m: int, inverse: bool) -> str:
        """The transform of power-of-two length ``m`` of each line of ``x``: IREE's
        ``stablehlo.fft`` where it lowers it right, else ``radix_2``."""
        if self.complex not in _LOWERED:
            return self.radix_2(x, lines, m, inverse)
        out = self.fresh()
        wide = self.tensor([lines, m], self.complex)
        kind = "IFFT" if inverse else "FFT"
        self.lines.append(
            f"{out} = stablehlo.fft {x}, type = {kind}, length = [{m}] : ({wide}) -> {wide}"
        )
        return out

    def radix_2(self, x: str, lines: int, m: int, inverse: bool) -> str:
        """The iterative radix-2 Cooley-Tukey transform of each line of ``x`` (lines x m):
        the samples in bit-reversed order (a transpose of the index's binary digits), then
        one stage per digit, each joining pairs of transforms of length h into ones of 2h:
        ``X_k = E_k + w^k O_k``, ``X_(k+h) = E_k - w^k O_k``, ``w = e^(-+2 pi i / 2h)``
        (numpy's, in complex128, rounded to the element type); the inverse divided by m."""
        t = m.bit_length() - 1
        wide = self.tensor([lines, m], self.complex)
        if t == 0:
            return x
        digits = [lines] + [2] * t
        split, turned, y = self.fresh(), self.fresh(), self.fresh()
        order = [0, *range(t, 0, -1)]
        self.lines += [
            f"{split} = stablehlo.reshape {x} : ({wide}) -> {self.tensor(digits, self.complex)}",
            f"{turned} = stablehlo.transpose {split}, dims = {order} : "
            f"({self.tensor(digits, self.complex)}) -> {self.tensor(digits, self.complex)}",
            f"{y} = stablehlo.reshape {turned} : ({self.tensor(digits, self.complex)}) -> {wide}",
        ]
        sign = 1.0 if inverse else -1.0
        for stage in range(t):
            h = 1 << stage
            blocks = m // (2 * h)
            four = [lines, blocks, 2, h]
            three = [lines, blocks, h]
            half = [lines, blocks, 1, h]
            viewed, first, second, a, b = (self.fresh() for _ in range(5))
            top, bottom, top4, bottom4, joined, y_next = (self.fresh() for _ in range(6))
            c = lambda shape: self.tensor(shape, self.complex)  # noqa: E731
            self.lines += [
                f"{viewed} = stablehlo.reshape {y} : ({wide}) -> {c(four)}",
                f"{first} = stablehlo.slice {viewed} [0:{lines}, 0:{blocks}, 0:1, 0:{h}] : "
                f"({c(four)}) -> {c(half)}",
                f"{second} = stablehlo.slice {viewed} [0:{lines}, 0:{blocks}, 1:2, 0:{h}] : "
                f"({c(four)}) -> {c(half)}",
                f"{a} = stablehlo.reshape {first} : ({c(half)}) -> {c(three)}",
                f"{b} = stablehlo.reshape {second} : ({c(half)}) -> {c(three)}",
            ]
            twiddle = np.exp(sign * 2j * np.pi * np.arange(h) / (2 * h))
            turned_b = self.scaled(b, twiddle, three, 2)
            self.lines += [
                f"{top} = stablehlo.add {a}, {turned_b} : {c(three)}",
                f"{bottom} = stablehlo.subtract {a}, {turned_b} : {c(three)}",
                f"{top4} = stablehlo.reshape {top} : ({c(three)}) -> {c(half)}",
                f"{bottom4} = stablehlo.reshape {bottom} : ({c(three)}) -> {c(half)}",
                f"{joined} = stablehlo.concatenate {top4}, {bottom4}, dim = 2 : "
                f"({c(half)}, {c(half)}) -> {c(four)}",
                f"{y_next} = stablehlo.reshape {joined} : ({c(four)}) -> {wide}",
            ]
            y = y_next
        if not inverse:
            return y
        return self.scaled(y, np.full(m, 1.0 / m, np.complex128), [lines, m], 1)
