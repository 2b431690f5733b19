"""FFTs of any length and any number of dimensions on both paths
(rewriter/compile/fft_forms.py): which ``stablehlo.fft`` ops change, and that both paths
give the transform numpy computes in complex128, within the error bound of the FFTs that
compute it, as jax.jit does (IREE alone lowers one dimension of a power-of-two length)."""

from __future__ import annotations

import math
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from iree_fixes import applied, main_on

import rewriter
from rewriter.compile.fft_forms import fft_forms

pytestmark = [pytest.mark.iree, pytest.mark.jax]

RNG = np.random.default_rng(11)


def complex_normal(shape, dtype=np.complex64):
    return (RNG.normal(size=shape) + 1j * RNG.normal(size=shape)).astype(dtype)


def real_normal(shape, dtype=np.float32):
    return RNG.normal(size=shape).astype(dtype)


def irfft_n(n):
    return lambda z: jnp.fft.irfft(z, n=n)


def irfft2_s(s):
    return lambda z: jnp.fft.irfft2(z, s=s)


# name: (jax function, numpy's, input maker, the lengths transformed)
CASES = {
    "rfft_12": (jnp.fft.rfft, np.fft.rfft, lambda c, r: r(12), [12]),
    "rfft_3000_rows": (jnp.fft.rfft, np.fft.rfft, lambda c, r: r((2, 3000)), [3000]),
    "fft_12": (jnp.fft.fft, np.fft.fft, lambda c, r: c(12), [12]),
    "fft_16": (jnp.fft.fft, np.fft.fft, lambda c, r: c((2, 16)), [16]),  # IREE's in f32
    "ifft_7_rows": (jnp.fft.ifft, np.fft.ifft, lambda c, r: c((3, 7)), [7]),
    "irfft_10": (irfft_n(10), lambda z: np.fft.irfft(z, n=10), lambda c, r: c(6), [10]),
    "irfft_9": (irfft_n(9), lambda z: np.fft.irfft(z, n=9), lambda c, r: c(5), [9]),
    "fft2_8x8": (jnp.fft.fft2, np.fft.fft2, lambda c, r: c((8, 8)), [8, 8]),
    "fft2_6x8_batch": (jnp.fft.fft2, np.fft.fft2, lambda c, r: c((2, 6, 8)), [6, 8]),
    "rfft2_6x10": (jnp.fft.rfft2, np.fft.rfft2, lambda c, r: r((6, 10)), [6, 10]),
    "irfft2_6x10": (
        irfft2_s((6, 10)),
        lambda z: np.fft.irfft2(z, s=(6, 10)),
        lambda c, r: c((6, 6)),
        [6, 10],
    ),
    "fftn_3x5x4": (jnp.fft.fftn, np.fft.fftn, lambda c, r: c((3, 5, 4)), [3, 5, 4]),
}
WIDE = ("rfft_3000_rows", "irfft_9", "fft_16", "fft2_6x8_batch")  # also in f64


def made(name: str, wide: bool) -> np.ndarray:
    complex_type, real_type = (np.complex128, np.float64) if wide else (np.complex64, np.float32)
    maker = CASES[name][2]
    return maker(lambda s: complex_normal(s, complex_type), lambda s: real_normal(s, real_type))


def remaining_ffts(text: str) -> list[str]:
    return re.findall(r"stablehlo\.fft [^\n]*length = \[([^\]]*)\]", text)


def test_ffts_iree_cannot_lower_become_ones_it_can():
    for name in CASES:
        if name == "fft_16":
            continue  # IREE's (next test)
        changed, text = applied(fft_forms, CASES[name][0], made(name, False))
        assert changed == 1, name
        for lengths in remaining_ffts(text):  # one dimension, a power of two
            n = int(lengths)
            assert n & (n - 1) == 0, (name, lengths)


def test_a_1d_fft_of_a_power_of_two_stays_but_in_f64():
    """IREE lowers it, but for complex<f64> with f32 twiddles, which its verifier refuses:
    those are radix-2 stages of stablehlo ops, with no complex<f64> constant (IREE crashes
    packing one, and cannot splat its 128 bits)."""
    for function, x in ((jnp.fft.fft, complex_normal(16)), (jnp.fft.rfft, real_normal((3, 32)))):
        changed, text = applied(fft_forms, function, x)
        assert changed == 0 and "rw_fft_" not in text
    with jax.enable_x64(True):
        changed, text = applied(fft_forms, jnp.fft.fft, complex_normal(16, np.complex128))
    assert changed == 1 and not remaining_ffts(text)
    assert not re.search(r"constant dense<[^>]*> : tensor<[0-9x]*complex<f64>>", text)


