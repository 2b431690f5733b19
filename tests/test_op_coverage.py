"""Every kind of op jax emits on CPU runs on both paths and agrees with jax.jit.

Each program is made with jax, exported (``rewriter.export``), rewritten, then run on the
standalone path (``rewriter.compile``: compile_module + load) and on the IREE path
(``--abi iree``, ``rewriter.iree.load``), and compared with ``jax.jit`` on the same inputs.
docs/paths.md is the table of what these tests show.

Tolerances (docs/paths.md says why): f32, f64 and complex results agree to rtol 1e-6 where
both sides compute the same operations in the same order; f16 and bf16 results to one unit
in the last place of their type (both sides compute in f32 and round each result, and a
value within 1e-6 of a rounding boundary may round the other way); integers and booleans
exactly. Matrix products and Fourier transforms are sums that XLA, a BLAS and IREE add up
in different orders: they are checked against the error bound that every order satisfies
(``product_bound``, ``inverse_real_transform_bound``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from mlir_tools import LLVM_TOOLS, require_tool

import rewriter
from rewriter.compile import compile_module
from rewriter.compile import load as load_compiled
from rewriter.iree import load as load_iree

pytestmark = [pytest.mark.iree, pytest.mark.jax, pytest.mark.slow]

RTOL = 1e-6
UNIT_ROUNDOFF = {np.dtype(np.float32): 2.0**-24, np.dtype(np.float64): 2.0**-53}


@dataclass(frozen=True)
class Program:
    function: Callable[..., object]
    inputs: Callable[[np.random.Generator], list[np.ndarray]]
    x64: bool = False  # f64, complex128 and 64-bit integers need jax's x64 mode
    # A sum in another order (matrix products, transforms, scans): the largest difference
    # allowed per element, from the inputs (one array for every output, or a tuple of one
    # per output, None where that output is compared by assert_agrees); None: rtol 1e-6
    # (assert_agrees).
    bound: Callable[[list[np.ndarray]], object] | None = None


def normal(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        parts = rng.normal(size=(2, *shape))
        return (parts[0] + 1j * parts[1]).astype(dtype)
    return rng.normal(size=shape).astype(dtype)


def positive(rng, shape, dtype):
    return rng.uniform(0.1, 4.0, size=shape).astype(dtype)


def unsigned(rng, shape, dtype):
    return rng.integers(0, np.iinfo(dtype).max, size=shape, endpoint=True, dtype=dtype)


def nonzero_unsigned(rng, shape, dtype):
    return rng.integers(1, np.iinfo(dtype).max, size=shape, endpoint=True, dtype=dtype)


def complex_arithmetic(z, w):
    return z * w + z / (w + 1) - jnp.conj(z) * 2


def complex_functions(z):
    return jnp.exp(z), jnp.log(z), jnp.sqrt(z), jnp.abs(z), jnp.sin(z), jnp.tanh(z), z**3


def real_functions(x, y):
    return (
        jnp.sin(x),
        jnp.cos(x),
        jnp.exp(x),
        jnp.log(y),
        jnp.tanh(x),
        jnp.power(y, x),
        jax.scipy.special.erf(x),
        jnp.log1p(y),
        jnp.expm1(x),
        jax.lax.rsqrt(y),
        jnp.tan(x),
    )


def arctan2(x, y):
    return jnp.arctan2(x, y), jnp.arctan2(-y, x)


def cube_root(x):
    return jnp.cbrt(x)


def wide_range(rng, shape, dtype):
    """Both signs, magnitudes from 1e-100 to 1e100 (normal f64 numbers)."""
    signs = rng.choice(np.array([-1.0, 1.0]), shape)
    return (signs * 10.0 ** rng.uniform(-100, 100, shape)).astype(dtype)


def booleans(a, b, x):
    return a & ~b, a ^ b, jnp.where(a, x, -x), x > 0, jnp.logical_not(a).sum()


def unsigned_arithmetic(a, b):
    return a + b, a * b, a // b, a % b, a >> 3, jnp.maximum(a, b), a < b, a.astype(jnp.float32)


def signed_division(a, b):
    return a // b, a % b, jax.lax.div(a, b), jax.lax.rem(a, b), a << 2, -a >> 1


def half_arithmetic(x, y):
    """One rounding per result: XLA computes a chain of 16-bit float ops in f32 and rounds
    once, both paths round after every op (docs/paths.md)."""
    return x * y, x + y, x / y, jnp.exp(x), jnp.tanh(y), jnp.sqrt(jnp.abs(x)), jnp.maximum(x, y)


def half_sum(x, y):
    return (x * y).sum(axis=1)


def fft(z):
    return jnp.fft.fft(z), jnp.fft.ifft(z)


def real_fft(x):
    return jnp.fft.rfft(x)


def inverse_real_fft(z):
    return jnp.fft.irfft(z)


def matmul(a, b):
    return a @ b


def batched_transposed_matmul(a, b):
    return jnp.einsum("bqd,bkd->bqk", a, b)


def gamma(terms: int, dtype) -> float:
    """gamma_n = n u / (1 - n u): the relative error bound of a sum of n terms in precision u
    (Higham, Accuracy and Stability of Numerical Algorithms, 3.1)."""
    u = UNIT_ROUNDOFF[np.dtype(np.finfo(dtype).dtype)]
    return terms * u / (1 - terms * u)


def product_bound(inputs) -> np.ndarray:
    """XLA and a BLAS each compute every element of A @ B within gamma_K (|A| @ |B|) of the
    exact value, in whatever order they sum (Higham 3.1); complex inner products within
    sqrt(2) gamma_(K+2) (|A| @ |B|) (Higham 3.6). The two results differ by at most twice
    that."""
    a, b = (np.asarray(x) for x in inputs)
    k = a.shape[-1]
    magnitude = np.einsum("...ik,...jk->...ij" if a.ndim == 3 else "ik,kj->ij", abs(a), abs(b))
    each = np.sqrt(2) * gamma(k + 2, a.dtype) if a.dtype.kind == "c" else gamma(k, a.dtype)
    return 2 * each * magnitude


def inverse_real_transform_bound(z: np.ndarray, n: int) -> np.ndarray:
    """irfft: y_m = (1/n) sum over the n terms Z_k w^(mk) of the Hermitian extension Z of z,
    so sum |Z_k| <= 2 sum |z_k|. Any order of that complex sum is within
    sqrt(2) gamma_(n+2) (2/n) sum |z_k| of the exact value (Higham 3.6), the rounded
    twiddles |w - w^| <= u and the scaling by 1/n add at most 2u as much again; the two
    results differ by at most twice the total."""
    u = UNIT_ROUNDOFF[np.dtype(np.finfo(z.dtype).dtype)]
    scale = (2 / n) * np.abs(z).sum(axis=-1, keepdims=True)
    return 2 * (np.sqrt(2) * gamma(n + 2, z.dtype) + 2 * u) * scale


def conv2d(x, w):
    return jax.lax.conv_general_dilated(
        x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
    )


def conv2d_bound(inputs) -> np.ndarray:
    """A convolution is a product with K = kh * kw * c_in: ``product_bound`` with
    conv(|x|, |w|) (computed in f64) for |A| @ |B|."""
    x, w = (np.asarray(v) for v in inputs)
    with jax.enable_x64(True):
        magnitude = np.asarray(conv2d(np.abs(x).astype(np.float64), np.abs(w).astype(np.float64)))
    k = w.shape[0] * w.shape[1] * w.shape[2]
    return 2 * gamma(k, x.dtype) * magnitude


# A mask closed over by the program: a constant of 2640 booleans, which jax and iree-opt
# write in hex with a byte per element.
MASK = np.arange(2640).reshape(40, 66) % 3 == 0


def masked(x):
    return jnp.where(MASK, x, 0.0), jnp.where(MASK[:, :2], x[:, :2], 1.0)


def sorts(x):
    """jax's sorts: stable, NaNs last, -0 equal to 0, descending by reversing."""
    return (
        jnp.sort(x),
        jnp.argsort(x),
        jnp.argsort(x, descending=True),
        jnp.sort(x, descending=True),
    )


