"""Splat constants of complex128 as the complex of two f64 splats.

IREE 3.13 fills a tensor of one complex<f64> value with a 128-bit pattern, which its stream
dialect refuses: a program that returns ``jnp.zeros((3, 3), jnp.complex128)``, or updates
a slice of one (``jnp.zeros(10, jnp.complex128).at[2:8].set(z)``, the triangular factor of
``jax.scipy.linalg.sqrtm``), did not build on IREE ("'stream.async.splat' op operand #0
must be 8-bit ... or 64-bit signless integer, but got 'i128'").

``complex_splats`` writes each ``stablehlo.constant`` of one complex<f64> value (of any
shape) as a ``stablehlo.complex`` of two f64 constants of its parts: the same value, built
by an elementwise op, which IREE fills with 64-bit patterns.
"""

from __future__ import annotations

import re
from typing import Any

from .mlir_walk import op_result, operations_named

CONSTANT = "stablehlo.constant"
# A splat of complex elements as the op prints it: `dense<(real,imaginary)>`.
_COMPLEX_SPLAT = re.compile(r"dense<\(([^(),]+),([^(),]+)\)>")


def complex_splats(module: Any) -> int:
    """Rewrite every splat constant of complex<f64> of the ``iree.compiler.ir`` ``module``
    as the module's doc says; return how many."""
    from iree.compiler import ir

    count = 0
    for operation in operations_named(module, CONSTANT):
        kind = operation.results[0].type
        if not isinstance(kind, ir.RankedTensorType):
            continue
        element = kind.element_type
        if not (
            isinstance(element, ir.ComplexType)
            and isinstance(ir.ComplexType(element).element_type, ir.F64Type)
        ):
            continue
        # the bindings cannot read a dense attribute of complex elements: its text, elided
        found = _COMPLEX_SPLAT.search(operation.get_asm(large_elements_limit=16))
        if found is None:
            continue
        with ir.InsertionPoint(operation), operation.location:
            parts = ir.RankedTensorType.get(kind.shape, ir.F64Type.get())
            real, imaginary = (
                op_result(
                    ir,
                    CONSTANT,
                    parts,
                    value=ir.Attribute.parse(f"dense<{number.strip()}> : {parts}"),
                )
                for number in found.groups()
            )
            value = op_result(ir, "stablehlo.complex", kind, real, imaginary)
        operation.results[0].replace_all_uses_with(value)
        operation.erase()
        count += 1
    return count