def unit_roundoff(dtype) -> float:
    return {np.dtype(np.float32): 2.0**-24, np.dtype(np.float64): 2.0**-53}[
        np.dtype(np.finfo(dtype).dtype)
    ]


def relative_bound(lengths: list[int], u: float) -> float:
    """A bound of |computed - exact| / ||exact||_2 for the transform over ``lengths``.

    A radix-2 FFT of length 2^t is within t eta / (1 - t eta) of its result's norm,
    eta = mu + gamma_4 (sqrt(2) + mu) with twiddles within mu = u (Higham, Accuracy and
    Stability of Numerical Algorithms, Theorem 24.2). Bluestein's transform of length n
    (rewriter/compile/fft_forms.py) is three FFTs of length m and three complex products
    (each within sqrt(2) gamma_2): its error is within (3 t_m eta + 3 sqrt(2) gamma_2 +
    gamma_4) ||a|| max|FFT_m(b)|, ||a|| = ||x|| (the chirp has modulus 1), and the exact
    result has norm sqrt(n) ||x||. The transform over several lengths is one 1-D
    transform after another, each scaling norms by the same sqrt(n) as its exact
    counterpart: the relative bounds add (the rounding of an error is of second order)."""
    gamma = lambda k: k * u / (1 - k * u)  # noqa: E731
    eta = u + gamma(4) * (math.sqrt(2) + u)
    total = 0.0
    for n in lengths:
        if n & (n - 1) == 0:
            t = n.bit_length() - 1
            total += t * eta / (1 - t * eta)
            continue
        m = 1 << (2 * n - 2).bit_length()
        t = m.bit_length() - 1
        index = np.arange(n)
        chirp = np.exp(-1j * np.pi * ((index * index) % (2 * n)) / n)
        b = np.zeros(m, np.complex128)
        b[:n], b[m - n + 1 :] = np.conj(chirp), np.conj(chirp[1:])[::-1]
        kernel = np.max(np.abs(np.fft.fft(b)))
        per_norm = 3 * t * eta + 3 * math.sqrt(2) * gamma(2) + gamma(4)
        total += per_norm * kernel / math.sqrt(n)
    return total


def built(name: str, path: str, x: np.ndarray, tmp_path):
    """The program's main on ``path``, exported with x64 on for f64 inputs."""
    with jax.enable_x64(np.finfo(x.dtype).bits == 64):
        text = rewriter.export(CASES[name][0], x).text
        expected = np.asarray(jax.jit(CASES[name][0])(x))
    return main_on(path, text, tmp_path), expected


PARAMETERS = [(name, False) for name in CASES] + [(name, True) for name in WIDE]


@pytest.mark.toolchain
@pytest.mark.slow
@pytest.mark.parametrize("path", ["compile", "iree"])
@pytest.mark.parametrize(("name", "wide"), PARAMETERS)
def test_every_fft_gives_the_transform_as_jax_does(name, wide, path, tmp_path):
    x = made(name, wide)
    main, expected = built(name, path, x, tmp_path)
    got = main(x)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    exact = CASES[name][1](x.astype(np.complex128) if np.iscomplexobj(x) else x.astype(np.float64))
    bound = relative_bound(CASES[name][3], unit_roundoff(got.dtype)) * np.linalg.norm(exact)
    assert np.max(np.abs(expected - exact)) <= bound  # XLA's DUCC, the bound's sanity
    assert np.max(np.abs(got - exact)) <= bound, (name, path)


