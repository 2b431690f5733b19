"""A nested ``jax.jit`` function named like the FFI target it calls.

The Python function ``rms_norm`` calls the FFI target ``rms_norm``, so the module holds both
``func.func private @rms_norm`` and ``stablehlo.custom_call @rms_norm``: an extern function
for the target cannot simply take the target's name.
"""

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def rms_norm(x, eps=1e-5):
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return jax.ffi.ffi_call("rms_norm", out, vmap_method="broadcast_all")(x, eps=np.float32(eps))


def f(x):
    return rms_norm(x) * 2.0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))  # samples/
    from _export_util import export_and_print

    export_and_print(f, jax.ShapeDtypeStruct((10, 10), jnp.float32), targets=["rms_norm"])
