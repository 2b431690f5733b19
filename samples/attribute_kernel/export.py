"""One FFI call (target ``attr_kernel``) with an attribute of every kind of the contract.

The kernel decodes every attribute into one float64 slot of its result, in attribute
(dictionary) order, which is how both XLA and the rewritten module hand them over:
floats as double, integers as their value, bool as 0/1, the string as two slots (its UTF-8
byte length, then the sum of its bytes read as unsigned), each array as the sum of its
elements; the last slot is ``x[0] + x[1]``. Note the order: ``i64`` sorts before ``i8`` and
``u64`` before ``u8``. The input is float32[2], the result float64[18], so the export runs
with ``jax_enable_x64`` (set in ``__main__`` below, not through the environment).

XLA (jaxlib 0.10.2) rejects f16 and bf16 *scalar* attributes when it runs an FFI call
("Unsupported float attribute bit width"), although jax exports them. ``XLA_ATTRIBUTES`` is
the same set with those two given as their bit patterns (``np.uint16``); the kernel accepts
either form, so JAX can run the call and check it against the rewritten module's entry.
"""

import os
import sys

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np

ATTRIBUTES = {
    "bf16": ml_dtypes.bfloat16(-1.5),
    "boolean": np.bool_(True),
    "f16": np.float16(-2.5e-3),
    "f32": np.float32(1e-5),
    "f64": np.float64(-0.1),
    "farr": np.array([1.5, -2.25, 1e-3], np.float32),
    "i16": np.int16(-30000),
    "i32": np.int32(-2_000_000_000),
    "i64": np.int64(-(2**62) - 7),
    "i8": np.int8(-100),
    "iarr": np.array([-5, 7, 2**40], np.int64),
    "text": "héllo",
    "u16": np.uint16(60000),
    "u32": np.uint32(4_000_000_000),
    "u64": np.uint64(2**63 - 1),  # jax rejects np.uint64 scalars >= 2**63
    "u8": np.uint8(200),
}

# One slot per attribute, two for the string, one for x[0] + x[1].
RESULT_SIZE = len(ATTRIBUTES) + 2

XLA_ATTRIBUTES = {
    **ATTRIBUTES,
    "bf16": ATTRIBUTES["bf16"].view(np.uint16),
    "f16": ATTRIBUTES["f16"].view(np.uint16),
}


def attr_kernel(x, attributes=ATTRIBUTES):
    if x.dtype != jnp.float32 or x.shape != (2,):
        raise ValueError("attr_kernel takes a float32[2]")
    out = jax.ShapeDtypeStruct((RESULT_SIZE,), jnp.float64)
    return jax.ffi.ffi_call("attr_kernel", out)(x, **attributes)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))  # samples/
    from _export_util import export_and_print

    jax.config.update("jax_enable_x64", True)  # for the float64 result
    export_and_print(attr_kernel, jax.ShapeDtypeStruct((2,), jnp.float32), targets=["attr_kernel"])