def flips(x):
    """Reversals, which IREE's pipeline cannot lower on unsigned elements by itself."""
    return jnp.flip(x), x[:, ::-1], jnp.flip(x, 0)


def complex_pads(z):
    """Pads with a constant value (edges, a negative edge, interior), as the gradient of a
    stack writes them: IREE cannot pad complex<f64> by itself."""
    return (
        jax.lax.pad(z, 0j, [(1, 0, 0), (0, 2, 0)]) * z[0, 0],
        jax.lax.pad(z, 1 - 2j, [(2, -1, 1), (0, 0, 2)]),
        jax.vjp(lambda a: jnp.stack([a, a * a]), z)[1](jnp.stack([z, 2 * z]))[0],
    )


def numpy_pad(z):
    return jnp.pad(z, ((1, 0), (0, 2)))


def sorts_along(x):
    return jnp.argsort(x, axis=0), jnp.argsort(x, axis=1), jnp.sort(x, axis=0)


def lexsort(a, b, c):
    return jnp.lexsort((a, b, c)), jnp.lexsort((c, a))


def sort_operands(k1, k2, v, w):
    """Two keys (the first decides first), four operands, as ``lax.sort`` takes them."""
    return jax.lax.sort((k1, k2, v, w), num_keys=2)


def ties(rng, shape, dtype):
    """Few distinct values, so that most keys tie with others."""
    return rng.integers(0, 4, size=shape).astype(dtype)


