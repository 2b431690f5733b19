"""``jnp.linalg.cholesky`` on CPU: jaxlib's own LAPACK FFI call with column-major layouts.

The (3, 3) float32 input gives ``stablehlo.custom_call @lapack_spotrf_ffi`` with
``operand_layouts = [dense<[0, 1]> ...]``, i.e. not the default row-major ``[1, 0]``, plus an
``output_operand_aliases``, a second, scalar ``info`` result, and the non-FFI attributes
``mhlo.frontend_attributes`` and ``sdy.sharding_rule``. The call sits in ``func.func private
@cholesky``. jax knows the target, so no safety check needs disabling. An example of a call
whose layouts a row-major extern cannot honour.
"""

import os
import sys

import jax
import jax.numpy as jnp

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))  # samples/
    from _export_util import export_and_print

    export_and_print(jnp.linalg.cholesky, jax.ShapeDtypeStruct((3, 3), jnp.float32))
