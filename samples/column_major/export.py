"""A kernel that works on column-major data: `input_layouts`/`output_layouts` of ffi_call.

jax prints the layouts as minor-to-major lists (`operand_layouts = [dense<[0, 1]> ...]`);
XLA hands the FFI handler column-major buffers. The rewrite transposes around the call
in a private wrapper, so the kernel's `_mlir_ciface_` entry sees the same bytes.
"""

import os
import sys

import jax
import jax.numpy as jnp


def col_major_kernel(x):
    """out[i, j] = x[i, j] * (i + 1) + j, computed by a kernel that indexes column-major."""
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    call = jax.ffi.ffi_call(
        "col_major_kernel", (out,), input_layouts=[(1, 0)], output_layouts=[(1, 0)]
    )
    (result,) = call(x)
    return result


def f(x):
    return col_major_kernel(jnp.tanh(x)) + 1.0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))  # samples/
    from _export_util import export_and_print

    export_and_print(f, jax.ShapeDtypeStruct((3, 5), jnp.float32), targets=["col_major_kernel"])