def special_floats(rng, shape, dtype):
    """Ties, both zeros, both infinities, NaNs of both signs and finite values."""
    values = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.5, -1.5, 2.0], dtype)
    return rng.choice(values, size=shape)


def two(shape, dtype, make=normal):
    return lambda rng: [make(rng, shape, dtype), make(rng, shape, dtype)]


def top_k(x):
    """The k largest of each row and their indices; of equal values the lower index first,
    NaN above +inf (jax's comparator is a total order). k = 7 and k = 35 of 40 (the compiled
    path's heap, with more wanted than not)."""
    return (*jax.lax.top_k(x, 7), *jax.lax.top_k(x, 35))


def top_k_many(x):
    """A k above 256, which the compiled path selects by quickselect rather than a heap."""
    return jax.lax.top_k(x, 300)


def scans(x):
    """Cumulative sums and products along each axis: XLA writes each as a reduce_window
    whose window is the whole axis."""
    return jnp.cumsum(x, 0), jnp.cumsum(x, 1), jnp.cumprod(x, 0), jnp.cumprod(x, 1)


def scan_bound(inputs):
    """Output j of a cumulative sum along an axis is a sum of j + 1 terms, in an order of
    each side's own (XLA's reduce_window or tree of partial sums, a loop or a scan here):
    any order is within gamma_j sum_(i <= j) |x_i| of the exact value (Higham 3.1), so the
    two sides differ by at most twice that. A product of j + 1 factors in any order is
    within gamma_j of its exact value, relatively (Higham, Lemma 3.1): twice gamma_j times the
    exact |product|. gamma_j is taken at the whole axis' length, its largest."""
    x = np.abs(np.asarray(inputs[0], np.float64))
    rows, columns = x.shape
    return (
        2 * gamma(rows, np.float32) * np.cumsum(x, 0),
        2 * gamma(columns, np.float32) * np.cumsum(x, 1),
        2 * gamma(rows, np.float32) * np.cumprod(x, 0),
        2 * gamma(columns, np.float32) * np.cumprod(x, 1),
    )


SCATTER_INDICES = np.array([0, 3, 3, -1, 7, 3, 100, 0], np.int32)  # repeated, negative, out
IN_RANGE_INDICES = np.array([0, 3, 3, -1, 7, 3, 5, 0], np.int32)  # repeated, negative


def scatters_at(indices: np.ndarray):
    """``.set`` at distinct indices (repeated ones leave the winner undefined in jax), then
    ``.add``, ``.max`` and ``.min`` at ``indices`` (jax drops updates out of range)."""

    def scatters(x, v):
        distinct = jnp.array([5, 1, -2, 0], jnp.int32)
        return (
            x.at[distinct].set(v[:4]),
            x.at[indices].add(v),
            x.at[indices].max(v),
            x.at[indices].min(v),
            x.at[indices, 1].add(v[:, 0]),
        )

    return scatters


