"""The JAX FFI tutorial's ``rms_norm``: one FFI call with a single f32 attribute ``eps``.

Prints the StableHLO module that ``jax.export`` gives for a (10, 10) float32 input.
"""

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np


def rms_norm(x, eps=1e-5):
    # We only support float32 inputs for now
    if x.dtype != jnp.float32:
        raise ValueError("Only the float32 dtype is implemented by rms_norm")

    call = jax.ffi.ffi_call(
        # The target name; it is not registered here, the export only records the call.
        "rms_norm",
        # One output with the shape and dtype of the input.
        jax.ShapeDtypeStruct(x.shape, x.dtype),
        vmap_method="broadcast_all",
    )
    # `eps` is a static attribute: a numpy float32, the C++ handler's `float`.
    return call(x, eps=np.float32(eps))


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))  # samples/
    from _export_util import export_and_print

    export_and_print(rms_norm, jax.ShapeDtypeStruct((10, 10), jnp.float32), targets=["rms_norm"])
