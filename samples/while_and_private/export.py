"""FFI calls inside a loop body and inside a private function that is called twice.

- ``step`` is called in the body of a ``jax.lax.while_loop``: it lands inside the ``do``
  region of a ``stablehlo.while``.
- ``scale`` is called in ``halve``, a nested ``jax.jit`` function used twice: jax emits it
  once as ``func.func private @halve`` and calls it twice with ``call @halve``.
"""

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np


def step(x):
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return jax.ffi.ffi_call("step", out, vmap_method="broadcast_all")(x, rate=np.float32(0.1))


@jax.jit
def halve(x):
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return jax.ffi.ffi_call("scale", out, vmap_method="broadcast_all")(x, factor=np.float32(0.5))


def f(x):
    def body(carry):
        i, y = carry
        return i + 1, step(y)

    _, y = jax.lax.while_loop(lambda carry: carry[0] < 3, body, (0, x))
    return halve(y) + halve(x)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))  # samples/
    from _export_util import export_and_print

    export_and_print(f, jax.ShapeDtypeStruct((4,), jnp.float32), targets=["step", "scale"])