def scatter_add_bound_at(indices: np.ndarray):
    """``x.at[i].add(v)`` adds to each row of x the updates aimed at it, a sum of at most
    m + 1 terms (m the most updates of one row) in an order of each side's own: within
    gamma_m (|x| + the sum of |v| aimed there) of the exact value (Higham 3.1), twice that
    between the sides. The other results move values and compare them: exact."""

    def scatter_add_bound(inputs):
        x, v = (np.asarray(a, np.float64) for a in inputs)
        rows = x.shape[0]
        kept = indices[(indices >= -rows) & (indices < rows)] % rows
        m = np.bincount(kept, minlength=rows).max()
        aimed = np.abs(x).copy()
        column = np.abs(x).copy()
        for position, index in enumerate(indices):
            if -rows <= index < rows:
                aimed[index] += np.abs(v[position])
                column[index, 1] += np.abs(v[position, 0])
        each = 2 * gamma(int(m) + 1, np.float32)
        return None, each * aimed, None, None, each * column

    return scatter_add_bound


def gathers(x, i):
    """Indexing (indices out of range are clamped), ``take`` (out of range: NaN) and
    ``take_along_axis``."""
    return (
        x[i],
        x[:, i],
        jnp.take(x, i, axis=1),
        jnp.take(x, i, axis=0, mode="clip"),
        jnp.take_along_axis(x, jnp.argsort(x, axis=1), axis=1),
        x[i, i % 3],
    )


def arg_extremes(x):
    """argmax and argmin along each axis and of the whole array: of equal extremes the
    first index, and for floats the first NaN."""
    return (
        jnp.argmax(x, 0),
        jnp.argmax(x, 1),
        jnp.argmin(x, 0),
        jnp.argmin(x, 1),
        jnp.argmax(x),
        jnp.argmin(x),
    )


def windows(x):
    """``lax.reduce_window``: max and sum over 2-D windows with strides and padding (SAME,
    VALID, explicit), and a window dilation."""
    low = jnp.array(-jnp.inf if x.dtype.kind == "f" else jnp.iinfo(x.dtype).min, x.dtype)
    zero = jnp.array(0, x.dtype)
    return (
        jax.lax.reduce_window(x, low, jax.lax.max, (2, 3), (1, 2), "SAME"),
        jax.lax.reduce_window(x, low, jax.lax.max, (3, 3), (2, 2), "VALID"),
        jax.lax.reduce_window(x, zero, jax.lax.add, (3, 2), (2, 1), ((1, 1), (0, 1))),
        jax.lax.reduce_window(x, zero, jax.lax.add, (2, 2), (1, 1), "VALID", None, (1, 2)),
    )


def window_bound(inputs):
    """The sums of ``windows`` in each side's order: within 2 gamma_w of the sum of |x|
    over the window (w its size, 6 or 4); the maxima are exact."""
    x = np.abs(np.asarray(inputs[0], np.float64))
    with jax.enable_x64(True):
        sums = windows(x)
    return (
        None,
        None,
        2 * gamma(6, np.float32) * np.asarray(sums[2]),
        2 * gamma(4, np.float32) * np.asarray(sums[3]),
    )


def special_functions(a, b, x):
    """jax's special functions (``chlo`` ops and the loops ``jax.scipy`` writes): ``a`` and
    ``b`` in [0.1, 4), ``x`` in [0, 1)."""
    return (
        jax.lax.lgamma(a),
        jax.lax.digamma(a),
        jax.lax.erf_inv(x * 1.8 - 0.9),
        jax.lax.bessel_i0e(a - 2),
        jax.lax.bessel_i1e(a - 2),
        jax.lax.igamma(a, b),
        jax.scipy.special.betainc(a, b, x),  # a while loop whose condition drops a value
    )


def special_functions_bound(inputs) -> tuple[np.ndarray, ...]:
    """8 units of roundoff of f32 at each result's magnitude (1 below it), the magnitude
    from scipy in f64: XLA and each path approximate ``exp`` and ``log`` with their own
    polynomials, an ulp or two apart, and a series or a continued fraction of them adds
    those differences up (5 units here, lgamma near its zero at 2 and betainc)."""
    import scipy.special as special

    a, b, x = (v.astype(np.float64) for v in inputs)
    exact = (
        special.gammaln(a),
        special.psi(a),
        special.erfinv(x * 1.8 - 0.9),
        special.i0e(a - 2),
        special.i1e(a - 2),
        special.gammainc(a, b),
        special.betainc(a, b, x),
    )
    unit = float(np.finfo(np.float32).eps)
    return tuple(8 * unit * np.maximum(np.abs(value), 1.0) for value in exact)


