"""A zero-result, side-effecting FFI call (target ``count_calls``) next to ordinary jnp code.

``count_calls`` adds the int32 attribute ``tag`` to a global counter in the kernel library;
it has no results, so ``has_side_effect=True`` keeps it alive. The program returns ``x * 2``
so the module has a result. Input (3,) float32.
"""

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np


def count_and_double(x, tag=3):
    jax.ffi.ffi_call("count_calls", (), has_side_effect=True)(x, tag=np.int32(tag))
    return x * 2


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))  # samples/
    from _export_util import export_and_print

    x = jax.ShapeDtypeStruct((3,), jnp.float32)
    export_and_print(count_and_double, x, targets=["count_calls"])
