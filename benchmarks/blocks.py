"""The three blocks the speed benchmarks run, built for any shape and float type.

``speed.py`` runs each at one shape, ``shape_sweep.py`` over a grid of shapes, both in
float32 and (``shape_sweep.py``) float64; the programs are these, so that their figures
are of the same code:

- ``block``: ``layers`` layers of layer norm, GELU and two width x width matmuls;
- ``attention``: self-attention with four projections, a softmax and two batched matmuls
  per head;
- ``conv``: three convolutions with ReLU (the last two with stride 2), global average
  pooling and a dense layer of 10.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from benchmarks.report import aligned

DTYPES = {"f32": np.float32, "f64": np.float64}


@dataclass
class Program:
    """One block at one shape: a description of the shape, its function, its inputs."""

    shape: str
    function: Callable[..., object]
    inputs: list[np.ndarray]


def _normal(rng, dtype, *shape, scale: float = 1.0) -> np.ndarray:
    """Normal numbers, 64-byte aligned as ``jax.jit`` reads an argument in place
    (``report.aligned``)."""
    return aligned((rng.standard_normal(shape) * scale).astype(dtype))


def block(dtype: str, batch: int, width: int, layers: int = 4) -> Program:
    """``layers`` layers of layer norm, GELU and two width x width matmuls."""
    kind = DTYPES[dtype]

    def block_of(x, *weights):
        for w1, w2 in zip(weights[::2], weights[1::2], strict=True):
            mean = x.mean(-1, keepdims=True)
            h = (x - mean) / jnp.sqrt(x.var(-1, keepdims=True) + 1e-5)
            x = x + jax.nn.gelu(h @ w1) @ w2
        return x

    rng = np.random.default_rng(0)
    weights = [_normal(rng, kind, width, width, scale=width**-0.5) for _ in range(2 * layers)]
    shape = f"batch {batch}, width {width}"
    return Program(shape, block_of, [_normal(rng, kind, batch, width), *weights])


def attention(dtype: str, batch: int, tokens: int, width: int, heads: int) -> Program:
    """Self-attention: projections, a softmax and two batched matmuls per head."""
    kind = DTYPES[dtype]
    scale = kind(1 / np.sqrt(width // heads))

    def attention_of(x, wq, wk, wv, wo):
        def split(t):
            return t.reshape(batch, tokens, heads, width // heads)

        q, k, v = split(x @ wq), split(x @ wk), split(x @ wv)
        scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) * scale
        mixed = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(scores, axis=-1), v)
        return x + mixed.reshape(batch, tokens, width) @ wo

    rng = np.random.default_rng(1)
    weights = [_normal(rng, kind, width, width, scale=width**-0.5) for _ in range(4)]
    shape = f"batch {batch}, tokens {tokens}, width {width}, heads {heads}"
    inputs = [_normal(rng, kind, batch, tokens, width), *weights]
    return Program(shape, attention_of, inputs)


def conv(
    dtype: str, images: int, size: int, channels: tuple[int, int, int], kernel: int
) -> Program:
    """Images of size x size x 3, three kernel x kernel convolutions (the last two with
    stride 2) with ReLU, global average pooling, a dense layer of 10."""
    kind = DTYPES[dtype]

    def convolve(x, w, stride):
        return jax.lax.conv_general_dilated(
            x, w, (stride, stride), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
        )

    def net(x, w1, w2, w3, dense):
        x = jax.nn.relu(convolve(x, w1, 1))
        x = jax.nn.relu(convolve(x, w2, 2))
        x = jax.nn.relu(convolve(x, w3, 2))
        return x.mean(axis=(1, 2)) @ dense

    rng = np.random.default_rng(2)
    c1, c2, c3 = channels
    inputs = [
        _normal(rng, kind, images, size, size, 3),
        _normal(rng, kind, kernel, kernel, 3, c1, scale=(kernel * kernel * 3) ** -0.5),
        _normal(rng, kind, kernel, kernel, c1, c2, scale=(kernel * kernel * c1) ** -0.5),
        _normal(rng, kind, kernel, kernel, c2, c3, scale=(kernel * kernel * c2) ** -0.5),
        _normal(rng, kind, c3, 10, scale=0.1),
    ]
    shape = f"{images} images {size}x{size}, channels {c1}/{c2}/{c3}, kernel {kernel}"
    return Program(shape, net, inputs)