PROGRAMS = {
    "special_functions_float32": Program(
        special_functions,
        lambda r: [
            positive(r, (4, 6), np.float32),
            positive(r, (4, 6), np.float32),
            r.uniform(0, 1, (4, 6)).astype(np.float32),
        ],
        bound=special_functions_bound,
    ),  # fmt: skip
    "complex64_arithmetic": Program(complex_arithmetic, two((4, 5), np.complex64)),
    "complex128_arithmetic": Program(complex_arithmetic, two((4, 5), np.complex128), x64=True),
    "complex64_functions": Program(complex_functions, lambda r: [normal(r, (3, 7), np.complex64)]),
    "complex128_functions": Program(
        complex_functions, lambda r: [normal(r, (3, 7), np.complex128)], x64=True
    ),
    "float32_functions": Program(
        real_functions, lambda r: [normal(r, (4, 6), np.float32), positive(r, (4, 6), np.float32)]
    ),
    "float64_functions": Program(
        real_functions,
        lambda r: [normal(r, (4, 6), np.float64), positive(r, (4, 6), np.float64)],
        x64=True,
    ),
    "float32_arctan2": Program(
        arctan2, lambda r: [normal(r, (4, 6), np.float32), normal(r, (4, 6), np.float32)]
    ),
    "float64_arctan2": Program(
        arctan2, lambda r: [normal(r, (4, 6), np.float64), normal(r, (4, 6), np.float64)], x64=True
    ),
    "float64_cbrt": Program(cube_root, lambda r: [wide_range(r, (4, 6), np.float64)], x64=True),
    "bool": Program(
        booleans,
        lambda r: [r.random((3, 4)) < 0.5, r.random((3, 4)) < 0.5, normal(r, (3, 4), np.float32)],
    ),
    "uint8": Program(
        unsigned_arithmetic,
        lambda r: [unsigned(r, (5, 6), np.uint8), nonzero_unsigned(r, (5, 6), np.uint8)],
    ),
    "uint32": Program(
        unsigned_arithmetic,
        lambda r: [unsigned(r, (5, 6), np.uint32), nonzero_unsigned(r, (5, 6), np.uint32)],
    ),
    "uint64": Program(
        unsigned_arithmetic,
        lambda r: [unsigned(r, (5, 6), np.uint64), nonzero_unsigned(r, (5, 6), np.uint64)],
        x64=True,
    ),
    "int32_division": Program(
        signed_division,
        lambda r: [
            r.integers(-1000, 1000, (5, 6), dtype=np.int32),
            r.choice(np.array([-7, -3, -1, 1, 2, 5], np.int32), (5, 6)),
        ],
    ),
    "float16": Program(half_arithmetic, two((4, 8), np.float16)),
    "float16_sum": Program(half_sum, two((4, 8), np.float16)),
    "bfloat16": Program(half_arithmetic, two((4, 8), ml_dtypes.bfloat16)),
    "bfloat16_sum": Program(half_sum, two((4, 8), ml_dtypes.bfloat16)),
    "fft_complex64": Program(fft, lambda r: [normal(r, (3, 16), np.complex64)]),
    "rfft_float32": Program(real_fft, lambda r: [normal(r, (3, 16), np.float32)]),
    "irfft_complex64": Program(
        inverse_real_fft,
        lambda r: [normal(r, (3, 9), np.complex64)],
        bound=lambda inputs: inverse_real_transform_bound(inputs[0], 16),
    ),
    "matmul_float32": Program(matmul, two((64, 64), np.float32), bound=product_bound),
    "matmul_float64": Program(matmul, two((64, 64), np.float64), x64=True, bound=product_bound),
    "matmul_complex64": Program(matmul, two((32, 32), np.complex64), bound=product_bound),
    "conv2d_float32": Program(
        conv2d,
        lambda r: [normal(r, (2, 8, 8, 4), np.float32), normal(r, (3, 3, 4, 8), np.float32)],
        bound=conv2d_bound,
    ),
    "bool_mask_constant": Program(masked, lambda r: [normal(r, (40, 66), np.float32)]),
    "argsort_int32_ties": Program(
        jnp.argsort, lambda r: [np.array([3, 1, 2, 1, 3, 2, 1, 0] * 16, np.int32)]
    ),
    "sort_float32_special_values": Program(sorts, lambda r: [special_floats(r, 128, np.float32)]),
    "sort_float64_ties": Program(sorts, lambda r: [ties(r, 200, np.float64)], x64=True),
    "sort_float16_ties": Program(sorts, lambda r: [ties(r, 64, np.float16)]),
    "sort_uint32_ties": Program(sorts, lambda r: [ties(r, 100, np.uint32)]),
    "flip_uint8": Program(flips, lambda r: [unsigned(r, (5, 6), np.uint8)]),
    "flip_uint32": Program(flips, lambda r: [unsigned(r, (5, 6), np.uint32)]),
    "pad_complex128": Program(complex_pads, lambda r: [normal(r, (4, 5), np.complex128)], x64=True),
    "pad_complex64": Program(complex_pads, lambda r: [normal(r, (4, 5), np.complex64)]),
    "numpy_pad_complex128": Program(
        numpy_pad, lambda r: [normal(r, (4, 5), np.complex128)], x64=True
    ),
    "sort_bool": Program(sorts, lambda r: [r.random(50) < 0.5]),
    "sort_complex64_ties": Program(
        sorts, lambda r: [(ties(r, 64, np.float32) + 1j * ties(r, 64, np.float32))]
    ),
    "argsort_int8_along_each_axis": Program(sorts_along, lambda r: [ties(r, (12, 9), np.int8)]),
    "lexsort_three_keys": Program(
        lexsort,
        lambda r: [
            special_floats(r, 96, np.float32),
            ties(r, 96, np.int32),
            r.random(96) < 0.5,
        ],
    ),
    "sort_two_keys_four_operands": Program(
        sort_operands,
        lambda r: [
            ties(r, (3, 40), np.float64),
            ties(r, (3, 40), np.uint64),
            r.integers(-100, 100, (3, 40)),
            normal(r, (3, 40), np.float32),
        ],
        x64=True,
    ),
    "batched_transposed_matmul_float32": Program(
        batched_transposed_matmul, two((4, 16, 32), np.float32), bound=product_bound
    ),
    "top_k_float32_ties": Program(top_k, lambda r: [special_floats(r, (5, 40), np.float32)]),
    "top_k_int32_ties": Program(top_k, lambda r: [ties(r, (5, 40), np.int32)]),
    "top_k_large_k_float32": Program(
        top_k_many, lambda r: [special_floats(r, (3, 700), np.float32)]
    ),
    "top_k_large_k_int32_ties": Program(top_k_many, lambda r: [ties(r, (3, 700), np.int32)]),
    "cumsum_cumprod_int32": Program(scans, lambda r: [r.integers(-3, 4, (12, 9)).astype(np.int32)]),
    "cumsum_cumprod_float32": Program(
        scans, lambda r: [r.uniform(0.5, 1.5, (12, 9)).astype(np.float32)], bound=scan_bound
    ),
    "scatter_float32": Program(
        scatters_at(SCATTER_INDICES),
        lambda r: [normal(r, (8, 3), np.float32), normal(r, (8, 3), np.float32)],
        bound=scatter_add_bound_at(SCATTER_INDICES),
    ),
    "scatter_int32": Program(
        scatters_at(SCATTER_INDICES),
        lambda r: [ties(r, (8, 3), np.int32), r.integers(-9, 9, (8, 3)).astype(np.int32)],
    ),
    "scatter_in_range_float32": Program(
        scatters_at(IN_RANGE_INDICES),
        lambda r: [normal(r, (8, 3), np.float32), normal(r, (8, 3), np.float32)],
        bound=scatter_add_bound_at(IN_RANGE_INDICES),
    ),
    "scatter_in_range_int32": Program(
        scatters_at(IN_RANGE_INDICES),
        lambda r: [ties(r, (8, 3), np.int32), r.integers(-9, 9, (8, 3)).astype(np.int32)],
    ),
    "gather_float32": Program(
        gathers,
        lambda r: [
            normal(r, (6, 7), np.float32),
            np.array([0, 5, -1, 2, 2, 9, -7], np.int32),
        ],
    ),
    "argmax_argmin_int32_ties": Program(arg_extremes, lambda r: [ties(r, (9, 13), np.int32)]),
    "argmax_argmin_float32_special_values": Program(
        arg_extremes, lambda r: [special_floats(r, (9, 13), np.float32)]
    ),
    "reduce_window_float32": Program(
        windows, lambda r: [normal(r, (9, 11), np.float32)], bound=window_bound
    ),
    "reduce_window_int32": Program(windows, lambda r: [ties(r, (9, 11), np.int32)]),
}


