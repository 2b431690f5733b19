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

from .mlir_walk import op_result, replace_each

CONSTANT = "stablehlo.constant"
# A splat of complex elements as the op prints it: `dense<(real,imaginary)>`.
_COMPLEX_SPLAT = re.compile(r"dense<\(([^(),]+),([^(),]+)\)>")


def complex_splats(module: Any) -> int:
    """Rewrite every splat constant of complex<f64> of the ``iree.compiler.ir`` ``module``
    as the module's doc says; return how many."""
    return replace_each(module, CONSTANT, _parts_text, _of_parts)


def _parts_text(ir: Any, operation: Any) -> tuple[str, str] | None:
    """The printed real and imaginary parts of a splat constant of complex<f64>, or None."""
    kind = operation.results[0].type
    if not isinstance(kind, ir.RankedTensorType):
        return None
    element = kind.element_type
    if not (
        isinstance(element, ir.ComplexType)
        and isinstance(ir.ComplexType(element).element_type, ir.F64Type)
    ):
        return None
    # the bindings cannot read a dense attribute of complex elements: its text, elided
    found = _COMPLEX_SPLAT.search(operation.get_asm(large_elements_limit=16))
    return None if found is None else (found.group(1).strip(), found.group(2).strip())


def _of_parts(ir: Any, operation: Any, numbers: tuple[str, str]) -> Any:
    kind = operation.results[0].type
    parts = ir.RankedTensorType.get(kind.shape, ir.F64Type.get())
    real, imaginary = (
        op_result(ir, CONSTANT, parts, value=ir.Attribute.parse(f"dense<{number}> : {parts}"))
        for number in numbers
    )
    return op_result(ir, "stablehlo.complex", kind, real, imaginary)
