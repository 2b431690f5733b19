"""A small MLP classifier with two FFI calls, ``rms_norm`` on the hidden activations.

x (8, 64) -> dense 128 -> gelu -> rms_norm -> dense 64 -> gelu -> rms_norm -> dense 10 ->
softmax. The first layer's weights are arguments of the exported function (``w1``, ``b1``);
the other layers' weights are numpy arrays closed over (seeded), so they appear in the
export as ``stablehlo.constant dense<"0x...">`` blobs. The two ``rms_norm`` calls have
different shapes, (8, 128) and (8, 64): one target with two signatures.
"""

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

BATCH, WIDTHS = 8, (64, 128, 64, 10)


def rms_norm(x, eps=1e-5):
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return jax.ffi.ffi_call("rms_norm", out, vmap_method="broadcast_all")(x, eps=np.float32(eps))


def dense_weights(rng, n_in, n_out):
    w = rng.normal(scale=1.0 / np.sqrt(n_in), size=(n_in, n_out)).astype(np.float32)
    b = rng.normal(scale=0.1, size=(n_out,)).astype(np.float32)
    return w, b


# The captured layers: constants of the export.
W2, B2 = dense_weights(np.random.default_rng(2), WIDTHS[1], WIDTHS[2])
W3, B3 = dense_weights(np.random.default_rng(3), WIDTHS[2], WIDTHS[3])


def mlp(x, w1, b1):
    h = rms_norm(jax.nn.gelu(x @ w1 + b1))
    h = rms_norm(jax.nn.gelu(h @ W2 + B2))
    return jax.nn.softmax(h @ W3 + B3, axis=-1)


def argument_shapes():
    """Shapes of ``mlp``'s arguments: x, w1, b1."""
    return [(BATCH, WIDTHS[0]), (WIDTHS[0], WIDTHS[1]), (WIDTHS[1],)]


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))  # samples/
    from _export_util import export_and_print

    args = [jax.ShapeDtypeStruct(shape, jnp.float32) for shape in argument_shapes()]
    export_and_print(mlp, *args, targets=["rms_norm"])