def x64(program: Program):
    return jax.enable_x64(True) if program.x64 else contextlib.nullcontext()


def run_compiled(text: str, inputs: list[np.ndarray], work: Path):
    compile_module(rewriter.rewrite(text).text, work / "libprogram.so")
    return load_compiled(work / "libprogram.so").main(*inputs)


def run_iree(text: str, inputs: list[np.ndarray], work: Path):
    module = work / "program.iree.mlir"
    module.write_text(rewriter.rewrite(text, abi="iree").text)
    return load_iree(module, imports={}).main(*inputs)


PATHS = {"compile": run_compiled, "iree": run_iree}

# What does not agree yet, and why: expected to fail (strictly: a fix makes the test fail
# until it is taken off this list). docs/paths.md lists the same.
KNOWN_GAPS: dict[tuple[str, str], str] = {}

# f64 libm functions (and f32 atan2, which rewriter.iree computes with f64's): IREE links
# them as a system library, with the system's linker.
# Cases whose IREE module links libm as a system library (f64 functions; f32 atan2, which
# the IREE path computes in f64: complex64's arg and log take it too): they need `ld`.
SYSTEM_LINKED = {
    "float32_functions",
    "special_functions_float32",
    "float64_functions",
    "float32_arctan2",
    "float64_arctan2",
    "complex64_functions",
    "complex128_functions",
}


