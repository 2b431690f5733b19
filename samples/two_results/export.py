"""One FFI call with two results (target ``sum_and_max``): row sums and row argmax.

Input (4, 6) float32; results: ``sum(x, axis=-1) * scale`` as float32[4] and
``argmax(x, axis=-1)`` as int32[4]; ``scale`` is an f32 attribute.
"""

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np


def sum_and_max(x, scale=0.5):
    if x.dtype != jnp.float32:
        raise ValueError("Only the float32 dtype is implemented by sum_and_max")
    rows = x.shape[:-1]
    call = jax.ffi.ffi_call(
        "sum_and_max",
        (jax.ShapeDtypeStruct(rows, jnp.float32), jax.ShapeDtypeStruct(rows, jnp.int32)),
        vmap_method="broadcast_all",
    )
    return call(x, scale=np.float32(scale))


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))  # samples/
    from _export_util import export_and_print

    x = jax.ShapeDtypeStruct((4, 6), jnp.float32)
    export_and_print(sum_and_max, x, targets=["sum_and_max"])
