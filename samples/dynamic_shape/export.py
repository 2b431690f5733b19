"""An FFI call on a shape-polymorphic input (target ``row_scale``), exported for ``(b, 8)``.

Row ``r`` of the float32 input is multiplied by ``(r + 1) * factor`` (an f32 attribute).
The batch size ``b`` is symbolic (``jax.export.symbolic_shape("b, 8")``), so the module has
``tensor<?x8xf32>`` types and jax's shape-polymorphism machinery around the call.
"""

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np


def row_scale(x, factor=0.5):
    if x.dtype != jnp.float32:
        raise ValueError("Only the float32 dtype is implemented by row_scale")
    call = jax.ffi.ffi_call(
        "row_scale", jax.ShapeDtypeStruct(x.shape, x.dtype), vmap_method="broadcast_all"
    )
    return call(x, factor=np.float32(factor))


def polymorphic_input():
    """The export's argument: float32 of shape (b, 8), b symbolic."""
    return jax.ShapeDtypeStruct(jax.export.symbolic_shape("b, 8"), jnp.float32)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))  # samples/
    from _export_util import export_and_print

    export_and_print(row_scale, polymorphic_input(), targets=["row_scale"])