@pytest.mark.toolchain
@pytest.mark.slow
@pytest.mark.parametrize("path", ["compile", "iree"])
@pytest.mark.parametrize(("length", "wide"), [(12, False), (3000, False), (9, True), (1, False)])
def test_rfft_keeps_the_real_bins_real(length, wide, path, tmp_path):
    """``X_0`` and, for an even length, ``X_(n/2)`` of real samples are real: XLA's
    transform gives an imaginary part of +0.0, so the phase of a negative sum is pi."""
    x = -np.abs(real_normal((3, length), np.float64 if wide else np.float32)) - 0.5  # sums < 0
    with jax.enable_x64(wide):
        text = rewriter.export(jnp.fft.rfft, x).text
        expected = np.asarray(jax.jit(jnp.fft.rfft)(x))
    got = main_on(path, text, tmp_path)(x)
    real_bins = [0, length // 2] if length % 2 == 0 else [0]
    assert np.all(x.sum(axis=1) < 0)
    assert np.array_equal(expected.imag[:, real_bins], np.zeros((3, len(real_bins))))
    assert np.array_equal(got.imag[:, real_bins], expected.imag[:, real_bins])
    assert not np.signbit(got.imag[:, real_bins]).any()
    assert np.allclose(np.angle(expected[:, 0]), np.pi)
    np.testing.assert_array_equal(np.angle(got[:, 0]), np.angle(expected[:, 0]))


@pytest.mark.toolchain
@pytest.mark.slow
@pytest.mark.parametrize("path", ["compile", "iree"])
@pytest.mark.parametrize(("length", "wide"), [(12, False), (9, True)])
def test_rfft_of_a_symbolic_batch_keeps_the_real_bins_real(length, wide, path, tmp_path):
    """The same of the product by the transform's matrix: its columns for those bins have
    imaginary parts of exactly 0, and a product's sum starts from +0.0 (no -0.0 from
    samples all negative)."""
    x = -np.abs(real_normal((3, length), np.float64 if wide else np.float32)) - 0.5
    with jax.enable_x64(wide):
        spec = jax.ShapeDtypeStruct(jax.export.symbolic_shape(f"b, {length}"), x.dtype)
        text = jax.export.export(jax.jit(jnp.fft.rfft))(spec).mlir_module()
        expected = np.asarray(jax.jit(jnp.fft.rfft)(x))
    got = main_on(path, text, tmp_path)(x)
    real_bins = [0, length // 2] if length % 2 == 0 else [0]
    assert not np.signbit(expected.imag[:, real_bins]).any()
    np.testing.assert_array_equal(got.imag[:, real_bins], expected.imag[:, real_bins])
    assert not np.signbit(got.imag[:, real_bins]).any()
    np.testing.assert_array_equal(np.angle(got[:, 0]), np.angle(expected[:, 0]))


# name: (jax function, numpy's, the symbolic shape, input dtype, the batch sizes run)
DYNAMIC = {
    "rfft_batch": (jnp.fft.rfft, np.fft.rfft, "b, 16", np.float32),
    "rfft_batch_12_f64": (jnp.fft.rfft, np.fft.rfft, "b, 12", np.float64),
    "fft_batch_rank3": (jnp.fft.fft, np.fft.fft, "b, 3, 10", np.complex64),
    "ifft_batch_f64": (jnp.fft.ifft, np.fft.ifft, "b, 8", np.complex128),
    "irfft_batch_odd": (irfft_n(15), lambda z: np.fft.irfft(z, n=15), "b, 8", np.complex64),
    "irfft_batch_even": (irfft_n(16), lambda z: np.fft.irfft(z, n=16), "b, 9", np.complex128),
}


@pytest.mark.toolchain
@pytest.mark.slow
@pytest.mark.parametrize("path", ["compile", "iree"])
@pytest.mark.parametrize("name", list(DYNAMIC))
def test_an_fft_of_a_symbolic_batch_gives_the_transform(name, path, tmp_path):
    """Both paths failed to compile it ("failed to legalize operation 'stablehlo.fft'");
    it is a product by the transform's matrix in f64: within one rounding to the element
    type of numpy's complex128 transform (and a few f64 ones), at every batch size."""
    function, exact_of, shape, dtype = DYNAMIC[name]
    wide = np.dtype(dtype).itemsize == 16 or dtype == np.float64
    with jax.enable_x64(wide):
        spec = jax.ShapeDtypeStruct(jax.export.symbolic_shape(shape), dtype)
        text = jax.export.export(jax.jit(function))(spec).mlir_module()
        main = main_on(path, text, tmp_path)
        for batch in (1, 4, 7):
            sizes = [batch, *(int(s) for s in shape.split(",")[1:])]
            x = made_of(sizes, dtype)
            got = main(x)
            expected = np.asarray(jax.jit(function)(x))
            assert got.dtype == expected.dtype and got.shape == expected.shape
            exact = exact_of(x.astype(np.complex128 if np.iscomplexobj(x) else np.float64))
            eps = np.finfo(got.real.dtype).eps
            bound = eps * np.max(np.abs(exact)) + 64 * np.finfo(np.float64).eps * np.abs(x).sum()
            assert np.max(np.abs(got - exact)) <= bound, (name, path, batch)


def made_of(sizes: list[int], dtype) -> np.ndarray:
    if np.issubdtype(dtype, np.complexfloating):
        return complex_normal(tuple(sizes), dtype)
    return real_normal(tuple(sizes), dtype)
