"""Generate the benchmark corpus: transformer-style exports with one FFI call per layer.

``python benchmarks/make_corpus.py [OUT_DIR]`` (default ``benchmarks/corpus``, not committed)
writes ``layers_6.mlir``, ``layers_12.mlir``, ``layers_24.mlir``, ``layers_48.mlir``
(about 0.9, 1.8, 3.6 and 7.1 MB; some 50k ops at 48 layers) and ``weights.mlir`` (a model
whose captured weights make it about 25 MB, mostly ``dense<"0x...">`` blobs).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

HEADS = 28
WIDTH = 112
SEQUENCE = 16


def rms_norm(x, eps=1e-5):
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return jax.ffi.ffi_call("rms_norm", out, vmap_method="broadcast_all")(x, eps=np.float32(eps))


def attention(x, wq, wk, wv, wo):
    heads = []
    size = WIDTH // HEADS
    for h in range(HEADS):  # unrolled heads: many small ops, like real exports
        part = slice(h * size, (h + 1) * size)
        q, k, v = x @ wq[:, part], x @ wk[:, part], x @ wv[:, part]
        scores = jax.nn.softmax(q @ k.T / np.sqrt(size), axis=-1)
        heads.append(scores @ v)
    return jnp.concatenate(heads, axis=-1) @ wo


def layer(x, weights):
    wq, wk, wv, wo, w1, w2 = weights
    x = rms_norm(x + attention(x, wq, wk, wv, wo))
    hidden = jax.nn.gelu(x @ w1)
    return x + jnp.tanh(hidden @ w2) * 0.5


def stack(layers: int):
    def model(x, weights):
        for index in range(layers):
            x = layer(x, [w[index % len(w)] for w in weights])
        return x

    return model


def weight_shapes():
    square = jax.ShapeDtypeStruct((2, WIDTH, WIDTH), jnp.float32)
    up = jax.ShapeDtypeStruct((2, WIDTH, 4 * WIDTH), jnp.float32)
    down = jax.ShapeDtypeStruct((2, 4 * WIDTH, WIDTH), jnp.float32)
    return [square, square, square, square, up, down]


def export_text(fun, *args) -> str:
    exported = jax.export.export(
        jax.jit(fun),
        platforms=["cpu"],
        disabled_checks=[jax.export.DisabledSafetyCheck.custom_call("rms_norm")],
    )(*args)
    return exported.mlir_module()


def captured_weights_model():
    """A few layers whose weights are captured constants: ~25 MB of hex blobs."""
    rng = np.random.default_rng(0)
    big = 512
    weights = [rng.standard_normal((big, big), dtype=np.float32) for _ in range(12)]

    def model(x):
        for index, w in enumerate(weights):
            x = jnp.tanh(x @ w)
            if index % 4 == 3:
                x = rms_norm(x)
        return x

    return model, jax.ShapeDtypeStruct((SEQUENCE, big), jnp.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", type=Path, default=Path(__file__).parent / "corpus")
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    x = jax.ShapeDtypeStruct((SEQUENCE, WIDTH), jnp.float32)
    for layers in (6, 12, 24, 48):
        text = export_text(stack(layers), x, weight_shapes())
        (out / f"layers_{layers}.mlir").write_text(text)
        print(f"layers_{layers}.mlir: {len(text) / 1e6:.1f} MB, {text.count(' = ')} ops")
    model, argument = captured_weights_model()
    text = export_text(model, argument)
    (out / "weights.mlir").write_text(text)
    print(f"weights.mlir: {len(text) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