def _native_tools(name: str, path: str) -> tuple[str, ...]:
    """What a case needs besides Python packages (skipped without it, failing under CI)."""
    if path == "compile":
        return LLVM_TOOLS
    return ("ld",) if name in SYSTEM_LINKED else ()


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_runs_and_agrees_with_jax(
    name: str, path: str, tmp_path: Path, request: pytest.FixtureRequest
):
    for tool in _native_tools(name, path):
        require_tool(tool)
    if (name, path) in KNOWN_GAPS:
        request.applymarker(pytest.mark.xfail(reason=KNOWN_GAPS[name, path], strict=True))
    program = PROGRAMS[name]
    inputs = program.inputs(np.random.default_rng(0))
    with x64(program):
        text = rewriter.export(program.function, *inputs).text
        expected = jax.jit(program.function)(*inputs)
    got = PATHS[path](text, inputs, tmp_path)
    expected = tuple(expected) if isinstance(expected, (tuple, list)) else (expected,)
    got = tuple(got) if isinstance(got, (tuple, list)) else (got,)
    assert len(got) == len(expected)
    bounds = program.bound(inputs) if program.bound else None
    if not isinstance(bounds, tuple):
        bounds = (bounds,) * len(expected)
    for one, other, bound in zip(got, expected, bounds, strict=True):
        other = np.asarray(other)
        if bound is not None:
            assert one.dtype == other.dtype and one.shape == other.shape
            # Complex results are compared by the modulus of the difference, as the bounds
            # are stated (a cast to float64 would drop the imaginary parts).
            wide = np.complex128 if one.dtype.kind == "c" else np.float64
            difference = np.abs(one.astype(wide) - other.astype(wide))
            assert np.all(difference <= bound), (one, other, bound)
        else:
            assert_agrees(one, other)


