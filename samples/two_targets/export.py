"""Two different FFI targets, ``scale`` and ``offset``, with ordinary jnp ops between them.

Each target is elementwise and takes one f32 attribute; the input is (2, 3) float32.
"""

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np


def scale(x, factor):
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return jax.ffi.ffi_call("scale", out, vmap_method="broadcast_all")(x, factor=np.float32(factor))


def offset(x, delta):
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return jax.ffi.ffi_call("offset", out, vmap_method="broadcast_all")(x, delta=np.float32(delta))


def f(x):
    y = jnp.tanh(scale(x, 2.0)) + x
    return offset(y, -0.5) * 3.0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))  # samples/
    from _export_util import export_and_print

    export_and_print(f, jax.ShapeDtypeStruct((6,), jnp.float32), targets=["scale", "offset"])
