"""One FFI call (target ``attr_kinds``) with an attribute of every kind the contract passes.

Every kind of contract rule 3 that jax can produce is here. Two kinds that jax also accepts
are left out because the contract has no C form for them and the rewrite rejects them with
a diagnostic (tested in tests/test_rewrite_errors.py): a tuple (an array attribute such as
``[1, 2.500000e+00, "t"]``) and a ``np.dtype`` (a type attribute such as ``f32``).

jax turns each keyword attribute into an MLIR attribute (``_wrap_kwargs_hashable`` in
``jax/_src/ffi.py``, then ``ir_attribute`` in ``jax/_src/interpreters/mlir.py``); the
dictionary prints sorted by name. What jax 0.10.2 prints, at extreme values where that means
something:

- numpy scalars float16, bfloat16 (``ml_dtypes.bfloat16``), float32, float64, int8/16/32/64,
  uint8/16/32/64, bool: ``-1.500000e+00 : bf16``, ``-128 : i8``, ``255 : ui8``, ``true``;
  inf (and nan) print as hex: ``0x7F800000 : f32``.
- Python bool, int, float: ``false``, ``-7 : i64``, ``2.500000e-01 : f64`` (with or without
  ``jax_enable_x64``, which changes nothing here and is not set).
- str and bytes: a string, non-ASCII and special bytes escaped: ``"h\\C3\\A9llo"``.
- numpy arrays of any dtype (complex too; 0-d and empty as well): ``dense<...> : tensor<...>``.
- a flat dict: a dictionary attribute; a tuple: an array attribute ``[1, 2.500000e+00, "t"]``
  (i64 and f64 elements print without their type); a ``np.dtype``: a type attribute ``f32``.

Rejected by jax (each raises): complex scalars (Python complex, np.complex64/128:
"Unsupported scalar attribute type"); np.uint64 at or above 2**63 (``std::bad_cast``, so the
uint64 maximum appears only in an array); Python int outside int64 (OverflowError); list and
nested dict (not hashable); None (no attribute handler); ``jnp.bfloat16(1.5)``, a jax Array
rather than a numpy scalar (not hashable). Scalars of the other ml_dtypes types (float8_*,
int4, ...) are accepted but become their *type* (``f8E4M3FN``), the value lost, as for
``np.dtype``; they add no new kind and are left out.
"""

import os
import sys

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np

ATTRIBUTES = {
    # numpy scalars
    "f16": np.float16(65504.0),
    "bf16": ml_dtypes.bfloat16(-1.5),
    "f32": np.float32(1e-5),
    "f32_inf": np.float32(np.inf),
    "f64": np.float64(-0.1),
    "i8": np.int8(-128),
    "i16": np.int16(-32768),
    "i32": np.int32(2**31 - 1),
    "i64": np.int64(-(2**63)),
    "u8": np.uint8(255),
    "u16": np.uint16(65535),
    "u32": np.uint32(2**32 - 1),
    "u64": np.uint64(2**63 - 1),
    "np_bool": np.bool_(True),
    # Python scalars
    "py_bool": False,
    "py_int": -7,
    "py_float": 0.25,
    # strings
    "text": "héllo",
    "raw": b'a"\x00\n',
    # numpy arrays
    "arr_i64": np.array([np.iinfo(np.int64).min, -1, np.iinfo(np.int64).max], np.int64),
    "arr_f32": np.array([[1.5, -2.0], [0.0, 3.25]], np.float32),
    "arr_u64": np.array([0, np.iinfo(np.uint64).max], np.uint64),
    "arr_bool": np.array([True, False]),
    "arr_c64": np.array([1 - 2j], np.complex64),
    "arr_0d": np.array(4.0, np.float32),
    "arr_empty": np.zeros((0,), np.int32),
    # structured values
    "dictionary": {"n": np.int32(1), "s": "x"},
}


def f(x):
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return jax.ffi.ffi_call("attr_kinds", out)(x, **ATTRIBUTES)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))  # samples/
    from _export_util import export_and_print

    export_and_print(f, jax.ShapeDtypeStruct((4,), jnp.float32), targets=["attr_kinds"])