# A while loop that carries a token from one iteration to the next, as StableHLO writes it
# (jax 0.10 cannot lower a token in a loop carry): the token orders nothing, the loop
# doubles x three times.
def token_loop(tensor: str) -> str:
    """The loop over a carried ``tensor`` (a tensor type, e.g. ``tensor<4x8xf32>``)."""
    return f"""module @jit_token_loop {{
  func.func public @main(%arg0: {tensor}) -> {tensor} {{
    %token = stablehlo.create_token : !stablehlo.token
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %c3 = stablehlo.constant dense<3> : tensor<i32>
    %two = stablehlo.constant dense<2.0> : {tensor}
    %r:3 = stablehlo.while(%i = %c0, %t = %token, %y = %arg0)
        : tensor<i32>, !stablehlo.token, {tensor}
    cond {{
      %lt = stablehlo.compare LT, %i, %c3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    }} do {{
      %next = stablehlo.add %i, %c1 : tensor<i32>
      %t2 = stablehlo.after_all %t, %token : !stablehlo.token
      %y2 = stablehlo.multiply %y, %two : {tensor}
      stablehlo.return %next, %t2, %y2 : tensor<i32>, !stablehlo.token, {tensor}
    }}
    return %r#2 : {tensor}
  }}
}}
"""


TOKEN_LOOP = token_loop("tensor<4x8xf32>")


@pytest.mark.parametrize("path", sorted(PATHS))
def test_while_loop_carrying_a_token_runs(path: str, tmp_path: Path):
    """IREE's pipeline cannot lower create_token and after_all; both paths make the tokens
    of a function booleans first (``rewriter/compile/tokens.py``)."""
    for tool in _native_tools("token_loop", path):
        require_tool(tool)
    x = normal(np.random.default_rng(0), (4, 8), np.float32)
    expected = jax.jit(lambda y: jax.lax.fori_loop(0, 3, lambda i, z: z * 2.0, y))(x)
    assert_agrees(PATHS[path](TOKEN_LOOP, [x], tmp_path), np.asarray(expected))


def assert_agrees(got: np.ndarray, expected: np.ndarray) -> None:
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if expected.dtype in (np.float16, ml_dtypes.bfloat16):
        # one unit in the last place of the type, at the expected value
        spacing = np.spacing(np.abs(expected.astype(np.float32)).astype(expected.dtype))
        difference = np.abs(got.astype(np.float32) - expected.astype(np.float32))
        assert np.all(difference <= spacing.astype(np.float32)), (got, expected)
    elif expected.dtype.kind in "fc":
        np.testing.assert_allclose(got, expected, rtol=RTOL, atol=0)
    else:
        np.testing.assert_array_equal(got, expected)


# Programs where each product has one use: LLVM fuses a product with one use only, as XLA
# does with the expression it emits for each output.
FUSED = {
    "x * y + z": lambda x, y, z: x * y + z,
    "x * y - z": lambda x, y, z: x * y - z,
    "z - x * y": lambda x, y, z: z - x * y,
    "complex a * b": lambda a, b: a * b,
    "real part of a * b": lambda a, b: (a * b).real,
}


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("precision", [32, 64])
@pytest.mark.parametrize("name", sorted(FUSED))
def test_a_product_and_its_sum_round_once_as_under_jax_jit(
    name: str, precision: int, path: str, tmp_path: Path
):
    """XLA's CPU compiler lets LLVM fuse a multiply and the add or subtract of its product
    into one FMA, which rounds once; so do both paths (the compile path marks its float
    ops ``contract``: ``rewriter.compile.toolchain.contractible``): ``x * y + z`` and
    complex products give jax.jit's bits. Before, the compile path rounded twice and the
    real part of a complex product differed in the last bit (jax-finufft's gradients)."""
    for tool in _native_tools(name, path):
        require_tool(tool)
    function = FUSED[name]
    kind = np.float32 if precision == 32 else np.float64
    if name.startswith(("complex", "real")):
        kind = np.complex64 if precision == 32 else np.complex128
    rng = np.random.default_rng(0)
    inputs = [normal(rng, (512,), kind) for _ in range(function.__code__.co_argcount)]
    with jax.enable_x64(precision == 64):
        text = rewriter.export(function, *inputs).text
        expected = np.asarray(jax.jit(function)(*inputs))
    got = PATHS[path](text, inputs, tmp_path)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
